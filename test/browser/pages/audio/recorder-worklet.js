// Test-only recorder: keeps every sample of its (mono) input from the moment
// it first runs, placed by context frame (sample i is frame startFrame + i),
// and publishes the frame it is rendering in a shared clock (when given one)
// so a page can tell which render quantum a main-thread request landed in.
// Chromium may skip calling a node for a few quanta while a context starts;
// placing by currentFrame keeps the indices true, and `gaps` counts skips.
class Recorder extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { capacity, clock } = options.processorOptions;
    this.samples = new Float32Array(capacity);
    this.length = 0;
    this.startFrame = -1;
    this.gaps = 0;
    this.clock = clock ? new Int32Array(clock) : undefined;
    this.port.onmessage = (e) => {
      if (e.data.kind === "snapshot") {
        this.port.postMessage({
          kind: "snapshot",
          startFrame: this.startFrame,
          gaps: this.gaps,
          samples: this.samples.slice(0, this.length),
        });
      }
    };
  }
  process(inputs) {
    if (this.clock) Atomics.store(this.clock, 0, currentFrame);
    if (this.startFrame < 0) this.startFrame = currentFrame;
    const at = currentFrame - this.startFrame;
    if (at !== this.length) this.gaps++;
    const channel = inputs[0][0];
    const n = Math.max(0, Math.min(128, this.samples.length - at));
    if (channel && n > 0) this.samples.set(channel.subarray(0, n), at);
    this.length = Math.max(this.length, at + n);
    return true;
  }
}
registerProcessor("test-recorder", Recorder);
