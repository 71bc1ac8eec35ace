/**
 * Opt-in timing of `process()` for the benchmarks. AudioWorkletGlobalScope has
 * no `performance` in every browser version (Chromium 156 has none). Then, if
 * the page hands in a shared clock (a Float64 that a worker keeps setting to
 * its performance.now() in a tight loop), that is read; otherwise Date.now(),
 * whose 1 ms steps make single quanta unmeasurable. `name` says which.
 *
 * Allocation: the constructor allocates the sample store; `start`/`stop`
 * allocate nothing; `snapshot` copies (only on request, off the audio path).
 */
import type { ProfileReport } from "../src/protocol/audio-messages.js";

const CAPACITY = 16384;

export class ProcessClock {
  readonly name: string;
  readonly #now: () => number;
  readonly #micros = new Float32Array(CAPACITY);
  #count = 0;
  /** Sum of Date.now() differences: 1 ms steps, but their mean is unbiased over many quanta. */
  #dateSumMs = 0;
  #dateStart = 0;

  constructor(sharedClock?: SharedArrayBuffer) {
    const perf = (globalThis as { performance?: { now(): number } }).performance;
    if (perf && typeof perf.now === "function") {
      this.#now = () => perf.now();
      this.name = "performance.now";
    } else if (sharedClock) {
      const ms = new Float64Array(sharedClock);
      this.#now = () => ms[0];
      this.name = "worker performance.now via SharedArrayBuffer";
    } else {
      this.#now = Date.now;
      this.name = "Date.now";
    }
  }

  start(): number {
    this.#dateStart = Date.now();
    return this.#now();
  }

  stop(startedAt: number): void {
    this.#micros[this.#count % CAPACITY] = (this.#now() - startedAt) * 1000;
    this.#dateSumMs += Date.now() - this.#dateStart;
    this.#count++;
  }

  /** Mean µs per quantum from the Date.now() sums, over every quantum measured. */
  get meanMicrosByDate(): number {
    return this.#count === 0 ? 0 : (this.#dateSumMs * 1000) / this.#count;
  }

  /** The latest durations in µs, oldest first. Allocates. */
  snapshot(): Float32Array {
    const n = Math.min(this.#count, CAPACITY);
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = this.#micros[(this.#count - n + i) % CAPACITY];
    return out;
  }
}

/** The answer to a `{kind:"profile"}` request, from a worklet with or without a clock. */
export function profileReport(clock: ProcessClock | undefined): ProfileReport {
  return {
    kind: "profile",
    micros: clock?.snapshot() ?? new Float32Array(0),
    meanMicrosByDate: clock?.meanMicrosByDate ?? 0,
    clock: clock?.name ?? "off",
  };
}
