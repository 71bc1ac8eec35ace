// Bench-only recorder for long runs: keeps the last `capacity` samples of its
// mono input in a ring indexed by context frame (sample of frame f sits at
// f % capacity), plus one "known" flag per quantum, so a skipped quantum (a
// loaded render thread) reads as unknown rather than as silence. A snapshot
// returns only the frames asked for, so a 5-minute run never copies more than
// one trial's window. Allocates only when answering a snapshot (off the
// render path: message handlers run between quanta).
class WindowRecorder extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const quanta = Math.ceil(options.processorOptions.capacity / 128);
    this.capacity = quanta * 128;
    this.samples = new Float32Array(this.capacity);
    /** Context frame of the quantum held in each slot (-1: none yet). */
    this.slotFrame = new Float64Array(quanta).fill(-1);
    this.lastFrame = -1;
    this.port.onmessage = (e) => {
      if (e.data.kind === "window") this.port.postMessage(this.window(e.data.fromFrame, e.data.toFrame));
    };
  }
  /** Samples of frames [fromFrame, toFrame); known[q] = 0 for quanta not rendered (or overwritten). */
  window(fromFrame, toFrame) {
    const from = Math.max(0, Math.floor(fromFrame / 128) * 128);
    const to = Math.min(Math.ceil(toFrame / 128) * 128, this.lastFrame + 128);
    const n = Math.max(0, to - from);
    const samples = new Float32Array(n);
    const known = new Uint8Array(n / 128);
    for (let q = 0; q < n / 128; q++) {
      const frame = from + q * 128;
      const slot = (frame % this.capacity) / 128;
      if (this.slotFrame[slot] !== frame) continue;
      known[q] = 1;
      samples.set(this.samples.subarray(slot * 128, slot * 128 + 128), q * 128);
    }
    return { kind: "window", startFrame: from, samples, known };
  }
  process(inputs) {
    // currentFrame is a multiple of 128 in Chromium; the slot math relies on it.
    const slot = (currentFrame % this.capacity) / 128;
    const channel = inputs[0][0];
    if (channel) this.samples.set(channel, slot * 128);
    else this.samples.fill(0, slot * 128, slot * 128 + 128);
    this.slotFrame[slot] = currentFrame;
    this.lastFrame = currentFrame;
    return true;
  }
}
registerProcessor("window-recorder", WindowRecorder);
