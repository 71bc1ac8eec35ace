/**
 * Double-talk detection and the barge-in gate, from per-band energies of the
 * echo canceller's error and echo estimate: "is there near-end speech that
 * the echo does not explain?" Pure arithmetic on numbers the guard hands in.
 *
 * Model, per band (8 bands, 125 Hz – 8 kHz): the residual echo in the error
 * is `leak` × the echo estimate's energy, held with the room's decay (the
 * tail beyond the filter keeps ringing after the estimate stops). `leak` is
 * the 90th percentile of error / held estimate over the last 128 blocks
 * learnt from, so it is what the residual usually reaches, not its mean.
 * The gate opens when, in at least two bands from 750 Hz up, the error
 * exceeds that prediction by `marginDb` and the band's noise floor by
 * `noiseMarginDb`, for two blocks running; it holds for `holdBlocks`.
 * Why bands: a talker differs from the bot's residual in where his energy
 * is. Broadband, with the same model, either missed a male talker at the
 * echo's level (under pre-emphasis his low band counts for little) or
 * opened on the low-frequency residual (without it); and a Geigel detector
 * (max |d| vs max |x|) cannot work with an unknown −20 … −3 dB path gain.
 *
 * Echo-path changes (the speaker moved, the volume changed): the error then
 * still correlates with the echo estimate, or the delay probe, which always
 * adapts, out-cancels the main filter in the low band (see update()); or
 * the gate has been open for 1.5 s of bot speech ("doubt"). Any of these
 * sets `residualEchoLike`: the gate is not trusted, and the statistics and
 * the filter learn again. The first 150 ms of each opening are undecided
 * (the probe needs that long to show a change): untrusted too. (A short
 * always-adapting shadow PBFDAF, tried first, could not see a change that
 * moved the delay past its span; envelope correlation called talkers echo.)
 *
 * Outputs: the gate; the filter's step (frozen while a talker is near — the
 * gate open, or within 200 ms of it, or two bands 6 dB over the prediction;
 * halved for one band; else 1); a smoothed ERLE; `converged`;
 * `residualEchoLike`; and `trusted` = converged && !residualEchoLike: only a
 * trusted gate may confirm a barge-in, otherwise the session should only pause.
 *
 * Thread: one owner. Allocation: none after construction.
 */
export const BANDS = 8;
/** Band edges in Hz: the low band starts above DC, the top band ends at Nyquist (16 kHz rate). */
export const BAND_EDGES_HZ = [125, 375, 750, 1250, 2000, 3000, 4500, 6000, 8000];

export interface NearEndDetectorOptions {
  /** Blocks per second. */
  blockRate: number;
  /** How far the error must exceed the predicted residual echo in a band, dB. Default 9 (6 opened on echo in 1 % of blocks). */
  marginDb?: number;
  /** How far above the band's noise floor, dB. Default 10. */
  noiseMarginDb?: number;
  /** Absolute floor for near-end speech, dB re full scale (mean square). Default −70. */
  minLevelDb?: number;
  /**
   * Smoothed ERLE needed to call the filter converged, dB. Default 8: in
   * Chromium's −6 dB, RT60 0.3 s room the 1 s-smoothed ERLE of the first
   * reply was still at 9–10 dB 1.5 s in (its early, uncancelled blocks weigh
   * in), so a bar of 10 left a user who barged in then unconfirmed in 1 run
   * of 3 to 6; at 8 no room here opened the gate trusted on echo alone.
   */
  convergedDb?: number;
  /** Gate hold after the last open block, in blocks. Default: 48 ms. */
  holdBlocks?: number;
}

/** One block's energies, as the guard measures them. Band arrays are BANDS long. */
export interface BlockEnergies {
  /** Band energies of the mic, the error and the echo estimate (any common scale). */
  micBands: Float64Array;
  errorBands: Float64Array;
  estimateBands: Float64Array;
  /** Broadband mean square of the error, for the absolute floor. */
  error: number;
  /** The filter's broadband error and the error × estimate cross term (mean squares, pre-emphasised). */
  filterError: number;
  /** Low-band (< 800 Hz) energies of the delay probe's error and of the guard's output, this block. */
  probeError: number;
  probeResidual: number;
  estimate: number;
  cross: number;
  /** The aligned reference was active within the filter's span. */
  referenceActive: boolean;
  /** Mean squares of the aligned reference and of the mic, this block (pre-emphasised). */
  reference: number;
  mic: number;
}

const LEAK_QUANTILE = 0.9;
/** Blocks the leak's quantile is taken over (0.5 s at 4 ms). A running quantile
 * tracker with fixed steps, tried first, took 3 s to come down 20 dB. */
const LEAK_WINDOW = 128;
const LEAK_MIN_DB = -40;
const LEAK_MAX_DB = 20;
/** Excess over the prediction from which a band counts as an outlier: 6 dB. */
const OUTLIER = 4;
/**
 * The gate and the outliers count bands from 750 Hz up. Below, the filter's
 * residual swings 10–18 dB over its prediction at the bot's onsets (the
 * least-converged part of the response): counting them opened the gate on
 * echo alone in 1–7 % of blocks; a talker still shows in ≥ 2 higher bands.
 */
const FIRST_GATE_BAND = 2;
/**
 * Headphones, or a speaker too far to matter: while the bot plays (its
 * reference over −60 dB), the mic stays 35 dB or more below it. Then there is
 * no echo to cancel, and the filter cannot converge on one; half a second of
 * such blocks counts as convergence, so a talker's gate opening is trusted.
 * (An echo at −20 dB against the output keeps the mic 15–25 dB above this.)
 */
const UNCOUPLED_RATIO = 10 ** (-35 / 10);
const LOUD_REFERENCE = 1e-6;
/**
 * Before the first convergence, a filter that has learnt for 0.3 s of loud
 * reference and still leaves more than the mic (ERLE below −1 dB) is fitting
 * a talker, not an echo: an echo path is linear, and the filter's first 0.3 s
 * on one already cancel a few dB. Seen: a person who spoke 0.5 s into the
 * first reply, with no echo at all, took ERLE to −1.6 … −2.7 dB while every
 * block of his speech was learnt as residual echo and the gate stayed shut
 * on him for the whole utterance (the VAD saw silence). Such a mic is
 * treated as no echo path; the probe still ends that state if an echo
 * appears after all.
 */
const FITTING_A_TALKER_DB = -1;
/**
 * Before the first convergence, a filter whose smoothed ERLE has reached
 * 6 dB over half a second of echo has found the echo path: from then on a
 * talker is kept away from it and from the statistics (as after
 * convergence), and he is no longer taken for the whole mic
 * (FITTING_A_TALKER_DB). Seen in Chromium (−6 dB, RT60 0.3 s): a user who
 * spoke 1.5 s into the first reply, the filter at 9 dB, was learnt as echo;
 * ERLE fell to −1 dB, the guard called the mic echo-free and then trusted
 * the gate on the bot's own echo for four seconds.
 */
const ECHO_FOUND_DB = 6;
/** The probe out-cancels the pass-through by 5 dB in the low band: an echo has appeared. */
const ECHO_APPEARED = 10 ** 0.5;

export class NearEndDetector {
  readonly #margin: number;
  readonly #noiseMargin: number;
  readonly #minLevel: number;
  readonly #convergedDb: number;
  readonly #holdBlocks: number;
  readonly #noiseRise: number;
  readonly #smooth: number;
  readonly #fast: number;
  readonly #stuckBlocks: number;
  readonly #minEchoBlocks: number;
  readonly #fitBlocks: number;
  readonly #undecidedBlocks: number;
  readonly #held = new Float64Array(BANDS);
  readonly #noise = new Float64Array(BANDS);
  readonly #leakDb = new Float64Array(BANDS);
  readonly #err = new Float64Array(BANDS);
  readonly #slow = new Float64Array(BANDS);
  /** Ratios error/held in dB, [band × LEAK_WINDOW + i]. */
  readonly #ratios = new Float64Array(BANDS * LEAK_WINDOW);
  readonly #scratch = new Float64Array(LEAK_WINDOW);
  #ratioAt = 0;
  #ratioCount = 0;
  #decay = 0.95;
  #sd = 0;
  #se = 0;
  #sn = 0;
  #echoBlocks = 0;
  #crossEy = 0;
  #crossEe = 0;
  #crossYy = 0;
  #mainLow = 0;
  #probeLow = 0;
  #run = 0;
  #hold = 0;
  #stuck = 0;
  #openBlocks = 0;
  #everConverged = false;
  /** The filter has found the echo path (ECHO_FOUND_DB), or converged. */
  #echoFound = false;
  /** Fast averages of the reference and mic energies, and the blocks that showed no echo path. */
  #refFast = 0;
  #micFast = 0;
  #uncoupledBlocks = 0;
  #quiet = 0;
  readonly #quietBlocks: number;

  /** Gate: near-end speech beyond the echo estimate. */
  nearEnd = false;
  converged = false;
  residualEchoLike = false;
  /** Smoothed ERLE over echo-only blocks, dB. */
  erleDb = 0;
  /** Predicted residual echo, error beyond it and the noise, and the noise floor: sums over the bands. */
  residualEcho = 0;
  nearEndEnergy = 0;
  noiseFloor = 0;
  /** Step scale for the adaptive filter, 0 … 1. */
  step = 1;
  /**
   * No echo path (headphones): the bot played for half a second with the mic
   * 35 dB or more below it, and no echo was heard since. The guard passes the
   * mic through and leaves the filter alone.
   */
  noEchoPath = false;

  constructor(options: NearEndDetectorOptions) {
    const rate = options.blockRate;
    this.#margin = 10 ** ((options.marginDb ?? 9) / 10);
    this.#noiseMargin = 10 ** ((options.noiseMarginDb ?? 10) / 10);
    this.#minLevel = 10 ** ((options.minLevelDb ?? -70) / 10);
    this.#convergedDb = options.convergedDb ?? 8;
    this.#holdBlocks = options.holdBlocks ?? Math.round(0.048 * rate);
    this.#noiseRise = 10 ** (3 / 10 / rate); // a floor may rise 3 dB/s
    this.#smooth = Math.exp(-1 / rate); // 1 s
    this.#fast = Math.exp(-1 / (0.15 * rate)); // 150 ms
    this.#stuckBlocks = Math.round(1.5 * rate);
    this.#minEchoBlocks = Math.round(0.5 * rate);
    this.#fitBlocks = Math.round(0.3 * rate);
    this.#undecidedBlocks = Math.round(0.15 * rate);
    this.#quietBlocks = Math.round(0.2 * rate);
  }

  /** An echo appeared after all (the headset came off): learn it from the start, untrusted until converged. */
  #leaveNoEchoPath(): void {
    this.noEchoPath = false;
    this.converged = false;
    this.#everConverged = false;
    this.#echoFound = false;
    this.#echoBlocks = 0;
    this.#uncoupledBlocks = 0;
    this.echoAppeared = true;
  }

  /** Set when a no-echo-path state ended; the guard clears it after resetting its filter. */
  echoAppeared = false;
  /** Set when the filter was found fitting a talker (FITTING_A_TALKER_DB); the guard clears it after resetting its filter. */
  talkerFitted = false;

  /** The gate may confirm a barge-in. */
  get trusted(): boolean {
    return this.converged && !this.residualEchoLike;
  }

  /** Per-block decay of the residual-echo hold, from the room's measured decay. */
  setTailDecay(perBlock: number): void {
    // Held at half the room's rate (in dB): after the bot stops, what remains
    // is the low-frequency, least-converged part of the response, which
    // outlasts the estimate (seen: 12–18 dB over a full-rate hold at 125–375 Hz).
    this.#decay = Math.min(0.995, Math.max(0.7, Math.sqrt(perBlock)));
  }

  /** Takes one block's energies; updates every output field. No allocation. */
  update(b: BlockEnergies): void {
    let over = 0; // bands where the error exceeds prediction + margin and noise + margin
    let outliers = 0; // bands 6 dB over the prediction
    let audibleBands = 0;
    let residual = 0;
    let excess = 0;
    let noiseSum = 0;
    for (let k = 0; k < BANDS; k++) {
      // Compare smoothed band energies (two blocks): a low band holds two or
      // three bins, whose energy from block to block swings by 10 dB.
      const error = (this.#err[k] = 0.5 * this.#err[k] + 0.5 * b.errorBands[k]);
      // The floor follows a slower average down at once and up by 3 dB/s: the
      // minimum of the raw band energy would sit 10 dB under the noise's mean.
      const slow = (this.#slow[k] = this.#slow[k] === 0 ? error : 0.8 * this.#slow[k] + 0.2 * error);
      const noise = this.#noise[k] === 0 || slow < this.#noise[k] ? Math.max(slow, 1e-14) : this.#noise[k] * this.#noiseRise;
      this.#noise[k] = noise;
      const held = (this.#held[k] = Math.max(b.estimateBands[k], this.#held[k] * this.#decay));
      const echo = 10 ** (this.#leakDb[k] / 10) * held;
      const pred = echo + noise;
      if (held > 4 * noise) audibleBands++;
      if (k >= FIRST_GATE_BAND) {
        if (error > this.#margin * echo + this.#noiseMargin * noise) over++;
        if (error > OUTLIER * pred) outliers++;
      }
      residual += echo;
      excess += Math.max(0, error - pred);
      noiseSum += noise;
    }
    this.residualEcho = residual;
    this.nearEndEnergy = excess;
    this.noiseFloor = noiseSum;
    const audible = b.referenceActive && audibleBands > 0;

    // The gate, debounced: two blocks to open, a hold to close.
    const raw = over >= 2 && b.error > this.#minLevel;
    this.#run = raw ? this.#run + 1 : 0;
    const wasOpen = this.nearEnd;
    if (this.#run >= 2) this.#hold = this.#holdBlocks;
    else if (this.#hold > 0) this.#hold--;
    this.nearEnd = this.#run >= 2 || this.#hold > 0;
    if (this.nearEnd && !wasOpen) this.#openBlocks = 0;
    if (this.nearEnd) this.#openBlocks++;
    // A talker's syllable gaps and trailing low-frequency energy outlast the
    // gate's hold: keep the filter and the statistics away from them longer.
    if (this.nearEnd) this.#quiet = this.#quietBlocks;
    else if (this.#quiet > 0) this.#quiet--;
    const talkerNear = this.nearEnd || this.#quiet > 0;

    // Evidence that the error is echo the main filter misses: its waveform
    // still correlates with the echo estimate (|ρ| > 0.3), or the delay probe,
    // which always adapts, out-cancels the main filter in the low band by
    // 5 dB, or by 2.5 dB with |ρ| > 0.15. Measured: after a moved speaker
    // (new room, 40 → 90 ms, +5 dB) ρ −0.2 … −0.43 and the probe +3 … +3.5 dB;
    // in double talk |ρ| ≤ 0.26 and the probe ≤ +1.8 dB (its 900 taps overfit
    // the talker a little over 150 ms).
    const f = this.#fast;
    this.#mainLow = f * this.#mainLow + b.probeResidual;
    this.#probeLow = f * this.#probeLow + b.probeError;
    let pathChanged = false;
    if (audible) {
      this.#crossEy = f * this.#crossEy + b.cross;
      this.#crossEe = f * this.#crossEe + b.filterError;
      this.#crossYy = f * this.#crossYy + b.estimate;
      const rho = Math.abs(this.#crossEy) / Math.sqrt(this.#crossEe * this.#crossYy + 1e-30);
      const probeGain = this.#mainLow / (this.#probeLow + 1e-30);
      pathChanged = rho > 0.3 || probeGain > 10 ** 0.5 || (probeGain > 10 ** 0.25 && rho > 0.15);
    }
    this.#stuck = audible && this.nearEnd ? this.#stuck + 1 : 0;
    const doubt = this.#stuck > this.#stuckBlocks;
    const undecided = this.nearEnd && audible && this.#openBlocks < this.#undecidedBlocks;
    const echoEvidence = pathChanged || doubt || !this.#echoFound;

    // What the statistics learn from: blocks with the gate shut and no band
    // 6 dB over the prediction, an opening shown to be echo, and everything
    // until the first convergence. A talker too weak to open the gate must
    // not be learnt as residual: a few such blocks raise `leak`, which shuts
    // the gate on him, whose blocks then raise it further (seen: ERLE from
    // 20 dB to 3 dB in 0.3 s of double talk).
    const learn = audible && (echoEvidence || (!talkerNear && outliers < 2));
    if (learn) {
      this.#learn(b);
      const s = this.#smooth;
      let mic = 0;
      let err = 0;
      for (let k = 0; k < BANDS; k++) {
        mic += b.micBands[k];
        err += b.errorBands[k];
      }
      this.#sd = s * this.#sd + mic;
      this.#se = s * this.#se + err;
      this.#sn = s * this.#sn + noiseSum;
      this.#echoBlocks++;
      this.erleDb = 10 * Math.log10((this.#sd + 1e-30) / (this.#se + 1e-30));
    }
    if (this.#echoBlocks >= this.#minEchoBlocks) {
      // Converged when the residual is well below the mic, or already down at
      // the noise floor (a quiet speaker has nothing to cancel).
      const atFloor = this.#se < 2 * this.#sn;
      const limit = this.converged ? this.#convergedDb - 4 : this.#convergedDb;
      this.converged = (this.erleDb >= limit || atFloor) && !doubt;
      if (this.converged) this.#everConverged = true;
      if (this.converged || this.erleDb >= ECHO_FOUND_DB) this.#echoFound = true;
    }
    // No echo path (headphones): before any echo was heard, a loud bot and a
    // mic far below it. The guard then passes the mic through, and the gate
    // alone judges it; the delay probe stays on as the witness that an echo
    // has appeared (it out-cancels the pass-through), which ends the state.
    this.#refFast = f * this.#refFast + (1 - f) * b.reference;
    this.#micFast = f * this.#micFast + (1 - f) * b.mic;
    const loud = b.referenceActive && this.#refFast > LOUD_REFERENCE;
    if (this.noEchoPath) {
      if (loud && this.#mainLow > ECHO_APPEARED * this.#probeLow) this.#leaveNoEchoPath();
    } else if (!this.#echoFound && loud && this.#echoBlocks >= this.#fitBlocks && this.erleDb < FITTING_A_TALKER_DB) {
      // What was learnt is the talker: forget it, so the gate judges him on the noise floor alone.
      this.noEchoPath = true;
      this.talkerFitted = true;
      this.#held.fill(0);
    } else if (!this.#everConverged && loud && !talkerNear) {
      this.#uncoupledBlocks = this.#micFast < UNCOUPLED_RATIO * this.#refFast ? this.#uncoupledBlocks + 1 : 0;
      if (this.#uncoupledBlocks >= this.#minEchoBlocks) this.noEchoPath = true;
    }
    if (this.noEchoPath) {
      // The first 150 ms of an opening stay untrusted: long enough for the probe to show an echo that just appeared.
      this.converged = true;
      this.residualEchoLike = this.nearEnd && this.#openBlocks < this.#undecidedBlocks;
      this.step = 0;
      return;
    }
    this.residualEchoLike = pathChanged || doubt || undecided;

    // Step: full until the first convergence (the prediction means nothing
    // yet) and whenever the error is shown to be echo; otherwise frozen while
    // two bands are over the prediction (a talker, gate open or about to be),
    // halved for one.
    if (!b.referenceActive) this.step = 0;
    else if (echoEvidence) this.step = 1;
    else this.step = talkerNear || outliers >= 2 ? 0 : outliers === 1 ? 0.5 : 1;
  }

  /** Adds this block's ratios to each band's window and re-takes the quantiles. O(BANDS × window). */
  #learn(b: BlockEnergies): void {
    const at = this.#ratioAt;
    for (let k = 0; k < BANDS; k++) this.#ratios[k * LEAK_WINDOW + at] = 10 * Math.log10((b.errorBands[k] + 1e-30) / (this.#held[k] + 1e-30));
    this.#ratioAt = (at + 1) % LEAK_WINDOW;
    if (this.#ratioCount < LEAK_WINDOW) this.#ratioCount++;
    for (let k = 0; k < BANDS; k++) this.#leakDb[k] = Math.min(LEAK_MAX_DB, Math.max(LEAK_MIN_DB, this.#quantile(k)));
  }

  /** The LEAK_QUANTILE of band k's window, by quickselect on a scratch copy. No allocation. */
  #quantile(band: number): number {
    const n = this.#ratioCount;
    const a = this.#scratch;
    for (let i = 0; i < n; i++) a[i] = this.#ratios[band * LEAK_WINDOW + i];
    const k = Math.min(n - 1, Math.floor(LEAK_QUANTILE * n));
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const pivot = a[(lo + hi) >> 1];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i <= j) {
          const t = a[i];
          a[i++] = a[j];
          a[j--] = t;
        }
      }
      if (k <= j) hi = j;
      else if (k >= i) lo = i;
      else break;
    }
    return a[k];
  }
}
