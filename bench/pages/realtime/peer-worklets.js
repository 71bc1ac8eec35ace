// The audio parts of a typical browser app on @openai/agents-realtime's
// WebSocket transport, which leaves capture and playback to the app (its docs:
// "handle audio playback yourself"; listen for `audio` and `audio_interrupted`).
// Written for the bench, in the shape the field's examples use (a capture
// worklet that posts blocks, a queue player that `interrupt()` empties):
// - peer-capture: posts each quantum of its mono input to the main thread;
// - peer-player: plays queued PCM in order; "clear" drops the queue at once
//   (the app's answer to `audio_interrupted`).
class PeerCapture extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0][0];
    if (channel) this.port.postMessage(channel.slice());
    return true;
  }
}
registerProcessor("peer-capture", PeerCapture);

class PeerPlayer extends AudioWorkletProcessor {
  constructor() {
    super();
    /** @type {Float32Array[]} */
    this.queue = [];
    this.offset = 0;
    this.port.onmessage = (e) => {
      if (e.data.kind === "clear") {
        this.queue = [];
        this.offset = 0;
      } else this.queue.push(e.data.samples);
    };
  }
  process(_inputs, outputs) {
    const out = outputs[0][0];
    let i = 0;
    while (i < out.length && this.queue.length > 0) {
      const head = this.queue[0];
      const n = Math.min(out.length - i, head.length - this.offset);
      out.set(head.subarray(this.offset, this.offset + n), i);
      i += n;
      this.offset += n;
      if (this.offset === head.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    out.fill(0, i);
    return true;
  }
}
registerProcessor("peer-player", PeerPlayer);
