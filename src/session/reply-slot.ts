/**
 * The reply that holds the floor, from its start to its end or interruption:
 * the session's one owner of the current Reply and of what each of the turn
 * machine's reply effects does with it (the history entry, the `transcript`,
 * `interruption`, `turn` and `metrics` events, the echo guard's record of the
 * bot's words). The machine decides when; this carries it out.
 *
 * Thread: main. Owner: VoiceSession, which hands it the player and the
 * QuestManager of the running session with each call that needs them.
 */
import type { PlayerPort } from "./ports.js";
import type { LlmProvider, TtsProvider, TtsSession } from "../providers/types.js";
import type { QuestManager } from "../quest/quest-manager.js";
import type { Emitter } from "../util/emitter.js";
import type { RecentBotWords } from "./echo-words.js";
import type { AssistantMessage, ConversationHistory, HistoryMessage } from "./history.js";
import { Reply, type TurnTiming } from "./reply.js";
import type { SessionCounters } from "./session-metrics.js";
import type { ToolRunner } from "./tool-runner.js";
import type { TranscriptFeed } from "./transcript-feed.js";
import type { TurnEffect, TurnEvent } from "./turn-machine.js";
import type { InterruptionEvent, SessionMetrics, TranscriptEvent, VoiceSessionEvents } from "./types.js";

export interface ReplySlotOptions {
  history: ConversationHistory;
  transcripts: TranscriptFeed;
  counters: SessionCounters;
  /** Undefined with the echo guard off. */
  botWords: RecentBotWords | undefined;
  events: Emitter<VoiceSessionEvents>;
  llm: LlmProvider;
  tts: TtsProvider;
  instructions: string | undefined;
  /** The app's tools (the `tools` option); undefined: none. */
  tools: ToolRunner | undefined;
  stallMs: number;
  dispatch(event: TurnEvent): void;
  /** A non-fatal failure, for the session's `error` event. */
  error(err: unknown): void;
  /** The session's metrics, sent after each turn's report. */
  metrics(): SessionMetrics;
}

/** What interrupt step 1 kept of a reply, as the `interruption` event reports it. */
type Heard = Pick<InterruptionEvent, "heardText" | "unheardText" | "heardMs">;

export class ReplySlot {
  readonly #o: ReplySlotOptions;
  #reply: Reply | undefined;
  /** While the reply is held (turn.preemptive): what it reported, for its release. */
  #pending: Array<() => void> | undefined;
  /** What interrupt step 1 kept, for the `interruption` event that follows it. */
  #heard: Heard | undefined;
  /** Interrupt step 4 of the latest interruption, for interrupt()'s promise. */
  cancelling: Promise<void> = Promise.resolve();
  /** The conversation's TTS connection (TtsProvider.session, where the provider has one): opened for the first reply, closed by clear(). */
  #tts: TtsSession | undefined;

  constructor(options: ReplySlotOptions) {
    this.#o = options;
  }

  /** The reply playing now, if any. */
  get current(): Reply | undefined {
    return this.#reply;
  }

  /**
   * Starts reply `generation` for the history as it is (LLM → TTS → player).
   * `held` (turn.preemptive): a reply to the user's turn `text`, which is not
   * in the history yet (`omit`: the message it will replace, left out of the
   * LLM's request); nothing of it shows or plays until `release()`.
   */
  start(generation: number, player: PlayerPort, quests: QuestManager, timing: TurnTiming, held?: { text: string; omit?: HistoryMessage }): void {
    const o = this.#o;
    // A held reply's message joins the history (and gets its id) when it is released, after the user's.
    const message = held ? detachedAssistant() : o.history.addAssistant(o.transcripts.newId("assistant"));
    // `omit`: the user message a resumed turn's words replace (turn.resumeUnheard).
    const chat = o.history.toChat(o.instructions, held?.omit);
    if (held) chat.push({ role: "user", content: held.text });
    // What a held reply reports waits for its release (its transcript, its end, a stall).
    const later = (report: () => void) => (this.#pending && this.#reply === reply ? this.#pending.push(report) : report());
    const reply: Reply = new Reply({
      generation,
      index: held ? 0 : o.counters.nextTurn(),
      message,
      chat,
      held: held !== undefined,
      tools: o.tools,
      history: o.history,
      ...timing,
      llm: o.llm,
      tts: (this.#tts ??= o.tts.session?.()) ?? o.tts,
      player,
      quests,
      stallMs: o.stallMs,
      hooks: {
        transcript: (text) => later(() => this.#transcript(o.transcripts.partial(message.id, "assistant", text))),
        error: (err) => o.error(err),
        stalled: (warning) =>
          later(() => {
            o.events.emit("warning", warning);
            o.dispatch({ kind: "interrupt", reason: "stall" });
          }),
        silentEnd: () => later(() => o.dispatch({ kind: "replyDone", generation })),
        warning: (warning) => o.events.emit("warning", warning),
      },
    });
    this.#reply = reply;
    this.#pending = held ? [] : undefined;
    if (held) o.counters.preemptive.started++;
    else o.botWords?.replyStarted();
    void reply.start();
  }

  /** The held reply `generation` is the reply now: its message joins the history, then its audio and what it reported go out. */
  release(generation: number, voiceEnd: number | undefined): void {
    const reply = this.#of(generation);
    const pending = this.#pending;
    if (!reply || !pending) return;
    const o = this.#o;
    this.#pending = undefined;
    reply.message.id = o.transcripts.newId("assistant");
    o.history.append(reply.message);
    reply.metrics.turn = o.counters.nextTurn();
    o.counters.preemptive.released++;
    o.botWords?.replyStarted();
    reply.release({ decidedAt: performance.now(), voiceEnd });
    for (const report of pending) report();
  }

  /** The held reply `generation` is not needed (the user went on): its streams are cancelled, and it is counted as wasted. Nothing is reported. */
  drop(generation: number): void {
    const reply = this.#of(generation);
    if (!reply || !this.#pending) return;
    this.#reply = undefined;
    this.#pending = undefined;
    this.#o.counters.preemptive.dropped++;
    this.cancelling = reply.removeStreams().catch((err) => this.#o.error(err));
  }

  /** A mic frame arrived: note where the playing reply is, for judging the STT's late words (echo-words.ts). */
  sampleRendered(player: PlayerPort | undefined): void {
    if (this.#reply && !this.#pending && player && this.#o.botWords) this.#o.botWords.rendered(performance.now(), player.renderedSeconds());
  }

  /** Is this STT word the bot's own voice heard back, and was the bot audible just now? */
  echoOf(text: string, player: PlayerPort | undefined, spokenAt?: number): { echo: boolean; nearBot: boolean } {
    // A held reply is not playing: its words are no echo yet.
    const reply = this.#pending ? undefined : this.#reply;
    const playing = reply && player ? { words: reply.words, renderedS: player.renderedSeconds() } : undefined;
    return this.#o.botWords?.judge(text, performance.now(), playing, spokenAt) ?? { echo: false, nearBot: false };
  }

  /** Interrupt step 1: the history keeps the rendered audio less what is still in the output path. */
  cut(generation: number, player: PlayerPort | undefined): void {
    this.#heard = this.#cutToHeard(generation, player);
  }

  /** The `interruption` event and the reply's final transcript, after steps 1–3. */
  announce(effect: Extract<TurnEffect, { kind: "announceInterruption" }>): void {
    const reply = this.#of(effect.generation);
    const heard = this.#heard;
    this.#heard = undefined;
    if (!reply || !heard) return;
    this.#o.counters.interruption();
    const resumed = effect.userTurnResumed ? { userTurnResumed: true } : {};
    this.#o.events.emit("interruption", { reason: effect.reason, ...heard, speechStartToConfirmMs: effect.speechStartToConfirmMs, ...resumed });
    this.#final(reply);
  }

  /** Interrupt step 4: close the TTS socket, then abort the LLM request; then report the turn. */
  cancel(generation: number): void {
    this.cancelling = this.#cancel(generation);
  }

  /** Reply `generation` played out: its final transcript and turn report. */
  finish(generation: number, player: PlayerPort | undefined): void {
    const reply = this.#of(generation);
    if (!reply) return;
    this.#reply = undefined;
    this.#o.botWords?.ended(reply.words, player?.renderedSeconds() ?? Infinity, performance.now());
    reply.finish(this.#o.history);
    this.#final(reply);
    this.#report(reply);
  }

  /** stop() mid-reply: the history keeps what was heard of it. */
  keepHeard(generation: number, player: PlayerPort | undefined): void {
    const reply = this.#of(generation);
    if (reply && this.#cutToHeard(generation, player)) this.#final(reply);
  }

  /** stop(): the reply's streams are cancelled and the slot is empty; resolves once the TTS connection is closed. */
  clear(): Promise<void> {
    this.#reply?.cancel();
    this.#reply = undefined;
    this.#pending = undefined;
    const tts = this.#tts;
    this.#tts = undefined;
    return tts?.close() ?? Promise.resolve();
  }

  #of(generation: number): Reply | undefined {
    return this.#reply?.generation === generation ? this.#reply : undefined;
  }

  #cutToHeard(generation: number, player: PlayerPort | undefined): Heard | undefined {
    const reply = this.#of(generation);
    if (!reply || !player) return undefined;
    const renderedS = player.renderedSeconds();
    const heardS = Math.max(0, renderedS - player.outputLatency);
    this.#o.botWords?.ended(reply.words, renderedS, performance.now());
    const { heard, unheard } = reply.cutToHeard(this.#o.history, heardS);
    return { heardText: heard, unheardText: unheard, heardMs: heardS * 1000 };
  }

  async #cancel(generation: number): Promise<void> {
    const reply = this.#of(generation);
    if (!reply) return;
    this.#reply = undefined;
    try {
      await reply.removeStreams();
    } catch (err) {
      this.#o.error(err);
    }
    this.#report(reply);
  }

  #final(reply: Reply): void {
    this.#transcript(this.#o.transcripts.final(reply.message.id, "assistant", reply.message.text));
  }

  #transcript(event: TranscriptEvent | undefined): void {
    if (event) this.#o.events.emit("transcript", event);
  }

  #report(reply: Reply): void {
    this.#o.events.emit("turn", this.#o.counters.report(reply.metrics));
    this.#o.events.emit("metrics", this.#o.metrics());
  }
}

/** A held reply's message, outside the history until its release gives it an id and a place. */
function detachedAssistant(): AssistantMessage {
  return { id: "", role: "assistant", text: "", interrupted: false, unheardText: "" };
}
