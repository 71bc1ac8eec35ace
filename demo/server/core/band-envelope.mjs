// The loudness envelope the known-speech matcher (../known-speech.mjs) compares, a pure core: the
// RMS of 10 ms frames (one pocketsphinx frame) in two bands, below and above about 1 kHz, and where
// a stretch of it lines up best in a clip's by normalised correlation, so that gain, resampling and
// a phase shift do not matter.

/**
 * Both bands' frames.
 * @typedef {{ low: Float32Array, high: Float32Array }} Envelope
 */

/** Samples of one envelope frame at 16 kHz: 10 ms, a pocketsphinx frame. */
export const HOP = 160;

/** The one-pole low-pass that splits the bands: about 1 kHz at 16 kHz. */
const SPLIT = 1 - Math.exp((-2 * Math.PI * 1000) / 16000);

/**
 * Splits 16-bit samples into the two bands' 10 ms RMS frames, carrying the filter's state, so a
 * stream can be split in pieces. Whole HOPs only: the caller keeps the rest for the next call.
 */
export class BandEnvelope {
  constructor() {
    this.lowPassed = 0;
    /** @type {number[]} */
    this.low = [];
    /** @type {number[]} */
    this.high = [];
    this.sumLow = 0;
    this.sumHigh = 0;
    this.count = 0;
  }

  /** @param {ArrayLike<number>} samples */
  push(samples) {
    for (let i = 0; i < samples.length; i++) {
      this.lowPassed += SPLIT * (samples[i] - this.lowPassed);
      const high = samples[i] - this.lowPassed;
      this.sumLow += this.lowPassed * this.lowPassed;
      this.sumHigh += high * high;
      if (++this.count === HOP) {
        this.low.push(Math.sqrt(this.sumLow / HOP));
        this.high.push(Math.sqrt(this.sumHigh / HOP));
        this.sumLow = this.sumHigh = this.count = 0;
      }
    }
  }

  get length() {
    return this.low.length;
  }

  /** The first `frames` frames (all by default) as an Envelope. @param {number} [frames] @returns {Envelope} */
  take(frames = this.low.length) {
    return { low: Float32Array.from(this.low.slice(0, frames)), high: Float32Array.from(this.high.slice(0, frames)) };
  }

  /** Loudness of frame `i` (both bands). @param {number} i */
  level(i) {
    return Math.hypot(this.low[i], this.high[i]);
  }
}

/** Both bands' envelope of whole 16-bit samples. @param {Int16Array} samples @returns {Envelope} */
export function envelopeOf(samples) {
  const bands = new BandEnvelope();
  bands.push(samples);
  return bands.take();
}

/**
 * The normalised correlation of the last `count` frames of `heard` with `clip` at `lag`, or
 * undefined where the clip's part is flat. Frames outside the clip count as silence.
 * @param {Float32Array} heard @param {number} count @param {Float32Array} clip @param {number} lag
 */
function correlationAt(heard, count, clip, lag) {
  const n = heard.length;
  let sumH = 0;
  let sumHH = 0;
  let sumC = 0;
  let sumCC = 0;
  let sumHC = 0;
  for (let i = n - count; i < n; i++) {
    const j = i + lag;
    const c = j >= 0 && j < clip.length ? clip[j] : 0;
    const h = heard[i];
    sumH += h;
    sumHH += h * h;
    sumC += c;
    sumCC += c * c;
    sumHC += h * c;
  }
  const varH = sumHH - (sumH * sumH) / count;
  const varC = sumCC - (sumC * sumC) / count;
  if (varH <= 0 || varC <= 0) return undefined;
  return (sumHC - (sumH * sumC) / count) / Math.sqrt(varH * varC);
}

/**
 * Where the last `count` frames of `heard` best line up in `clip`: the lag (clip frame = heard
 * frame + lag) and the normalised correlation there, the lower of the two bands'. At least three
 * quarters of the window must lie inside the clip: a burst and silence alone line up with the end
 * of any clip.
 * @param {Envelope} heard @param {number} count @param {Envelope} clip
 * @param {number} [minLag] @param {number} [maxLag]
 */
export function bestLag(heard, count, clip, minLag = -count, maxLag = clip.low.length) {
  const n = heard.low.length;
  const from = n - count;
  const outside = Math.floor(count / 4);
  let best = { lag: 0, correlation: -1 };
  for (let lag = Math.max(minLag, -from - outside); lag <= Math.min(maxLag, clip.low.length - n + outside); lag++) {
    const low = correlationAt(heard.low, count, clip.low, lag);
    if (low === undefined || low <= best.correlation) continue;
    const high = correlationAt(heard.high, count, clip.high, lag);
    if (high === undefined) continue;
    const correlation = Math.min(low, high);
    if (correlation > best.correlation) best = { lag, correlation };
  }
  return best;
}
