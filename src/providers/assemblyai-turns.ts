/**
 * The pure core of `assemblyaiStt`: AssemblyAI Universal-Streaming v3 server
 * messages in, SttEvents out. No socket, no clock, no DOM, so the unit tests
 * and the fuzz drive it directly with the docs' example messages.
 *
 * Message shapes from https://www.assemblyai.com/docs/streaming/universal-streaming/message-sequence
 * and the field reference https://www.assemblyai.com/docs/api-reference/streaming-api/streaming-api:
 *   Begin{id, expires_at}, SpeechStarted{timestamp, confidence?},
 *   Turn{turn_order, turn_is_formatted, end_of_turn, end_of_turn_confidence,
 *        transcript, utterance?, words[{start, end, text, confidence, word_is_final}]},
 *   Termination{audio_duration_seconds, session_duration_seconds}.
 *
 * Words. A Turn repeats the turn's words as they grow; a word's text may
 * change until its `word_is_final` ("son" → "sonny"). The SttEvent interface
 * has no way to take a word back, so a word is emitted once, when it becomes
 * final, never before: a non-final word is only a guess. The cost is about
 * one word of latency (a word turns final in the next Turn, when the word
 * after it begins); the session's VAD confirms a barge-in in 200 ms anyway.
 * Each word is followed at once by its `word-end`, since the service gives
 * both times together.
 *
 * Turns. `end_of_turn: true` is an `end-of-turn` (eager: false) with the
 * service's `end_of_turn_confidence`; any word still not final is emitted
 * before it (the docs say endpointing waits for the last word to be final).
 * A Turn whose `utterance` is filled before its end of turn is the docs'
 * "eager LLM inference" signal: an `end-of-turn` with eager: true; if the same
 * turn then grows, a `turn-resumed`. With `format_turns=true` the service may
 * send the ended turn once more, formatted ("Hi, my name is Sonny."): its
 * words were already emitted unformatted, so the repeat emits nothing.
 *
 * Times. Word times are ms in the service's audio timeline. The provider pads
 * short chunks with silence (the service takes 50–1000 ms per message), so
 * `PaddedTimeline` maps service time back to the stream's own timeline.
 */
import { BargeinError } from "../errors.js";
import type { SttEvent } from "./types.js";
import { numberField, protocolError, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** One word of a Turn, checked. */
interface TurnWord {
  text: string;
  startMs: number;
  endMs: number;
  final: boolean;
}

/**
 * The silence the provider inserted into the service's timeline, so that
 * service times map back to the stream's samples. Pure; positions in samples.
 */
export class PaddedTimeline {
  readonly #sampleRate: number;
  /** Service-timeline positions where padding ended, and the padding's total so far. */
  readonly #marks: { endsAt: number; total: number }[] = [];
  #total = 0;

  constructor(sampleRate: number) {
    this.#sampleRate = sampleRate;
  }

  /** `samples` of silence were sent, starting at service-timeline sample `at`. */
  pad(at: number, samples: number): void {
    if (samples <= 0) return;
    this.#total += samples;
    this.#marks.push({ endsAt: at + samples, total: this.#total });
  }

  /** A service time in ms, as seconds in the stream's own timeline. */
  toStreamSeconds(ms: number): number {
    const at = (ms / 1000) * this.#sampleRate;
    let removed = 0;
    for (const mark of this.#marks) {
      if (mark.endsAt > at) {
        // Inside a padding run: the time maps to where the padding began.
        const runStart = mark.endsAt - (mark.total - removed);
        if (at > runStart) removed += at - runStart;
        break;
      }
      removed = mark.total;
    }
    return Math.max(0, (at - removed) / this.#sampleRate);
  }
}

/** What one server message means, in order. `forcedEnd` is set on an ended turn (a flush waits for it). */
export interface TurnStep {
  events: SttEvent[];
  /** The message ended a turn (`end_of_turn: true`, not a formatted repeat). */
  turnEnded: boolean;
  /** The service said the session is over (`Termination`). */
  terminated: boolean;
}

/**
 * Follows the turns of one stream. `receive` is called with every decoded
 * message in arrival order and returns its events; a message that breaks the
 * protocol throws a ProtocolError (the stream then ends with it).
 */
export class AssemblyAiTurns {
  readonly #timeline: PaddedTimeline;
  #turnOrder = -1;
  /** Words of the current turn already emitted. */
  #emitted = 0;
  #ended = false;
  /** Word count when an eager end of turn was reported, while it stands. */
  #eagerAt: number | undefined;
  /** SpeechStarted came and its turn's first Turn not yet: the docs promise one follows. */
  #speechHeard = false;

  constructor(timeline: PaddedTimeline) {
    this.#timeline = timeline;
  }

  /**
   * True while a turn has begun (SpeechStarted or a Turn came) and not ended:
   * a ForceEndpoint has something to end.
   */
  get turnOpen(): boolean {
    return this.#speechHeard || (this.#turnOrder >= 0 && !this.#ended);
  }

  receive(msg: TaggedMessage, ctx: WireContext): TurnStep {
    switch (msg.type) {
      case "Turn":
        return this.#turn(msg, ctx);
      case "SpeechStarted":
        this.#speechHeard = true;
        return step([{ kind: "speech-start", startS: this.#timeline.toStreamSeconds(timeField(msg, "timestamp", ctx)) }]);
      case "Termination":
        return { events: [], turnEnded: false, terminated: true };
      case "Error":
        // Not in Universal-Streaming's reference, but the message-sequence page lists one before a close.
        throw new BargeinError(`${ctx.service} at ${ctx.url} reported an error: ${errorText(msg)}`, { service: ctx.service, url: ctx.url });
      default:
        // Begin again, or a message type newer than this client: nothing to report.
        return step([]);
    }
  }

  #turn(msg: TaggedMessage, ctx: WireContext): TurnStep {
    const order = numberField(msg, "turn_order", ctx);
    const endOfTurn = booleanField(msg, "end_of_turn", ctx);
    const words = wordsField(msg, ctx);
    const confidence = msg.end_of_turn_confidence === undefined ? undefined : numberField(msg, "end_of_turn_confidence", ctx);
    const utterance = msg.utterance === undefined || msg.utterance === null ? "" : stringField(msg, "utterance", ctx);
    if (!Number.isInteger(order) || order < 0) throw protocolError(ctx, `Turn.turn_order should be a whole number ≥ 0, got ${order}`);
    if (order < this.#turnOrder) return step([]); // a late repeat of an earlier turn
    this.#speechHeard = false;
    if (order > this.#turnOrder) {
      this.#turnOrder = order;
      this.#emitted = 0;
      this.#ended = false;
      this.#eagerAt = undefined;
    }
    // The formatted repeat of a turn that already ended: its words went out unformatted.
    if (this.#ended) return step([]);

    const events: SttEvent[] = [];
    if (this.#eagerAt !== undefined && words.length > this.#eagerAt && !endOfTurn) {
      events.push({ kind: "turn-resumed" });
      this.#eagerAt = undefined;
    }
    // Final words form a prefix of the list; at the end of the turn every word counts as final.
    while (this.#emitted < words.length && (endOfTurn || words[this.#emitted].final)) {
      const word = words[this.#emitted++];
      events.push(
        { kind: "word", text: word.text, startS: this.#timeline.toStreamSeconds(word.startMs) },
        { kind: "word-end", stopS: this.#timeline.toStreamSeconds(Math.max(word.startMs, word.endMs)) },
      );
    }
    if (endOfTurn) {
      this.#ended = true;
      this.#eagerAt = undefined;
      events.push(endOfTurnEvent(false, confidence));
      return { events, turnEnded: true, terminated: false };
    }
    if (utterance !== "" && this.#eagerAt === undefined) {
      this.#eagerAt = words.length;
      events.push(endOfTurnEvent(true, confidence));
    }
    return step(events);
  }
}

function step(events: SttEvent[]): TurnStep {
  return { events, turnEnded: false, terminated: false };
}

function endOfTurnEvent(eager: boolean, confidence: number | undefined): SttEvent {
  return confidence === undefined ? { kind: "end-of-turn", eager } : { kind: "end-of-turn", eager, confidence };
}

function booleanField(msg: TaggedMessage, key: string, ctx: WireContext): boolean {
  const v = msg[key];
  if (typeof v !== "boolean") throw protocolError(ctx, `${msg.type}.${key} should be a boolean, got ${v === null ? "null" : typeof v}`);
  return v;
}

function wordsField(msg: TaggedMessage, ctx: WireContext): TurnWord[] {
  const raw = msg.words;
  if (!Array.isArray(raw)) throw protocolError(ctx, `Turn.words should be an array of words`);
  return raw.map((w: unknown, i) => {
    if (typeof w !== "object" || w === null || Array.isArray(w)) throw protocolError(ctx, `Turn.words[${i}] should be a map`);
    const word = { type: `Turn.words[${i}]`, ...(w as Record<string, unknown>) } as TaggedMessage;
    const final = word.word_is_final;
    if (typeof final !== "boolean") throw protocolError(ctx, `Turn.words[${i}].word_is_final should be a boolean`);
    return { text: stringField(word, "text", ctx), startMs: timeField(word, "start", ctx), endMs: timeField(word, "end", ctx), final };
  });
}

/** A time in ms on the stream's timeline: ≥ 0 and under a day (a session lasts at most 3 hours). */
function timeField(msg: TaggedMessage, key: string, ctx: WireContext): number {
  const ms = numberField(msg, key, ctx);
  if (ms < 0 || ms > 86_400_000) throw protocolError(ctx, `${msg.type}.${key} should be a time in ms within the session, got ${ms}`);
  return ms;
}

function errorText(msg: TaggedMessage): string {
  for (const key of ["error", "message", "detail"]) if (typeof msg[key] === "string") return msg[key] as string;
  return "no message";
}
