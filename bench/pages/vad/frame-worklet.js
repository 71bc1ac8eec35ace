// Bench-only stand-in for the capture worklet (worklets/capture-worklet.ts is
// being written in parallel): runs in a 16 kHz AudioContext, cuts the input
// into 512-sample frames and posts each as a VadFrameMessage (transferred) on
// the port from a {kind:"connect-vad", port} message. No main thread involved.
class BenchVadFramer extends AudioWorkletProcessor {
  constructor() {
    super();
    this.vadPort = null;
    this.frame = new Float32Array(512);
    this.filled = 0;
    this.sampleIndex = 0;
    this.port.onmessage = ({ data }) => {
      if (data?.kind === "connect-vad") this.vadPort = data.port;
    };
  }
  process(inputs) {
    const input = inputs[0]?.[0];
    if (!input || !this.vadPort) return true;
    let offset = 0;
    while (offset < input.length) {
      const n = Math.min(input.length - offset, 512 - this.filled);
      this.frame.set(input.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === 512) {
        const frame = this.frame;
        this.vadPort.postMessage({ kind: "vad-frame", frame, sampleIndex: this.sampleIndex, contextTime: currentTime }, [frame.buffer]);
        this.sampleIndex += 512;
        this.frame = new Float32Array(512);
        this.filled = 0;
      }
    }
    return true;
  }
}
registerProcessor("bench-vad-framer", BenchVadFramer);
