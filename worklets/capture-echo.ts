/**
 * The capture side of the echo guard: per render quantum it reads what the
 * playback worklet rendered one quantum earlier (worklets/echo-tap.ts),
 * resamples it and the microphone to 16 kHz with identical resamplers (so
 * both carry the same delay), and runs the EchoGuard (src/audio/echo/) on
 * them. The VAD gets the cleaned signal, and each VAD frame carries the
 * guard's verdict (FrameEcho): the bot's own echo (it starts nothing), near-
 * end speech the guard cannot vouch for yet (it may pause playback, never
 * confirm a barge-in), near-end speech it trusts over the bot (double talk),
 * or clear (no bot audio).
 *
 * Thread: the audio render thread, owned by the capture processor.
 * Allocation: everything in the constructor; `process` allocates nothing.
 */
import { EchoGuard } from "../src/audio/echo/echo-guard.js";
import { Resampler } from "../src/audio/resampler.js";
import { VAD_SAMPLE_RATE, type FrameEcho } from "../src/protocol/frames.js";
import { echoTap, readTap, type EchoTap } from "./echo-tap.js";

const QUANTUM = 128;

export class CaptureEcho {
  readonly #guard: EchoGuard;
  readonly #tap: EchoTap;
  readonly #micResampler: Resampler;
  readonly #refResampler: Resampler;
  readonly #ref = new Float32Array(QUANTUM);
  readonly #mic16: Float32Array;
  readonly #ref16: Float32Array;
  /** The cleaned 16 kHz samples of the last `process` call. */
  readonly out: Float32Array;
  #sawReference = false;
  #sawNearEnd = false;
  #sawTrustedNearEnd = false;
  #sawEchoPath = false;

  constructor(contextRate: number, options: { tap: string; tailMs?: number }) {
    this.#guard = new EchoGuard({ sampleRate: VAD_SAMPLE_RATE, tailMs: options.tailMs });
    this.#tap = echoTap(options.tap);
    this.#micResampler = new Resampler(contextRate, VAD_SAMPLE_RATE);
    this.#refResampler = new Resampler(contextRate, VAD_SAMPLE_RATE);
    const max = this.#micResampler.maxOutput(QUANTUM);
    this.#mic16 = new Float32Array(max);
    this.#ref16 = new Float32Array(max);
    this.out = new Float32Array(max);
  }

  /** The guard's latest block (ERLE, delay, convergence). */
  get state(): EchoGuard["state"] {
    return this.#guard.state;
  }

  /**
   * One quantum of the mono microphone at context frame `frame`: returns the
   * number of cleaned 16 kHz samples now in `out`.
   */
  process(mono: Float32Array, frame: number): number {
    readTap(this.#tap, frame - QUANTUM, this.#ref);
    const n = this.#micResampler.process(mono, 0, mono.length, this.#mic16, 0);
    const m = this.#refResampler.process(this.#ref, 0, QUANTUM, this.#ref16, 0);
    // Same rates, same input lengths, same state: always the same count.
    const count = Math.min(n, m);
    this.#guard.process(this.#mic16, this.#ref16, this.out, count);
    const state = this.#guard.state;
    if (state.referenceActive) this.#sawReference = true;
    if (state.nearEnd) this.#sawNearEnd = true;
    if (state.nearEnd && state.trusted) this.#sawTrustedNearEnd = true;
    if (state.referenceActive && !state.noEchoPath) this.#sawEchoPath = true;
    return count;
  }

  /** The guard's verdict on the VAD frame just completed (see FrameEcho); starts the next frame's. */
  takeVerdict(): FrameEcho {
    const verdict: FrameEcho = !this.#sawReference ? "clear" : this.#sawTrustedNearEnd ? "doubleTalk" : this.#sawNearEnd ? "unconfirmed" : "echo";
    this.#sawReference = false;
    this.#sawNearEnd = false;
    this.#sawTrustedNearEnd = false;
    return verdict;
  }

  /** Whether the VAD frame just completed had bot audio on a learned echo path (read before takeVerdict, which starts the next frame). */
  takeEchoPath(): boolean {
    const saw = this.#sawEchoPath;
    this.#sawEchoPath = false;
    return saw;
  }
}
