/**
 * Coarse bulk-delay estimator: a matched filter on decimated signals, as
 * WebRTC's AEC3 does. Both streams are low-passed (4th-order Butterworth at
 * 800 Hz, DC blocked) and decimated by 8 to 2 kHz, and a normalised-LMS
 * "probe" spanning 0 … maxDelay learns the echo path there. Its impulse
 * response is the room's, so its onset (findOnset) is the bulk delay,
 * whatever the RT60: an envelope correlation, tried first, was dragged
 * 6–20 ms late by reverberation and locked on syllable rhythm (wrong by
 * 20–80 ms at RT60 0.8 s).
 *
 * It only has to land the main filter within its pre-delay margin; the main
 * filter's own impulse response then gives the delay to the sample
 * (echo-guard.ts). Resolution 0.5 ms.
 *
 * Measured on the echo paths of test/unit/echo-guard.test.ts: within ±1 ms
 * after 0.5 s of speech in most cases, within −12 … +7 ms after that, with
 * rare outliers (the guard asks two estimates in a row to agree). A probe
 * spanning only 0 … maxDelay parked taps at its far end (standing in for the
 * room tail it cannot reach) and drifted there after 2 s at RT60 ≥ 0.5 s;
 * hence the extra 200 ms of span that is never searched, and the leakage.
 *
 * The probe never freezes, so it is also the guard's witness of an
 * echo-path change: pushed the main canceller's output too, it reports both
 * low-band errors, and a probe that out-cancels the converged main filter
 * means the path has moved.
 *
 * Cost: 2 × taps multiply-adds per decimated sample, about 3.6 M per second:
 * ~22 µs per 4 ms block in Node (best of 5), skipped while the reference is
 * silent. Thread: one owner. Allocation: constructor only; `push`,
 * `estimate` and `reset` allocate nothing.
 */
export interface DelayEstimatorOptions {
  sampleRate: number;
  maxDelayMs: number;
  /** NLMS step of the probe (default 0.3). */
  mu?: number;
}

const DECIMATION = 8;
const CUTOFF_HZ = 800;
const WHITEN = 0.9;
/** The probe spans this much beyond maxDelay, where it parks the taps that stand in for the unmodelled room tail. */
const EXTRA_S = 0.2;
/** Per-sample leakage: forgets junk taps with a ~1 s memory. */
const LEAK = 1 - 1 / 2000;
/** Window of the onset detector (findOnset) on the probe: 8 ms. */
const ONSET_WINDOW_S = 0.008;

/** One biquad section, direct form I. */
class Biquad {
  #x1 = 0;
  #x2 = 0;
  #y1 = 0;
  #y2 = 0;
  constructor(
    readonly b0: number,
    readonly b1: number,
    readonly b2: number,
    readonly a1: number,
    readonly a2: number,
  ) {}

  static lowPass(sampleRate: number, hz: number, q: number): Biquad {
    const w = (2 * Math.PI * hz) / sampleRate;
    const alpha = Math.sin(w) / (2 * q);
    const c = Math.cos(w);
    const a0 = 1 + alpha;
    return new Biquad((1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, (-2 * c) / a0, (1 - alpha) / a0);
  }

  step(x: number): number {
    const y = this.b0 * x + this.b1 * this.#x1 + this.b2 * this.#x2 - this.a1 * this.#y1 - this.a2 * this.#y2;
    this.#x2 = this.#x1;
    this.#x1 = x;
    this.#y2 = this.#y1;
    this.#y1 = y;
    return y;
  }

  reset(): void {
    this.#x1 = this.#x2 = this.#y1 = this.#y2 = 0;
  }
}

/** DC blocker, two low-pass sections (Butterworth Q values) and a decimator. */
class Decimator {
  readonly #s1: Biquad;
  readonly #s2: Biquad;
  #dcX = 0;
  #dcY = 0;
  #phase = 0;
  #last = 0;
  constructor(sampleRate: number) {
    this.#s1 = Biquad.lowPass(sampleRate, CUTOFF_HZ, 0.5412);
    this.#s2 = Biquad.lowPass(sampleRate, CUTOFF_HZ, 1.3066);
  }

  /** Returns the decimated sample when one is due, else NaN. */
  step(x: number): number {
    const dc = x - this.#dcX + 0.995 * this.#dcY;
    this.#dcX = x;
    this.#dcY = dc;
    const y = this.#s2.step(this.#s1.step(dc));
    if (++this.#phase < DECIMATION) return Number.NaN;
    this.#phase = 0;
    // Whiten a little (first difference at 2 kHz): speech's low band is so
    // coloured that the probe would otherwise park compensating taps anywhere.
    const white = y - WHITEN * this.#last;
    this.#last = y;
    return white;
  }

  reset(): void {
    this.#s1.reset();
    this.#s2.reset();
    this.#dcX = this.#dcY = 0;
    this.#phase = 0;
    this.#last = 0;
  }
}

/**
 * Where the energy of `h[0 … count)` starts, for a room response that need
 * not peak at its first arrival (in a diffuse one the first 40 ms are within
 * a few dB) and may carry junk taps: the first `window`-long stretch holding
 * half the energy of the strongest one, then, around it, the j that
 * maximises the energy in [j, j + window) minus that in [j − window, j).
 * "First tap near the peak" landed up to 30 ms late; the step detector alone,
 * over a whole unconverged response, locked onto noise. O(count), no allocation.
 */
export function findOnset(h: Float64Array, count: number, window: number): number {
  let sum = 0;
  let peak = 0;
  for (let j = 0; j < count; j++) {
    sum += h[j] * h[j];
    if (j >= window) sum -= h[j - window] * h[j - window];
    if (sum > peak) peak = sum;
  }
  // The first window (ending at j) with half the peak energy.
  let first = 0;
  sum = 0;
  for (let j = 0; j < count; j++) {
    sum += h[j] * h[j];
    if (j >= window) sum -= h[j - window] * h[j - window];
    if (sum >= peak / 2) {
      first = j;
      break;
    }
  }
  // The arrival is inside that window: refine with the step detector.
  let best = Math.max(0, first - window + 1);
  let bestScore = -Infinity;
  for (let j = best; j <= first; j++) {
    let after = 0;
    let before = 0;
    for (let i = j; i < Math.min(count, j + window); i++) after += h[i] * h[i];
    for (let i = Math.max(0, j - window); i < j; i++) before += h[i] * h[i];
    if (after - before > bestScore) {
      bestScore = after - before;
      best = j;
    }
  }
  return best;
}

export class DelayEstimator {
  /** Probe taps (at sampleRate / 8). */
  readonly taps: number;
  readonly #mu: number;
  readonly #onsetWindow: number;
  readonly #searchTaps: number;
  readonly #ref: Decimator;
  readonly #mic: Decimator;
  readonly #residual: Decimator;
  readonly #w: Float64Array;
  /** Decimated reference, doubled ring so the regressor is one contiguous run. */
  readonly #x: Float64Array;
  #head = 0;
  #energy = 0;
  /** Decimated samples adapted on since the last reset. */
  #adapted = 0;
  /** Latest estimate: delay in input samples (NaN if none yet). */
  delaySamples = Number.NaN;
  /** Peak tap energy over the mean tap energy, in dB: ≳ 10 dB for a clear direct path. */
  confidenceDb = 0;
  /**
   * Low-band energies accumulated by `push` while the reference is present:
   * the probe's own error, and that of the `residual` stream (the main
   * canceller's output) through the same decimator. The caller zeroes them.
   */
  errorEnergy = 0;
  residualEnergy = 0;

  constructor(options: DelayEstimatorOptions) {
    const rate = options.sampleRate / DECIMATION;
    this.#searchTaps = Math.ceil((options.maxDelayMs / 1000) * rate) + 1;
    this.taps = this.#searchTaps + Math.round(EXTRA_S * rate);
    this.#mu = options.mu ?? 0.3;
    this.#onsetWindow = Math.round(ONSET_WINDOW_S * (options.sampleRate / DECIMATION));
    this.#ref = new Decimator(options.sampleRate);
    this.#mic = new Decimator(options.sampleRate);
    this.#residual = new Decimator(options.sampleRate);
    this.#w = new Float64Array(this.taps);
    this.#x = new Float64Array(2 * this.taps);
  }

  /** Input samples the probe has adapted on since the last reset. */
  get adaptedSamples(): number {
    return this.#adapted * DECIMATION;
  }

  /**
   * Feeds `length` samples of the reference and the mic from `offset`;
   * `adapt` false (double talk) still tracks the reference but learns
   * nothing. No allocation.
   */
  push(ref: Float64Array, mic: Float64Array, offset: number, length: number, adapt = true, residual?: Float64Array): void {
    const taps = this.taps;
    const x = this.#x;
    const w = this.#w;
    for (let i = offset; i < offset + length; i++) {
      const r = this.#ref.step(ref[i]);
      const d = this.#mic.step(mic[i]);
      const c = residual ? this.#residual.step(residual[i]) : 0;
      if (Number.isNaN(r)) continue;
      // Newest sample at #head and #head + taps; the regressor is x[head … head + taps).
      const leaving = x[this.#head + taps - 1];
      this.#head = this.#head === 0 ? taps - 1 : this.#head - 1;
      x[this.#head] = r;
      x[this.#head + taps] = r;
      this.#energy += r * r - leaving * leaving;
      if (this.#energy < 0) this.#energy = 0;
      if (this.#energy < taps * 1e-9) continue;
      const h = this.#head;
      let y = 0;
      for (let j = 0; j < taps; j++) y += w[j] * x[h + j];
      this.errorEnergy += (d - y) * (d - y);
      this.residualEnergy += c * c;
      if (!adapt) continue;
      const g = (this.#mu * (d - y)) / (this.#energy + taps * 1e-7);
      for (let j = 0; j < taps; j++) w[j] = LEAK * w[j] + g * x[h + j];
      this.#adapted++;
    }
  }

  /** Updates `delaySamples` and `confidenceDb` from the probe. O(taps). No allocation. */
  estimate(): void {
    const w = this.#w;
    let peak = 0;
    let sum = 0;
    for (let j = 0; j < this.#searchTaps; j++) {
      const e = w[j] * w[j];
      sum += e;
      if (e > peak) peak = e;
    }
    if (!(peak > 0)) return;
    this.delaySamples = findOnset(w, this.#searchTaps, this.#onsetWindow) * DECIMATION;
    this.confidenceDb = 10 * Math.log10((peak * this.#searchTaps) / sum);
  }

  reset(): void {
    this.#ref.reset();
    this.#mic.reset();
    this.#residual.reset();
    this.#w.fill(0);
    this.#x.fill(0);
    this.#energy = 0;
    this.#adapted = 0;
    this.delaySamples = Number.NaN;
    this.confidenceDb = 0;
  }
}
