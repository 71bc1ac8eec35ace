/**
 * EchoGuard: removes the bot's own voice from the mic before the VAD, and
 * says whether what is left is a person talking over it. It sits between the
 * capture worklet's 16 kHz resampler and the VAD; the reference is what the
 * playback worklet rendered, resampled to 16 kHz the same way and aligned to
 * the mic in context frames (same render thread, same scope).
 *
 *   mic ─┬────────────────────────────(−)──► out (to the VAD)
 *        │                             ▲ echo estimate
 *   ref ─┴► ring ─ delay D ─► PBFDAF ──┘
 *        └► DelayEstimator (probe: coarse D; echo-path-change witness)
 *   band energies of error / estimate ─► NearEndDetector ─► gate, step, trust
 *
 * Per 64-sample block (4 ms) both streams are pre-emphasised (x − 0.9·x₋₁,
 * as Speex does: it narrows speech's spectral range, which the frequency-
 * domain filter needs; ERLE was 2–4 dB lower without). The estimate is
 * de-emphasised and subtracted from the raw mic, so a silent reference
 * passes the mic through bit-exactly; once the filter's whole span is
 * silent the filter is skipped (~3–6 µs per block). The taps start
 * `marginMs` before the bulk delay, so a late coarse estimate still keeps
 * the direct path.
 *
 * Filter choice (test/unit/echo-guard.test.ts prints both on the same
 * aligned echo): a time-domain NLMS cancels a little more echo, mostly at low
 * frequencies, but costs over ten times as much on the render thread; the
 * PBFDAF is kept for its cost, and because the gate needs the residual below
 * a talker, not silence. A long room decay (RT60 0.8 s) converges late: the
 * default 256 ms tail holds only the start of that decay. The test's figures
 * are its output, not kept here.
 *
 * Delay: the probe places the filter (two agreeing estimates, hysteresis);
 * once converged, the first arrival in the filter's own response gives the
 * delay to the sample (`state.delayMs`), and the filter is shifted, weights
 * kept, when that arrival drifts more than 6 ms from its margin.
 *
 * Contract. Thread: one owner, the audio render thread (or a test).
 * `process(mic, ref, out, length)` takes any length; `out` (may be `mic`)
 * gets the echo-cancelled mic `latencySamples` (one block) late. `state`
 * describes the latest completed block and is updated in place. Allocation:
 * the constructor allocates everything; `process` allocates nothing (to
 * start over, construct a new guard off the hot path). Cost: ~90 µs per
 * block (PBFDAF 53, probe 22, bands and detector the rest; Node 20, a shared
 * 2-core box), i.e. ~60 µs per 128-frame quantum at 48 kHz on average; a
 * delay check every 125 ms adds ~90 µs, a re-alignment (start-up, path
 * change) ~270 µs, both in one block.
 */
import { DelayEstimator, findOnset } from "./delay-estimator.js";
import { BandEnergies } from "./band-energies.js";
import { type BlockEnergies, NearEndDetector } from "./near-end-detector.js";
import { PbfdafFilter } from "./pbfdaf-filter.js";

export interface EchoGuardOptions {
  /** Only 16000 is supported: the VAD's rate. */
  sampleRate?: number;
  /** Samples per block, power of two. Default 64 (4 ms). */
  blockSize?: number;
  /** Echo tail the filter covers after the bulk delay. Default 256 ms. */
  tailMs?: number;
  /** Filter taps before the bulk delay. Default 16 ms. */
  marginMs?: number;
  /** Longest bulk delay searched for. Default 250 ms. */
  maxDelayMs?: number;
  /** A known bulk delay (e.g. from the last session) to start from. Default: none (filter starts at 0). */
  initialDelayMs?: number;
  /** Filter step size. Default 1. */
  mu?: number;
  /** NearEndDetector settings, see there. */
  gateMarginDb?: number;
  noiseMarginDb?: number;
  minLevelDb?: number;
  convergedDb?: number;
}

export interface EchoGuardState {
  /** Blocks completed since construction. */
  blockCount: number;
  /** Bot audio within the filter's span: echo may be present. */
  referenceActive: boolean;
  /** The barge-in gate: near-end speech that the echo does not explain. */
  nearEnd: boolean;
  /** referenceActive && nearEnd. */
  doubleTalk: boolean;
  /** referenceActive && !nearEnd. */
  echoOnly: boolean;
  converged: boolean;
  /**
   * The residual looks like echo the filter misses (an echo-path change), or
   * the gate opened less than 150 ms ago and that is not yet ruled out.
   */
  residualEchoLike: boolean;
  /** converged && !residualEchoLike: the gate may confirm; otherwise only pause. */
  trusted: boolean;
  /** No echo path was found (headphones): the mic passes through, so nothing the gate opens on is residual echo. */
  noEchoPath: boolean;
  /** Smoothed ERLE over echo-only blocks (of the pre-emphasised signals, 125 Hz – 8 kHz), dB. */
  erleDb: number;
  /** Mean square of the block's output. */
  residualEnergy: number;
  /** Pre-emphasised mean squares, summed over the detector's bands: predicted residual echo, the error beyond it and the noise, the noise floor. */
  residualEchoEnergy: number;
  nearEndEnergy: number;
  noiseFloor: number;
  /** Detected bulk delay, ms (NaN until found); `delayFromFilter` says if it is the fine one. */
  delayMs: number;
  delayFromFilter: boolean;
}

const PRE = 0.9;
/** Alignment checks, in seconds. */
const CHECK_S = 0.125;

export class EchoGuard {
  readonly sampleRate: number;
  readonly blockSize: number;
  readonly latencySamples: number;
  readonly state: Readonly<EchoGuardState>;
  readonly #s: EchoGuardState;
  readonly #filter: PbfdafFilter;
  readonly #probe: DelayEstimator;
  readonly #detector: NearEndDetector;
  readonly #margin: number;
  readonly #maxDelay: number;
  readonly #ring: Float64Array;
  readonly #mask: number;
  readonly #mic: Float64Array;
  readonly #ref: Float64Array;
  readonly #prev: Float64Array;
  readonly #x: Float64Array;
  readonly #d: Float64Array;
  readonly #y: Float64Array;
  readonly #e: Float64Array;
  readonly #history: Float64Array;
  readonly #taps: Float64Array;
  readonly #bands: BandEnergies;
  readonly #energies: BlockEnergies;
  readonly #checkBlocks: number;
  readonly #settleBlocks: number;
  #fill = 0;
  /** Filter start, in samples behind the mic. */
  #delay = 0;
  #micLast = 0;
  #yLast = 0;
  #quietBlocks = Infinity;
  #lastCoarse = Number.NaN;
  #sinceAlign = 0;

  constructor(options: EchoGuardOptions = {}) {
    const rate = options.sampleRate ?? 16000;
    if (rate !== 16000) throw new RangeError(`EchoGuard: sampleRate must be 16000 (the VAD's rate), got ${rate}`);
    const n = options.blockSize ?? 64;
    this.sampleRate = rate;
    this.blockSize = n;
    this.latencySamples = n;
    const ms = rate / 1000;
    this.#margin = Math.round((options.marginMs ?? 16) * ms);
    this.#maxDelay = Math.round((options.maxDelayMs ?? 250) * ms);
    const partitions = Math.ceil((this.#margin + (options.tailMs ?? 256) * ms) / n);
    this.#filter = new PbfdafFilter({ blockSize: n, partitions, mu: options.mu ?? 1 });
    this.#probe = new DelayEstimator({ sampleRate: rate, maxDelayMs: options.maxDelayMs ?? 250 });
    const blockRate = rate / n;
    this.#detector = new NearEndDetector({
      blockRate,
      marginDb: options.gateMarginDb,
      noiseMarginDb: options.noiseMarginDb,
      minLevelDb: options.minLevelDb,
      convergedDb: options.convergedDb,
    });
    let size = 1;
    while (size < this.#maxDelay + (partitions + 2) * n + 2) size <<= 1;
    this.#ring = new Float64Array(size);
    this.#mask = size - 1;
    this.#mic = new Float64Array(n);
    this.#ref = new Float64Array(n);
    this.#prev = new Float64Array(n);
    this.#x = new Float64Array(n);
    this.#d = new Float64Array(n);
    this.#y = new Float64Array(n);
    this.#e = new Float64Array(n);
    this.#history = new Float64Array((partitions + 1) * n);
    this.#taps = new Float64Array(partitions * n);
    this.#bands = new BandEnergies(n, rate);
    this.#energies = {
      micBands: this.#bands.mic,
      errorBands: this.#bands.error,
      estimateBands: this.#bands.estimate,
      error: 0,
      filterError: 0,
      probeError: 0,
      probeResidual: 0,
      estimate: 0,
      cross: 0,
      referenceActive: false,
      reference: 0,
      mic: 0,
    };
    this.#checkBlocks = Math.round(CHECK_S * blockRate);
    this.#settleBlocks = Math.round(1 * blockRate);
    if (options.initialDelayMs !== undefined) this.#delay = this.#clampDelay(Math.round(options.initialDelayMs * ms) - this.#margin);
    this.#s = {
      blockCount: 0,
      referenceActive: false,
      nearEnd: false,
      doubleTalk: false,
      echoOnly: false,
      converged: false,
      residualEchoLike: false,
      trusted: false,
      noEchoPath: false,
      erleDb: 0,
      residualEnergy: 0,
      residualEchoEnergy: 0,
      nearEndEnergy: 0,
      noiseFloor: 0,
      delayMs: options.initialDelayMs ?? Number.NaN,
      delayFromFilter: false,
    };
    this.state = this.#s;
  }

  /** Taps of the adaptive filter (margin + tail, whole blocks). */
  get taps(): number {
    return this.#filter.taps;
  }

  /**
   * Cancels the echo of `ref` in `mic`: takes `length` samples of each
   * (default mic.length; a length, not subarray views, because views
   * allocate) and writes as many to `out`, `latencySamples` late. `out` may
   * be `mic`. No allocation.
   */
  process(mic: Float32Array, ref: Float32Array, out: Float32Array, length = mic.length): void {
    if (!(length <= mic.length && length <= ref.length && length <= out.length)) {
      throw new RangeError(`EchoGuard.process: length ${length} exceeds mic (${mic.length}), ref (${ref.length}) or out (${out.length})`);
    }
    const n = this.blockSize;
    for (let i = 0; i < length; i++) {
      const m = mic[i]; // read before writing: out may alias mic
      out[i] = this.#prev[this.#fill];
      this.#mic[this.#fill] = m;
      this.#ref[this.#fill] = ref[i];
      if (++this.#fill === n) {
        this.#fill = 0;
        this.#block();
      }
    }
  }

  #block(): void {
    const n = this.blockSize;
    const s = this.#s;
    const ring = this.#ring;
    const mask = this.#mask;
    const start = s.blockCount * n; // absolute index of this block's first sample
    for (let i = 0; i < n; i++) ring[(start + i) & mask] = this.#ref[i];

    const x = this.#x;
    const d = this.#d;
    let quiet = true;
    let px = 0;
    let pd = 0;
    for (let i = 0; i < n; i++) {
      const t = start + i - this.#delay;
      x[i] = t >= 1 ? ring[t & mask] - PRE * ring[(t - 1) & mask] : t === 0 ? ring[0] : 0;
      if (Math.abs(x[i]) > 1e-6) quiet = false;
      d[i] = this.#mic[i] - PRE * this.#micLast;
      this.#micLast = this.#mic[i];
      px += x[i] * x[i];
      pd += d[i] * d[i];
    }
    this.#quietBlocks = quiet ? this.#quietBlocks + 1 : 0;
    const partitions = this.#filter.partitions;
    const referenceActive = this.#quietBlocks <= partitions;
    // Once the filter's whole span is silent its estimate is exactly zero: skip it.
    const silentSpan = this.#quietBlocks > partitions + 1;
    // With no echo path (headphones) the mic passes through as well.
    const bypass = silentSpan || this.#detector.noEchoPath;

    const y = this.#y;
    const e = this.#e;
    const out = this.#prev;
    let pe = 0; // the output's mean square, for the gate's absolute floor
    if (bypass) {
      y.fill(0);
      for (let i = 0; i < n; i++) {
        e[i] = d[i];
        out[i] = this.#mic[i];
        pe += out[i] * out[i];
      }
      this.#yLast = 0;
    } else {
      this.#filter.filter(x, d, y, e);
      for (let i = 0; i < n; i++) {
        this.#yLast = y[i] + PRE * this.#yLast; // de-emphasis
        out[i] = this.#mic[i] - this.#yLast;
        pe += out[i] * out[i];
      }
    }
    // Broadband figures in the filters' (pre-emphasised) domain.
    let filterError = 0;
    let estimate = 0;
    let cross = 0;
    for (let i = 0; i < n; i++) {
      filterError += e[i] * e[i];
      estimate += y[i] * y[i];
      cross += e[i] * y[i];
    }
    if (bypass) this.#bands.measureAlone(d);
    else this.#bands.measure(this.#filter.errorRe, this.#filter.errorIm, y);
    // The probe always adapts (never frozen): it is both the coarse delay and
    // the witness of an echo-path change, when it out-cancels the main filter.
    const probe = this.#probe;
    if (!silentSpan) probe.push(this.#ref, this.#mic, 0, n, referenceActive, out);
    const energy = this.#energies;
    energy.error = pe / n;
    energy.filterError = filterError / n;
    energy.probeError = probe.errorEnergy;
    energy.probeResidual = probe.residualEnergy;
    probe.errorEnergy = probe.residualEnergy = 0;
    energy.estimate = estimate / n;
    energy.cross = cross / n;
    energy.referenceActive = referenceActive;
    energy.reference = px / n;
    energy.mic = pd / n;
    const det = this.#detector;
    det.update(energy);
    if (!bypass) this.#filter.adapt(det.step);
    if (det.echoAppeared || det.talkerFitted) {
      det.echoAppeared = det.talkerFitted = false;
      this.#filter.reset();
    }

    s.blockCount++;
    this.#sinceAlign++;
    if (referenceActive && s.blockCount % this.#checkBlocks === 0) this.#align();

    s.referenceActive = referenceActive;
    s.nearEnd = det.nearEnd;
    s.doubleTalk = referenceActive && det.nearEnd;
    s.echoOnly = referenceActive && !det.nearEnd;
    s.converged = det.converged;
    s.residualEchoLike = det.residualEchoLike;
    s.trusted = det.trusted;
    s.noEchoPath = det.noEchoPath;
    s.erleDb = det.erleDb;
    s.residualEnergy = pe / n;
    s.residualEchoEnergy = det.residualEcho;
    s.nearEndEnergy = det.nearEndEnergy;
    s.noiseFloor = det.noiseFloor;
  }

  /** Periodic: reads the delay from the filter (converged) or the probe (not), and re-aligns. */
  #align(): void {
    const s = this.#s;
    const ms = this.sampleRate / 1000;
    if (this.#detector.converged) {
      const onset = this.#onset();
      if (onset < 0) return;
      s.delayMs = (this.#delay + onset) / ms;
      s.delayFromFilter = true;
      // The residual hold decays with the room, as the filter's tail shows it.
      const slope = this.#filter.decaySlopeDb(Math.floor(onset / this.blockSize) + 1);
      if (slope < 0) this.#detector.setTailDecay(10 ** (slope / 10));
      if (Math.abs(onset - this.#margin) > 6 * ms) this.#realign(this.#delay + onset - this.#margin);
      return;
    }
    // A filter already cancelling 6 dB holds the direct path: let it converge
    // rather than follow the probe, which at RT60 0.8 s wanders by 50 ms.
    if (this.#detector.erleDb >= 6) return;
    const probe = this.#probe;
    if (probe.adaptedSamples < 0.4 * this.sampleRate) return;
    probe.estimate();
    if (!(probe.confidenceDb >= 8)) return;
    const coarse = probe.delaySamples;
    const agrees = Math.abs(coarse - this.#lastCoarse) <= 4 * ms;
    this.#lastCoarse = coarse;
    if (!agrees) return;
    s.delayMs = coarse / ms;
    s.delayFromFilter = false;
    // Hysteresis: the filter copes with an arrival anywhere from half its margin
    // to 40 ms past it (it only loses some tail), so a coarse estimate inside
    // that range is left alone; at RT60 0.8 s the probe alternates between
    // estimates ~35 ms apart, and following each one reset the filter's work.
    const offset = coarse - this.#delay;
    const inside = offset >= this.#margin / 2 && offset <= this.#margin + 40 * ms;
    if (!inside && this.#sinceAlign >= this.#settleBlocks) this.#realign(coarse - this.#margin);
  }

  /**
   * First arrival in the filter's response (K inverse transforms); −1 if
   * empty. The last 96 ms are left out: a truncated filter parks taps there
   * that stand in for the room tail it cannot reach (seen at RT60 0.8 s).
   */
  #onset(): number {
    const ms = this.sampleRate / 1000;
    const count = Math.max(this.#margin + 16 * ms, this.#filter.taps - 96 * ms);
    const h = this.#taps;
    this.#filter.impulseResponse(h, count);
    let energy = 0;
    for (let j = 0; j < count; j++) energy += h[j] * h[j];
    return energy > 0 ? findOnset(h, count, 2 * ms) : -1;
  }

  #clampDelay(samples: number): number {
    return Math.min(Math.max(0, samples), this.#maxDelay);
  }

  /** Moves the filter's start to `delay` samples, keeping its weights, and reloads its history. */
  #realign(delay: number): void {
    const next = this.#clampDelay(delay);
    if (next === this.#delay) return;
    this.#filter.shift(next - this.#delay, this.#taps);
    this.#delay = next;
    this.#sinceAlign = 0;
    const ring = this.#ring;
    const mask = this.#mask;
    const h = this.#history;
    const end = this.#s.blockCount * this.blockSize; // first sample of the next block
    for (let j = 0; j < h.length; j++) {
      const t = end - h.length + j - next;
      h[j] = t >= 1 ? ring[t & mask] - PRE * ring[(t - 1) & mask] : t === 0 ? ring[0] : 0;
    }
    this.#filter.loadHistory(h);
  }
}
