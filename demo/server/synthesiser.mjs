// The phrase synthesiser shared by the TTS emulators: flite speaks one phrase at a
// time (16 kHz), the audio is resampled to the protocol's rate with one resampler per
// stream (so phrase boundaries leave no click), and each word's span is placed on the
// stream's output timeline, the filter's delay included.
import { synthesize, FLITE_SAMPLE_RATE } from "./flite.mjs";
import { RationalResampler, int16ToFloat } from "./resample.mjs";

/** @param {number} a @param {number} b @returns {number} */
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));

/** @typedef {{ text: string, start: number, stop: number }} TimelineWord seconds on the output timeline */

export class PhraseSynthesiser {
  /**
   * @param {string} voice a flite voice ("slt", "rms")
   * @param {number} outputRate Hz; a rational multiple of 16 kHz (8000, 16000, 24000, 44100, 48000…)
   */
  constructor(voice, outputRate) {
    this.voice = voice;
    this.outputRate = outputRate;
    const g = gcd(outputRate, FLITE_SAMPLE_RATE);
    this.resampler = outputRate === FLITE_SAMPLE_RATE ? null : new RationalResampler(outputRate / g, FLITE_SAMPLE_RATE / g);
    /** Output samples synthesised so far (the output timeline). */
    this.timeline = 0;
  }

  /**
   * Synthesises one phrase, appended to the timeline.
   * @param {string} phrase
   * @returns {{ pcm: Float32Array, words: TimelineWord[] }} float samples at `outputRate`
   */
  synthesise(phrase) {
    const result = synthesize(phrase, this.voice);
    const float = int16ToFloat(result.samples);
    const pcm = this.resampler ? this.resampler.process(float) : float;
    const offset = (this.timeline + (this.resampler?.delayOutputSamples ?? 0)) / this.outputRate;
    const words = result.words.map((w) => ({ text: w.text, start: offset + w.start, stop: offset + w.stop }));
    this.timeline += pcm.length;
    return { pcm, words };
  }
}
