/**
 * Per-band energies of one block for the NearEndDetector: of the canceller's
 * error, of its echo estimate and of the mic (error + estimate, added as
 * spectra: the transform is linear). The error's spectrum comes from the
 * filter, which computed it for its own update; the estimate's costs one
 * transform here. Energies are mean squares of the (pre-emphasised) block,
 * per band, so the bands sum to the block's mean square.
 *
 * Thread: one owner. Allocation: constructor only.
 */
import { BAND_EDGES_HZ, BANDS } from "./near-end-detector.js";
import { RealFft } from "./real-fft.js";

export class BandEnergies {
  readonly mic = new Float64Array(BANDS);
  readonly error = new Float64Array(BANDS);
  readonly estimate = new Float64Array(BANDS);
  readonly #n: number;
  readonly #fft: RealFft;
  readonly #frame: Float64Array;
  readonly #re: Float64Array;
  readonly #im: Float64Array;
  /** Bin ranges [edges[k], edges[k + 1]) per band; the last band includes Nyquist. */
  readonly #edges: Int32Array;
  readonly #scale: number;

  constructor(blockSize: number, sampleRate: number) {
    const n = (this.#n = blockSize);
    this.#fft = new RealFft(2 * n);
    this.#frame = new Float64Array(2 * n);
    this.#re = new Float64Array(n + 1);
    this.#im = new Float64Array(n + 1);
    this.#edges = Int32Array.from(BAND_EDGES_HZ, (hz) => Math.round((hz / (sampleRate / 2)) * n));
    this.#edges[BANDS] = n + 1;
    // Parseval for FFT([0 … 0, x]) of 2N points, read over half the bins: Σx²/N = Σ|X|²·2 / (2N·N).
    this.#scale = 1 / (n * n);
  }

  /** From the error's spectrum (FFT of [0, e], `bins` long) and the estimate block `y`. No allocation. */
  measure(errorRe: Float64Array, errorIm: Float64Array, y: Float64Array): void {
    this.#spectrum(y);
    const re = this.#re;
    const im = this.#im;
    const edges = this.#edges;
    for (let k = 0; k < BANDS; k++) {
      let se = 0;
      let sy = 0;
      let sd = 0;
      for (let f = edges[k]; f < edges[k + 1]; f++) {
        se += errorRe[f] * errorRe[f] + errorIm[f] * errorIm[f];
        sy += re[f] * re[f] + im[f] * im[f];
        const dr = errorRe[f] + re[f];
        const di = errorIm[f] + im[f];
        sd += dr * dr + di * di;
      }
      this.error[k] = se * this.#scale;
      this.estimate[k] = sy * this.#scale;
      this.mic[k] = sd * this.#scale;
    }
  }

  /** With no estimate (the filter was bypassed): error = mic = `d`. No allocation. */
  measureAlone(d: Float64Array): void {
    this.#spectrum(d);
    const re = this.#re;
    const im = this.#im;
    const edges = this.#edges;
    for (let k = 0; k < BANDS; k++) {
      let s = 0;
      for (let f = edges[k]; f < edges[k + 1]; f++) s += re[f] * re[f] + im[f] * im[f];
      this.error[k] = this.mic[k] = s * this.#scale;
      this.estimate[k] = 0;
    }
  }

  #spectrum(x: Float64Array): void {
    const n = this.#n;
    const frame = this.#frame;
    for (let i = 0; i < n; i++) {
      frame[i] = 0;
      frame[n + i] = x[i];
    }
    this.#fft.forward(frame, this.#re, this.#im);
  }
}
