/**
 * A real-input FFT of a fixed power-of-two size: an iterative radix-2 complex
 * FFT of half the size plus the usual even/odd split. Pure (no DOM, no
 * imports), so the capture worklet and Node tests share it.
 *
 * Why our own, not a package: `fft.js` (radix-4) has a real forward
 * transform but only a complex inverse, and ships CommonJS (lib/fft.js);
 * the kissfft and pffft builds are WASM, which a worklet would have to
 * compile asynchronously. This is ~100 lines with no dependency to pin. The
 * guard does 8 transforms of 128 points per 4 ms block, ~1.5 µs each (Node 20).
 *
 * Conventions: `forward` is unscaled, X[k] = Σ x[n]·e^(−2πikn/N), k = 0…N/2;
 * `inverse` scales by 1/N, so inverse(forward(x)) = x.
 *
 * Thread: any. Allocation: the constructor allocates the tables and the work
 * arrays; `forward` and `inverse` allocate nothing. Not re-entrant (shared
 * work arrays), which is fine on one render thread.
 */
export class RealFft {
  /** Real samples per transform. */
  readonly size: number;
  /** Complex bins per spectrum: size/2 + 1. */
  readonly bins: number;
  readonly #half: number;
  readonly #rev: Uint32Array;
  /** e^(−2πik/half) for the complex stages, k < half/2. */
  readonly #cos: Float64Array;
  readonly #sin: Float64Array;
  /** e^(−2πik/size) for the split, k ≤ half. */
  readonly #splitCos: Float64Array;
  readonly #splitSin: Float64Array;
  readonly #re: Float64Array;
  readonly #im: Float64Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 4 || (size & (size - 1)) !== 0) {
      throw new RangeError(`RealFft: size must be a power of two ≥ 4, got ${size}`);
    }
    this.size = size;
    const half = size / 2;
    this.#half = half;
    this.bins = half + 1;
    this.#re = new Float64Array(half);
    this.#im = new Float64Array(half);
    this.#rev = new Uint32Array(half);
    const bits = Math.log2(half);
    for (let i = 0; i < half; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.#rev[i] = r;
    }
    this.#cos = new Float64Array(Math.max(1, half / 2));
    this.#sin = new Float64Array(Math.max(1, half / 2));
    for (let k = 0; k < half / 2; k++) {
      this.#cos[k] = Math.cos((2 * Math.PI * k) / half);
      this.#sin[k] = -Math.sin((2 * Math.PI * k) / half);
    }
    this.#splitCos = new Float64Array(half + 1);
    this.#splitSin = new Float64Array(half + 1);
    for (let k = 0; k <= half; k++) {
      this.#splitCos[k] = Math.cos((2 * Math.PI * k) / size);
      this.#splitSin[k] = -Math.sin((2 * Math.PI * k) / size);
    }
  }

  /**
   * Spectrum of `input[0 … size)` into `re`, `im` from `offset` (so one array
   * can hold many spectra without subarray views, which allocate). No allocation.
   */
  forward(input: Float64Array, re: Float64Array, im: Float64Array, offset = 0): void {
    const half = this.#half;
    const zr = this.#re;
    const zi = this.#im;
    const rev = this.#rev;
    // Pack even samples as real, odd as imaginary: one complex FFT of half the size.
    for (let k = 0; k < half; k++) {
      const j = rev[k];
      zr[j] = input[2 * k];
      zi[j] = input[2 * k + 1];
    }
    this.#butterflies();
    const wc = this.#splitCos;
    const ws = this.#splitSin;
    for (let k = 0; k <= half; k++) {
      const a = k === half ? 0 : k;
      const b = k === 0 ? 0 : half - k;
      // Even part F = (Z[k] + conj Z[N−k]) / 2, odd part G = (Z[k] − conj Z[N−k]) / 2i.
      const fr = 0.5 * (zr[a] + zr[b]);
      const fi = 0.5 * (zi[a] - zi[b]);
      const gr = 0.5 * (zi[a] + zi[b]);
      const gi = -0.5 * (zr[a] - zr[b]);
      re[offset + k] = fr + wc[k] * gr - ws[k] * gi;
      im[offset + k] = fi + wc[k] * gi + ws[k] * gr;
    }
  }

  /** Real signal of the spectrum at `offset` in `re`, `im` into `output[0 … size)`. No allocation. */
  inverse(re: Float64Array, im: Float64Array, output: Float64Array, offset = 0): void {
    const half = this.#half;
    const zr = this.#re;
    const zi = this.#im;
    const rev = this.#rev;
    const wc = this.#splitCos;
    const ws = this.#splitSin;
    for (let k = 0; k < half; k++) {
      const a = offset + k;
      const b = offset + half - k;
      // F = (X[k] + conj X[N/2−k]) / 2, G = (X[k] − conj X[N/2−k]) / 2 · e^(+2πik/N).
      const fr = 0.5 * (re[a] + re[b]);
      const fi = 0.5 * (im[a] - im[b]);
      const dr = 0.5 * (re[a] - re[b]);
      const di = 0.5 * (im[a] + im[b]);
      const gr = dr * wc[k] + di * ws[k];
      const gi = di * wc[k] - dr * ws[k];
      // Z = F + iG, conjugated on the way in so the forward butterflies invert it.
      const j = rev[k];
      zr[j] = fr - gi;
      zi[j] = -(fi + gr);
    }
    this.#butterflies();
    const scale = 1 / half;
    for (let k = 0; k < half; k++) {
      output[2 * k] = zr[k] * scale;
      output[2 * k + 1] = -zi[k] * scale;
    }
  }

  /** In-place decimation-in-time stages on bit-reversed #re/#im. */
  #butterflies(): void {
    const n = this.#half;
    const re = this.#re;
    const im = this.#im;
    const cos = this.#cos;
    const sin = this.#sin;
    for (let size = 2; size <= n; size <<= 1) {
      const h = size >> 1;
      const step = n / size;
      for (let start = 0; start < n; start += size) {
        for (let j = 0; j < h; j++) {
          const wr = cos[j * step];
          const wi = sin[j * step];
          const a = start + j;
          const b = a + h;
          const tr = re[b] * wr - im[b] * wi;
          const ti = re[b] * wi + im[b] * wr;
          re[b] = re[a] - tr;
          im[b] = im[a] - ti;
          re[a] += tr;
          im[a] += ti;
        }
      }
    }
  }
}
