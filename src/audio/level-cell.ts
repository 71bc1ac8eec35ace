/**
 * A level shared by a worklet and the main thread, for pages that are
 * crossOriginIsolated: the worklet writes the smoothed mean square of what it
 * captures or renders once a render quantum, and the main thread reads one
 * float when the app asks (`getLevels()`), with no message and no
 * AnalyserNode copy. Reading a level from an AnalyserNode costs the main
 * thread tens of µs a call in Chromium (`npm run bench -- controls`);
 * this costs about a microsecond. Without shared memory the analyser stays
 * the way (LevelMeter).
 *
 * Threads: the worklet writes (LevelWriter, here: no DOM, so the worklets
 * can import it), the main thread makes the cell and reads it (level-meter.ts).
 * One aligned 32-bit float: a read sees a whole value, old or new, which is
 * all a meter needs.
 */

/** The smoothing's time constant: a bar that follows syllables without flicker. */
const TIME_CONSTANT_S = 0.03;

/** The worklet's side: one write per quantum, no allocation. */
export class LevelWriter {
  readonly #cell: Float32Array;
  readonly #alpha: number;
  #meanSquare = 0;

  constructor(cell: SharedArrayBuffer, sampleRate: number, quantum = 128) {
    this.#cell = new Float32Array(cell);
    this.#alpha = 1 - Math.exp(-quantum / (sampleRate * TIME_CONSTANT_S));
  }

  /** One quantum's samples (undefined: no input, which is silence). */
  write(samples: Float32Array | undefined): void {
    let sum = 0;
    const n = samples?.length ?? 0;
    for (let i = 0; i < n; i++) sum += samples![i]! * samples![i]!;
    this.#meanSquare += ((n ? sum / n : 0) - this.#meanSquare) * this.#alpha;
    // Below -120 dBFS is silence: let the decay reach a true zero.
    if (this.#meanSquare < 1e-12) this.#meanSquare = 0;
    this.#cell[0] = this.#meanSquare;
  }
}
