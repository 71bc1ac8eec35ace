/**
 * The microphone audio of the last few seconds, kept instead of sent: a
 * service whose turns the client opens (Gemini Live's activityStart) drops
 * audio outside a turn, and a turn is known to have begun only after its
 * onset (the VAD starts a little late; a barge-in is confirmed later still).
 * `take(seconds)` hands back the newest `seconds` of it, in order, and
 * empties it.
 *
 * Pure; no clock. Allocation: none per push (frames are kept by reference;
 * the caller must not reuse them); `take` may slice one frame.
 */
type Pcm = Float32Array | Int16Array;

export class PreRoll {
  readonly #rate: number;
  readonly #maxSamples: number;
  #frames: Pcm[] = [];
  #samples = 0;

  constructor(sampleRate: number, maxSeconds: number) {
    this.#rate = sampleRate;
    this.#maxSamples = Math.ceil(maxSeconds * sampleRate);
  }

  /** Samples kept now. */
  get samples(): number {
    return this.#samples;
  }

  push(pcm: Pcm): void {
    this.#frames.push(pcm);
    this.#samples += pcm.length;
    // Drop whole frames from the front while the rest still covers the limit.
    while (this.#frames.length > 1 && this.#samples - this.#frames[0]!.length >= this.#maxSamples) this.#samples -= this.#frames.shift()!.length;
  }

  /** The newest `seconds` of audio (all of it when less is kept), oldest first; the rest is dropped. */
  take(seconds: number): Pcm[] {
    let skip = Math.max(0, this.#samples - Math.ceil(Math.max(0, seconds) * this.#rate));
    const out: Pcm[] = [];
    for (const f of this.#frames) {
      if (skip >= f.length) {
        skip -= f.length;
        continue;
      }
      out.push(skip > 0 ? f.subarray(skip) : f);
      skip = 0;
    }
    this.#frames = [];
    this.#samples = 0;
    return out;
  }
}
