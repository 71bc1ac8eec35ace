// Soak-only recorder: keeps the last `capacity` frames of its mono input in a
// ring indexed by context frame, and answers "how many samples above the
// threshold between frames A and B" so a long soak can check every fence
// without shipping minutes of audio to the main thread. process() does not
// allocate; queries run on the port, between quanta.
class StaleRecorder extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.capacity = options.processorOptions.capacity;
    this.ring = new Float32Array(this.capacity);
    /** Context frame one past the newest recorded sample; frames before `end - capacity` are gone. */
    this.end = -1;
    this.first = -1;
    this.missed = 0;
    this.port.onmessage = (e) => this.port.postMessage(this.query(e.data));
  }
  query({ id, from, to, threshold }) {
    const oldest = Math.max(this.first, this.end - this.capacity);
    if (from < oldest || to > this.end) return { id, covered: false, oldest, end: this.end };
    let loud = 0;
    let maxAbs = 0;
    for (let f = from; f < to; f++) {
      const v = Math.abs(this.ring[f % this.capacity]);
      if (v >= threshold) loud++;
      if (v > maxAbs) maxAbs = v;
    }
    return { id, covered: true, loud, maxAbs, missed: this.missed };
  }
  process(inputs) {
    const channel = inputs[0][0];
    if (this.first < 0) this.first = this.end = currentFrame;
    // Quanta the render thread skipped stay as whatever was there: zero them.
    for (let f = this.end; f < currentFrame; f++) this.ring[f % this.capacity] = 0;
    if (currentFrame > this.end) this.missed += (currentFrame - this.end) / 128;
    for (let i = 0; i < 128; i++) this.ring[(currentFrame + i) % this.capacity] = channel ? channel[i] : 0;
    this.end = currentFrame + 128;
    return true;
  }
}
registerProcessor("stale-recorder", StaleRecorder);
