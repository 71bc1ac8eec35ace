// Streaming rational resampler (up/down by small integers) with a windowed-sinc
// low-pass, used for 24 kHz -> 16 kHz (STT input, 2/3) and 16 kHz -> 24 kHz
// (TTS output, 3/2). Polyphase: only the taps that hit a non-zero input sample
// are computed. State (the input history and the output phase) carries across
// calls, so chunk boundaries leave no clicks and any chunk size works.
// Not thread-safe; one instance per stream.

/** @param {number} x */
function sinc(x) {
  if (x === 0) return 1;
  const px = Math.PI * x;
  return Math.sin(px) / px;
}

/** Zeroth-order modified Bessel function, for the Kaiser window. @param {number} x */
function besselI0(x) {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 30; k++) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
  }
  return sum;
}

export class RationalResampler {
  /**
   * @param {number} up interpolation factor L
   * @param {number} down decimation factor M
   * @param {{ tapsPerPhase?: number, cutoff?: number, beta?: number }} [options]
   *   cutoff is a fraction of the lower of the two Nyquist rates (default 0.9).
   */
  constructor(up, down, options = {}) {
    const tapsPerPhase = options.tapsPerPhase ?? 32;
    const cutoff = options.cutoff ?? 0.9;
    const beta = options.beta ?? 8;
    this.up = up;
    this.down = down;
    this.tapsPerPhase = tapsPerPhase;
    const n = tapsPerPhase * up;
    // Cut-off in cycles per sample at the interpolated rate (input rate * up).
    const fc = (cutoff * 0.5) / Math.max(up, down);
    const center = (n - 1) / 2;
    const proto = new Float64Array(n);
    const i0beta = besselI0(beta);
    for (let i = 0; i < n; i++) {
      const r = (2 * i) / (n - 1) - 1;
      const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0beta;
      // Gain `up` restores the level lost by zero-stuffing.
      proto[i] = 2 * fc * sinc(2 * fc * (i - center)) * window * up;
    }
    /** phases[p][k] = proto[p + k * up]: taps applied to history[newest - k]. */
    this.phases = Array.from({ length: up }, (_, p) => {
      const taps = new Float64Array(tapsPerPhase);
      for (let k = 0; k < tapsPerPhase; k++) taps[k] = proto[p + k * up];
      return taps;
    });
    this.history = new Float64Array(tapsPerPhase);
    this.historyPos = 0;
    /** Position of the next output sample on the interpolated grid, relative to the newest input. */
    this.phase = 0;
    /** Group delay of the filter in output samples, for callers that align timestamps. */
    this.delayOutputSamples = center / down;
  }

  /**
   * Resample one chunk. Allocates the returned array only.
   * @param {Float32Array} input
   * @returns {Float32Array}
   */
  process(input) {
    const { up, down, tapsPerPhase, history } = this;
    const out = new Float32Array(Math.ceil(((input.length + 1) * up) / down));
    let written = 0;
    let phase = this.phase;
    for (let i = 0; i < input.length; i++) {
      history[this.historyPos] = input[i];
      this.historyPos = (this.historyPos + 1) % tapsPerPhase;
      // Output samples whose interpolated index falls within this input sample's `up` slots.
      while (phase < up) {
        const taps = this.phases[phase];
        let acc = 0;
        let pos = this.historyPos;
        for (let k = 0; k < tapsPerPhase; k++) {
          pos = pos === 0 ? tapsPerPhase - 1 : pos - 1;
          acc += taps[k] * history[pos];
        }
        out[written++] = acc;
        phase += down;
      }
      phase -= up;
    }
    this.phase = phase;
    return out.subarray(0, written);
  }
}

/** 24 kHz -> 16 kHz (STT input). */
export const downsampler24to16 = () => new RationalResampler(2, 3);
/** 16 kHz -> 24 kHz (TTS output). */
export const upsampler16to24 = () => new RationalResampler(3, 2);

/** @param {Float32Array} f32 @returns {Int16Array} */
export function floatToInt16(f32) {
  const out = new Int16Array(f32.length);
  for (let i = 0; i < f32.length; i++) {
    const s = Math.max(-1, Math.min(1, f32[i]));
    out[i] = Math.round(s * 32767);
  }
  return out;
}

/** @param {Int16Array} i16 @returns {Float32Array} */
export function int16ToFloat(i16) {
  const out = new Float32Array(i16.length);
  for (let i = 0; i < i16.length; i++) out[i] = i16[i] / 32768;
  return out;
}
