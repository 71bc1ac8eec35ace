// What the hosted-TTS emulators (elevenlabs.mjs, cartesia.mjs) share: text that
// streams in is cut into phrases and spoken by flite (16 kHz), resampled to the
// rate the client asked for, with each word's span in the context's audio
// timeline; and a paced sender, so audio arrives at a multiple of real time as
// from a real service (knobs `pace`, `burst_s`, as for the Kyutai TTS).
import { synthesize, FLITE_SAMPLE_RATE, FLITE_VOICES } from "../flite.mjs";
import { RationalResampler, int16ToFloat, floatToInt16 } from "../resample.mjs";
import { sleep } from "../knobs.mjs";

/** @param {number} a @param {number} b @returns {number} */
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));

/** The flite voice for a service's voice id: one containing "rms" is rms, any other slt. */
export function fliteVoice(/** @type {string | null | undefined} */ id) {
  const name = (id ?? "").toLowerCase();
  return FLITE_VOICES.find((v) => name.includes(v)) ?? "slt";
}

/**
 * One context's speech: text in (verbatim pieces), phrases out as PCM at
 * `rate` with word times. Phrases end at sentence or clause punctuation once
 * the next word has begun, every `chunkWords` words, or at `flush`.
 */
export class SpokenContext {
  /** @param {{ voice: string, rate: number, chunkWords?: number }} options */
  constructor({ voice, rate, chunkWords = 6 }) {
    this.voice = voice;
    this.rate = rate;
    this.chunkWords = chunkWords;
    this.text = "";
    const g = gcd(rate, FLITE_SAMPLE_RATE);
    /** @type {RationalResampler | null} */
    this.resampler = rate === FLITE_SAMPLE_RATE ? null : new RationalResampler(rate / g, FLITE_SAMPLE_RATE / g);
    /** Output samples produced so far: where the next phrase starts. */
    this.samples = 0;
  }

  /** @param {string} piece */
  push(piece) {
    this.text += piece;
  }

  /**
   * Takes the phrases complete so far (all the text when `force`), spoken.
   * flite runs synchronously, about 50 ms a phrase.
   * @param {boolean} force
   * @returns {{ pcm: Float32Array, words: { text: string, start: number, stop: number }[], startSample: number }[]}
   */
  takePhrases(force) {
    const out = [];
    for (;;) {
      const phrase = this.#nextPhrase(force);
      if (phrase === null) return out;
      out.push(this.#speak(phrase));
    }
  }

  /** The resampler's tail, so the last phrase's end is heard. @returns {Float32Array} */
  finish() {
    if (!this.resampler) return new Float32Array(0);
    const tailIn = Math.ceil((this.resampler.delayOutputSamples * this.resampler.down) / this.resampler.up) + 1;
    const tail = this.resampler.process(new Float32Array(tailIn));
    this.samples += tail.length;
    return tail;
  }

  /** @param {boolean} force @returns {string | null} */
  #nextPhrase(force) {
    const words = this.text.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return null;
    // The last word may still be growing ("Mr" → "Mr."), unless a space followed it.
    const settled = force || /\s$/.test(this.text) ? words.length : words.length - 1;
    let end = 0;
    for (let i = 0; i < settled && end === 0; i++) {
      if (/[.!?;:,]["')\]]*$/.test(words[i]) || i + 1 >= this.chunkWords) end = i + 1;
    }
    if (end === 0 && force) end = words.length;
    if (end === 0) return null;
    const trailing = /\s$/.test(this.text) || end < words.length ? " " : "";
    this.text = end < words.length ? words.slice(end).join(" ") + trailing : "";
    return words.slice(0, end).join(" ");
  }

  /** @param {string} phrase */
  #speak(phrase) {
    const spoken = synthesize(phrase, this.voice);
    const input = int16ToFloat(spoken.samples);
    const pcm = this.resampler ? this.resampler.process(input) : input;
    const delay = this.resampler ? this.resampler.delayOutputSamples : 0;
    const startSample = this.samples;
    // Word times: flite's, moved to where the phrase starts in the output and by the filter's delay.
    const offset = (startSample + delay) / this.rate;
    const words = spoken.words.map((w) => ({ text: w.text, start: offset + w.start, stop: offset + w.stop }));
    this.samples += pcm.length;
    return { pcm, words, startSample };
  }
}

/** Float samples in -1..1 as base64 PCM of the given encoding. @param {Float32Array} pcm @param {"pcm_s16le" | "pcm_f32le"} encoding */
export function base64Pcm(pcm, encoding) {
  if (encoding === "pcm_f32le") return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString("base64");
  const s16 = floatToInt16(pcm);
  return Buffer.from(s16.buffer, s16.byteOffset, s16.byteLength).toString("base64");
}

/**
 * Sends messages in order, each carrying `seconds` of audio: the first
 * `burstS` seconds at once, then `pace` × real time (0: as fast as made).
 * Waits out the stall window between messages.
 */
export class PacedSender {
  /**
   * @param {import("../socket-faults.mjs").SocketFaults} faults
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {AbortSignal} signal
   */
  constructor(faults, knobs, signal) {
    this.faults = faults;
    this.pace = knobs.pace ?? 1.5;
    this.burstS = knobs.burstS ?? 0.5;
    this.signal = signal;
    /** @type {number | null} */
    this.firstAt = null;
    this.audioS = 0;
    this.chain = Promise.resolve();
  }

  /**
   * Queues one message (sent after every message queued before it).
   * `wanted` is asked just before sending: false drops it (its context was cancelled meanwhile).
   * `onSent` runs right after the message went out (not when it was dropped), in the same tick.
   * @param {string} data @param {number} [seconds] @param {() => boolean} [wanted] @param {() => void} [onSent]
   * @returns {Promise<void>} resolves once sent (or dropped)
   */
  send(data, seconds = 0, wanted = () => true, onSent = () => {}) {
    this.chain = this.chain.then(async () => {
      if (this.signal.aborted || !wanted()) return;
      const now = Date.now();
      if (this.firstAt === null) this.firstAt = now;
      if (this.pace > 0 && seconds > 0) {
        const due = this.firstAt + (Math.max(0, this.audioS - this.burstS) / this.pace) * 1000;
        await sleep(due - now, this.signal);
      }
      // After the pacing wait: a message that falls due inside the stall window waits it out.
      await this.faults.stall.waitIfStalled(this.signal);
      if (this.signal.aborted || !wanted()) return;
      if (this.faults.send(data)) onSent();
      this.audioS += seconds;
    });
    return this.chain;
  }
}
