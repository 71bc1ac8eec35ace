/**
 * A service's notice that it will end a socket (Gemini Live's `goAway {
 * timeLeft }`), turned into one SttEvent "move": asked for once the wire is
 * quiet, or forced a little before the deadline, since a turn cut then is
 * better than one the service aborts. The session then moves at its own
 * quiet moment within what is left (SttLink), and the conversation goes with
 * it (the provider's context restore).
 * https://ai.google.dev/gemini-api/docs/live-session ("GoAway message")
 *
 * Thread: main. Owner: the provider's connection, which says when its wire is quiet.
 */
import type { SttEvent } from "./types.js";

/** The move is forced this long before the service's deadline, ms. */
const MARGIN_MS = 1000;

export class GoAwayNotice {
  readonly #message: string;
  readonly #forceAt: number;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #ask: (event: Extract<SttEvent, { kind: "move" }>) => void;
  #asked = false;

  /** `timeLeft`: the service's Duration string ("30s"), or null when it gave none (then the move is at once). */
  constructor(timeLeft: string | null, ask: (event: Extract<SttEvent, { kind: "move" }>) => void) {
    const leftS = timeLeft === null ? NaN : Number.parseFloat(timeLeft);
    const forceMs = Number.isFinite(leftS) ? Math.max(0, leftS * 1000 - MARGIN_MS) : 0;
    this.#message = `the service ends this session's socket in ${timeLeft ?? "an unknown time"} (goAway); moving to a new one`;
    this.#forceAt = performance.now() + forceMs;
    this.#ask = ask;
    this.#timer = setTimeout(() => this.#move(), forceMs);
  }

  /** The wire is idle now (no turn open, owed or under way): ask for the move. */
  quiet(): void {
    this.#move();
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }

  #move(): void {
    if (this.#asked) return;
    this.#asked = true;
    clearTimeout(this.#timer);
    this.#ask({ kind: "move", message: this.#message, withinMs: Math.max(0, this.#forceAt - performance.now()) });
  }
}
