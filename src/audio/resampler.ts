/**
 * A streaming, anti-aliased sample-rate converter: a rational polyphase FIR
 * whose prototype is a Kaiser-windowed sinc. Pure (no DOM, no imports), so the
 * capture worklet, the main thread (Player.write) and Node tests share it.
 *
 * Timing contract: output sample n is the band-limited input at input time
 * `n × inputRate / outputRate − delayInputSamples`, i.e. the converter delays
 * the signal by exactly `delaySeconds`. The first outputs therefore ramp in
 * from the zero history.
 *
 * Filter: cutoff at 0.92 of the lower rate's Nyquist, transition band
 * 0.84–1.0 × that Nyquist, about 80 dB stop-band. Each phase is normalised to
 * unit DC gain.
 *
 * Allocation: the constructor allocates the tables and the history;
 * `process` allocates nothing (it copies with loops, never subarrays);
 * `resampleAll` allocates its result and is for the main thread and tests.
 */
const STOPBAND_DB = 80;
const PASSBAND_EDGE = 0.84;
const STOPBAND_EDGE = 1.0;
const MAX_PHASES = 4096;
const HISTORY_BLOCK = 4096;

export class Resampler {
  readonly inputRate: number;
  readonly outputRate: number;
  /** Group delay of the filter, in input samples (half the taps). */
  readonly delayInputSamples: number;
  /** Taps per output sample. */
  readonly taps: number;
  readonly #up: number; // L: phases per input sample
  readonly #down: number; // M: input step per output, in 1/L input samples
  readonly #table: Float32Array; // [phase * taps + k]
  readonly #history: Float32Array;
  #historyStart: number; // absolute input index of history[0]
  #historyLength = 0;
  #inputIndex = 0; // input index of the next output's newest tap
  #phase = 0; // and its fraction, in 1/L input samples

  constructor(inputRate: number, outputRate: number) {
    if (!(inputRate > 0 && outputRate > 0) || !Number.isInteger(inputRate) || !Number.isInteger(outputRate)) {
      throw new RangeError(`Resampler: rates must be positive integers, got ${inputRate} → ${outputRate}`);
    }
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    const g = gcd(inputRate, outputRate);
    this.#up = outputRate / g;
    this.#down = inputRate / g;
    if (this.#up > MAX_PHASES) {
      throw new RangeError(
        `Resampler: ${inputRate} → ${outputRate} Hz needs ${this.#up} filter phases (at most ${MAX_PHASES}); use standard rates`,
      );
    }
    // Frequencies in cycles per input sample.
    const nyquist = 0.5 * Math.min(1, outputRate / inputRate);
    const cutoff = nyquist * (PASSBAND_EDGE + STOPBAND_EDGE) / 2;
    const transition = 2 * Math.PI * nyquist * (STOPBAND_EDGE - PASSBAND_EDGE);
    // Kaiser's estimate of the length for the stop-band attenuation and transition width.
    const taps = Math.ceil((STOPBAND_DB - 8) / (2.285 * transition)) + 1;
    this.taps = taps + (taps % 2); // even, so the delay is a whole number of samples
    this.delayInputSamples = this.taps / 2;
    const beta = 0.1102 * (STOPBAND_DB - 8.7);
    this.#table = buildTable(this.#up, this.taps, cutoff, beta);
    this.#history = new Float32Array(this.taps - 1 + HISTORY_BLOCK);
    // The history starts with taps−1 zeros before input sample 0.
    this.#historyLength = this.taps - 1;
    this.#historyStart = -(this.taps - 1);
  }

  /** The filter's delay in seconds. */
  get delaySeconds(): number {
    return this.delayInputSamples / this.inputRate;
  }

  /** The most outputs that `process` can produce from `inputLength` samples. */
  maxOutput(inputLength: number): number {
    return Math.ceil(((inputLength + 1) * this.#up) / this.#down) + 1;
  }

  /**
   * Consumes `inputLength` samples of `input` from `inputOffset`, writes the
   * outputs they complete into `output` from `outputOffset`, and returns how
   * many it wrote. `output` must have room for `maxOutput(inputLength)`.
   * No allocation.
   */
  process(
    input: Float32Array,
    inputOffset: number,
    inputLength: number,
    output: Float32Array,
    outputOffset = 0,
  ): number {
    if (output.length - outputOffset < this.maxOutput(inputLength)) {
      throw new RangeError("Resampler.process: output has no room for maxOutput(inputLength) samples");
    }
    const history = this.#history;
    const table = this.#table;
    const taps = this.taps;
    const up = this.#up;
    const down = this.#down;
    let produced = 0;
    let consumed = 0;
    while (consumed < inputLength) {
      const n = Math.min(inputLength - consumed, history.length - this.#historyLength);
      for (let i = 0; i < n; i++) history[this.#historyLength + i] = input[inputOffset + consumed + i];
      this.#historyLength += n;
      consumed += n;
      const end = this.#historyStart + this.#historyLength; // first absolute index not yet received
      while (this.#inputIndex < end) {
        const newest = this.#inputIndex - this.#historyStart;
        const base = this.#phase * taps;
        let sum = 0;
        for (let k = 0; k < taps; k++) sum += history[newest - k] * table[base + k];
        output[outputOffset + produced++] = sum;
        this.#phase += down;
        while (this.#phase >= up) {
          this.#phase -= up;
          this.#inputIndex++;
        }
      }
      // Keep the taps−1 samples before the next output's newest tap.
      const keepFrom = Math.min(this.#inputIndex - (taps - 1) - this.#historyStart, this.#historyLength);
      if (keepFrom > 0) {
        history.copyWithin(0, keepFrom, this.#historyLength);
        this.#historyStart += keepFrom;
        this.#historyLength -= keepFrom;
      }
    }
    return produced;
  }

  /** Resamples a whole chunk, continuing the stream. Allocates the result. */
  resampleAll(input: Float32Array): Float32Array {
    const out = new Float32Array(this.maxOutput(input.length));
    const n = this.process(input, 0, input.length, out, 0);
    return out.slice(0, n);
  }

  /** Forgets the stream: the next input is sample 0 again, after zero history. */
  reset(): void {
    this.#history.fill(0);
    this.#historyLength = this.taps - 1;
    this.#historyStart = -(this.taps - 1);
    this.#inputIndex = 0;
    this.#phase = 0;
  }
}

/**
 * table[p × taps + k] is the prototype at τ = p/L + k input samples, where the
 * windowed sinc is centred at τ = taps/2. Each phase sums to exactly 1.
 */
function buildTable(phases: number, taps: number, cutoff: number, beta: number): Float32Array {
  const table = new Float32Array(phases * taps);
  const half = taps / 2;
  const i0Beta = besselI0(beta);
  const row = new Float64Array(taps);
  for (let p = 0; p < phases; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      const t = p / phases + k - half;
      const x = t / half;
      const window = Math.abs(x) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - x * x)) / i0Beta;
      const arg = 2 * cutoff * t;
      const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
      row[k] = 2 * cutoff * sinc * window;
      sum += row[k];
    }
    for (let k = 0; k < taps; k++) table[p * taps + k] = row[k] / sum;
  }
  return table;
}

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 64; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
