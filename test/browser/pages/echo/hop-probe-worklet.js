// Debug (the echo tests): a seeded noise or speech source that publishes what
// it renders by context frame, and a probe that records its input next to it,
// to measure the MediaStream hop and to run the EchoGuard offline on the
// exact browser signals. Driven by hop-probe.js (window.runProbe).
const Q = 128;
const taps = (globalThis.__hopProbe ??= { ref: new Float32Array(48000 * 20), written: 0, order: [] });

class HopSource extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.wait = !!options.processorOptions?.speech;
    this.a = 12345;
    this.start = -1;
    this.speech = null;
    this.pos = 0;
    this.port.onmessage = (e) => { this.speech = e.data; };
  }
  process(_in, outputs) {
    const out = outputs[0][0];
    if (this.wait && !this.speech) return true;
    if (this.start < 0) { this.start = currentFrame; taps.start = currentFrame; }
    for (let i = 0; i < Q; i++) {
      this.a = (this.a + 0x6d2b79f5) >>> 0;
      let t = this.a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      out[i] = this.speech ? this.speech[this.pos++ % this.speech.length] : (u - 0.5) * 0.5;
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    const at = currentFrame - taps.start;
    if (at + Q <= taps.ref.length) taps.ref.set(out, at);
    taps.written = at + Q;
    if (taps.order.length < 50) taps.order.push("s" + currentFrame);
    return true;
  }
}

class HopProbe extends AudioWorkletProcessor {
  constructor() {
    super();
    this.mic = new Float32Array(48000 * 20);
    this.first = -1;
    this.frames = [];
    this.port.onmessage = () => {
      this.port.postMessage({ mic: this.mic, ref: taps.ref, micStart: this.first, refStart: taps.start, order: taps.order, frames: this.frames.slice(0, 20), n: this.n });
    };
    this.n = 0;
  }
  process(inputs) {
    const ch = inputs[0][0];
    if (this.first < 0) this.first = currentFrame;
    if (taps.order.length < 50) taps.order.push("p" + currentFrame);
    const at = currentFrame - this.first;
    if (ch && at + Q <= this.mic.length) this.mic.set(ch, at);
    this.n++;
    return true;
  }
}
registerProcessor("hop-source", HopSource);
registerProcessor("hop-probe", HopProbe);
