/**
 * Time-domain normalised LMS: the baseline the echo guard was measured
 * against (figures in echo-guard.ts). It cancels 2–4 dB more than the PBFDAF
 * on speech, mostly below 500 Hz, but costs ~14× more, so the guard does not
 * use it. Kept so the comparison in test/unit/echo-guard.test.ts can be
 * re-run: same `process` signature as PbfdafFilter.
 *
 * Per sample: y = wᵀx, e = d − y, w += µ·e·x / (xᵀx + δ). That is 2L
 * multiply-adds per sample, ~140 M per second for a 272 ms filter at 16 kHz.
 *
 * Thread: one owner. Allocation: constructor only; `process` allocates nothing.
 */
export interface NlmsOptions {
  blockSize: number;
  taps: number;
  /** Step size µ ∈ (0, 2); default 0.5. */
  mu?: number;
}

export class NlmsFilter {
  readonly blockSize: number;
  readonly taps: number;
  readonly #mu: number;
  readonly #w: Float64Array;
  /** The last `taps` samples, then the current block: sample i of a block is at [taps + i]. */
  readonly #history: Float64Array;
  #energy = 0;

  constructor(options: NlmsOptions) {
    this.blockSize = options.blockSize;
    this.taps = options.taps;
    this.#mu = options.mu ?? 0.5;
    this.#w = new Float64Array(options.taps);
    this.#history = new Float64Array(options.taps + options.blockSize);
  }

  /** Filters and adapts one block; `scale` multiplies µ (0 freezes). No allocation. */
  process(x: Float64Array, d: Float64Array, y: Float64Array, e: Float64Array, scale = 1): void {
    const n = this.blockSize;
    const taps = this.taps;
    const h = this.#history;
    const w = this.#w;
    const mu = this.#mu * scale;
    h.copyWithin(0, n);
    for (let i = 0; i < n; i++) h[taps + i] = x[i];
    for (let i = 0; i < n; i++) {
      const newest = taps + i;
      // Running xᵀx over the regressor: the newest sample enters, the oldest leaves.
      this.#energy += h[newest] * h[newest] - h[i] * h[i];
      if (this.#energy < 0) this.#energy = 0;
      let acc = 0;
      for (let j = 0; j < taps; j++) acc += w[j] * h[newest - j];
      y[i] = acc;
      const err = d[i] - acc;
      e[i] = err;
      if (mu > 0) {
        const g = (mu * err) / (this.#energy + 1e-6 * taps);
        for (let j = 0; j < taps; j++) w[j] += g * h[newest - j];
      }
    }
  }

  reset(): void {
    this.#w.fill(0);
    this.#history.fill(0);
    this.#energy = 0;
  }
}
