/**
 * Keeps what the STT says behind what the VAD has heard. Both judge the same
 * microphone audio, but on different threads: on a starved machine the VAD's
 * worker can fall seconds behind while the STT service keeps up, and the STT's
 * pause (or its words and end of turn) then reaches the turn machine before
 * the VAD's speech start for the very speech it is about. The machine would
 * answer a turn the VAD has not heard yet, and the VAD's late speech start
 * would then cut that answer as if the user had barged in.
 *
 * The gate holds the STT's transcript events while the VAD is more than
 * `behindMs` behind the capture, each until the VAD has judged the audio
 * captured when it arrived (or `maxHoldMs` passed: a VAD that stops judging
 * must not stop the conversation), and releases them in their order. A VAD
 * that never says how far it has judged (VadPort without `judged` events)
 * holds nothing. Pure: the session feeds it times and dispatches what it
 * releases.
 *
 * Thread: main. Owner: VoiceSession (through session-inputs.ts).
 */

export interface SttGateOptions {
  /** How far (ms of audio) the VAD may lag the capture before the STT's events wait for it. */
  behindMs: number;
  /** The longest (ms, wall clock) an event waits. */
  maxHoldMs: number;
}

interface Held<T> {
  readonly event: T;
  /** The capture time (AudioContext s) the VAD must have judged. */
  readonly until: number;
  /** When it arrived (ms, wall clock). */
  readonly at: number;
}

export class SttGate<T> {
  readonly #options: SttGateOptions;
  #held: Held<T>[] = [];
  /** The end of the last frame captured (AudioContext s). */
  #captured: number | undefined;
  /** The last frame the VAD judged (AudioContext s); undefined until it says. */
  #judged: number | undefined;

  constructor(options: SttGateOptions) {
    this.#options = options;
  }

  /** Events waiting for the VAD. */
  get holding(): number {
    return this.#held.length;
  }

  /** A frame was captured up to `contextTime` (s). */
  captured(contextTime: number): void {
    this.#captured = contextTime;
  }

  /** The VAD has judged the audio up to `contextTime` (s): returns what it releases, in order. */
  judged(contextTime: number, nowMs: number): T[] {
    this.#judged = Math.max(this.#judged ?? -Infinity, contextTime);
    return this.#release(nowMs);
  }

  /** An STT event arrived at `nowMs`: returns what goes on now, in order (it, or nothing while earlier ones wait). */
  arrive(event: T, nowMs: number): T[] {
    const captured = this.#captured;
    const judged = this.#judged;
    const behind = captured !== undefined && judged !== undefined && (captured - judged) * 1000 > this.#options.behindMs;
    if (!behind && this.#held.length === 0) return [event];
    this.#held.push({ event, until: captured ?? -Infinity, at: nowMs });
    return this.#release(nowMs);
  }

  /** Releases what has waited its longest by `nowMs` (call on a timer while `holding`). */
  tick(nowMs: number): T[] {
    return this.#release(nowMs);
  }

  /** Releases everything that waits, in order: the STT's flush came back, and the turn is decided on all its words. */
  releaseAll(): T[] {
    return this.#held.splice(0).map((h) => h.event);
  }

  /** Drops what waits and forgets both clocks (the session stops; a new start may bring a new AudioContext). */
  clear(): void {
    this.#held = [];
    this.#captured = undefined;
    this.#judged = undefined;
  }

  #release(nowMs: number): T[] {
    const out: T[] = [];
    const judged = this.#judged ?? -Infinity;
    while (this.#held.length > 0) {
      const first = this.#held[0]!;
      if (first.until > judged && nowMs - first.at < this.#options.maxHoldMs) break;
      out.push(first.event);
      this.#held.shift();
    }
    return out;
  }
}
