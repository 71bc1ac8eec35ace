// Test-only recorder: writes each quantum of its mono input at the index of
// its context frame (currentFrame - first frame), so sample i of the recording
// is always context time (firstFrame + i) / sampleRate, even when the render
// thread skips quanta on a loaded machine (those stay zero and are counted).
class TimelineRecorder extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.samples = new Float32Array(options.processorOptions.capacity);
    this.firstFrame = -1;
    this.end = 0;
    this.missedQuanta = 0;
    /** Sample index of each quantum the render thread skipped (its samples stay 0). */
    this.missed = [];
    this.port.onmessage = (e) => {
      if (e.data.kind === "snapshot") {
        this.port.postMessage({ kind: "snapshot", startFrame: this.firstFrame, gaps: this.missedQuanta, missed: this.missed, samples: this.samples.slice(0, this.end) });
      }
      // The last `samples` only, and the context frame they end at: a poll that must be fresh (whenBotLoud)
      // does not copy the whole recording each time.
      if (e.data.kind === "tail") {
        this.port.postMessage({ kind: "tail", endFrame: this.firstFrame + this.end, samples: this.samples.slice(Math.max(0, this.end - e.data.samples), this.end) });
      }
    };
  }
  process(inputs) {
    if (this.firstFrame < 0) this.firstFrame = currentFrame;
    const at = currentFrame - this.firstFrame;
    for (let q = this.end; q < at; q += 128) {
      this.missedQuanta++;
      if (this.missed.length < 10000) this.missed.push(q);
    }
    const channel = inputs[0][0];
    if (channel && at + 128 <= this.samples.length) this.samples.set(channel, at);
    this.end = Math.min(this.samples.length, at + 128);
    return true;
  }
}
registerProcessor("timeline-recorder", TimelineRecorder);
