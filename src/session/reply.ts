/**
 * One reply of the bot: the "llm" quest (token stream) → WordChunker → the
 * "tts" quest (text in, PCM out) → the player, tagged with the reply's
 * generation, plus the stall watchdog and the reply's timings. It decides
 * nothing about turns: it reports through its hooks, and the turn machine
 * decides (the session feeds `silentEnd` and `stalled` to it).
 *
 * Tools: when the LLM stops to call tools, the reply waits in the same "llm"
 * quest while the ToolRunner answers them (the session stays in
 * bot_thinking, or plays what was said before the call), then asks the LLM
 * again with the calls and their results, and goes on speaking: one reply,
 * one message, one TTS stream. The stall watchdog is off while a tool runs
 * (the tool has its own limit, `tools.timeoutMs`).
 *
 * Thread: main. Owner: VoiceSession, one Reply per `startReply` effect.
 */
import type { ChatMessage, LlmProvider, LlmRequest, ToolCallRequest, TtsProvider, TtsStream } from "../providers/types.js";
import { Quest } from "../quest/quest.js";
import type { QuestManager } from "../quest/quest-manager.js";
import { isAbort } from "../util/abort.js";
import type { AssistantMessage, ConversationHistory, TimedWord } from "./history.js";
import type { PlayerPort } from "./ports.js";
import type { ToolRunner } from "./tool-runner.js";
import type { TurnMetrics, WarningEvent } from "./types.js";
import { WordChunker } from "./word-chunker.js";

export interface ReplyHooks {
  /** The reply's text so far (not final). */
  transcript(text: string): void;
  /** A failure of the LLM or the TTS; the reply goes on with what it has. */
  error(err: unknown): void;
  /** Neither stream sent anything for `ms` while the reply was incomplete; `warning` says so, for the app. */
  stalled(warning: { service: "llm" | "tts"; message: string }): void;
  /** Both streams are done and no audio was written (the TTS failed): the reply is over. */
  silentEnd(): void;
  /** Something the app should know while the reply goes on (the model kept calling tools). */
  warning(warning: WarningEvent): void;
}

/** Where a reply's clocks start: the user's turn that it answers. */
export interface TurnTiming {
  /** When the user's turn was decided over (ms, the session's clock). */
  speechEndAt: number;
  /** How long the STT took to confirm the turn's last words (none for a typed turn). */
  sttFinalMs?: number;
  /** The end of the user's last speech frame (AudioContext s), when the VAD gave it; none for a typed turn. */
  voiceEnd?: number;
}

export interface ReplyOptions extends TurnTiming {
  generation: number;
  /** The turn's number, counted from 1 over the session. */
  index: number;
  message: AssistantMessage;
  /** What the LLM is sent. */
  chat: readonly ChatMessage[];
  /** The app's tools, offered with each request; undefined: none. */
  tools?: ToolRunner;
  /** Where the tool calls are recorded (with `message`). */
  history: ConversationHistory;
  llm: LlmProvider;
  tts: Pick<TtsProvider, "connect">;
  player: PlayerPort;
  quests: QuestManager;
  /** turn.replyStallMs */
  stallMs: number;
  /**
   * A preemptive reply (turn.preemptive): its LLM and TTS run, but its audio
   * waits here, not in the player, until `release()`. Its LLM request says so
   * (`LlmRequest.speculative`), for the admission queue's count.
   */
  held?: boolean;
  hooks: ReplyHooks;
  now?: () => number;
}

export class Reply {
  readonly generation: number;
  readonly message: AssistantMessage;
  readonly metrics: TurnMetrics;
  /** The TTS's word timings, for the heard-text cut. */
  readonly words: TimedWord[] = [];
  readonly #o: ReplyOptions;
  readonly #now: () => number;
  /** Set once the reply is interrupted or the session stops: nothing more may be sent for it. */
  #cancelled = false;
  #llmDone = false;
  #ttsDone = false;
  #audioWritten = false;
  /** The TTS stream failed: only the words it voiced were heard. */
  #ttsFailed = false;
  #firstAudioByteAt: number | undefined;
  #stallTimer: ReturnType<typeof setTimeout> | undefined;
  /** A tool is running: the stall watchdog waits for it. */
  #toolRunning = false;
  #ttsStream: TtsStream | undefined;
  /** While held: the audio for the player, in order, and whether the TTS ended its generation. */
  #held: { audio: Array<{ pcm: Float32Array | Int16Array; sampleRate: number }>; ended: boolean } | undefined;

  constructor(options: ReplyOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => performance.now());
    this.generation = options.generation;
    this.message = options.message;
    this.metrics = { turn: options.index, speechEndToSttFinalMs: options.sttFinalMs, interrupted: false };
    if (options.held) this.#held = { audio: [], ended: false };
  }

  /**
   * A held reply goes to the player now: what its TTS sent so far first, then
   * the rest as it comes. The turn it answers was decided over now, and its
   * voice ended at `voiceEnd` (the VAD's; undefined: unknown, no voice-to-voice).
   */
  release(decision: { decidedAt: number; voiceEnd: number | undefined }): void {
    const held = this.#held;
    if (!held) return;
    this.#held = undefined;
    this.#o.speechEndAt = decision.decidedAt;
    this.#o.voiceEnd = decision.voiceEnd;
    for (const { pcm, sampleRate } of held.audio) this.#o.player.write(pcm, { sampleRate, generation: this.generation });
    if (held.ended) this.#o.player.endGeneration(this.generation);
  }

  /** Opens the TTS first, so its connection is opening while the LLM thinks. */
  async start(): Promise<void> {
    this.#watchStall();
    const { tts, quests } = this.#o;
    const ttsQuest = new Quest<TtsStream>(
      "tts",
      (signal) => tts.connect(signal),
      (stream, signal) => this.#runTts(stream, signal),
      (stream) => stream.close(),
    );
    const llmQuest = Quest.fromRunStep("llm", (signal) => this.#runLlm(ttsQuest, signal));
    try {
      await quests.add(ttsQuest);
      // The tts add can wait behind the last reply's TTS close (up to its 1 s close wait); a
      // barge-in meanwhile removed an "llm" that was not there yet. Adding it now would start the
      // LLM of a cancelled reply, live into the next turn (test/unit/reply-start-race.test.ts).
      if (this.#cancelled) return;
      await quests.add(llmQuest);
    } catch (err) {
      this.#o.hooks.error(err);
    }
  }

  /**
   * The first sample is audible at `at` (the session's clock) and at
   * `audibleContextTime` (AudioContext s, when the player knows it).
   */
  audible(at: number, audibleContextTime?: number): void {
    this.metrics.speechEndToFirstAudibleMs = at - this.#o.speechEndAt;
    // Both ends on the render thread's clock: no main-thread timer in between.
    const { voiceEnd } = this.#o;
    if (voiceEnd !== undefined && audibleContextTime !== undefined) {
      this.metrics.voiceToVoiceMs = (audibleContextTime - voiceEnd) * 1000;
      this.metrics.voiceEndToDecisionMs = this.metrics.voiceToVoiceMs - this.metrics.speechEndToFirstAudibleMs;
    }
    if (this.#firstAudioByteAt !== undefined) this.metrics.firstAudioByteToAudibleMs = at - this.#firstAudioByteAt;
  }

  /** Keeps in history only what was heard: `heardS` seconds of the reply's audio. */
  cutToHeard(history: ConversationHistory, heardS: number): { heard: string; unheard: string } {
    // A speech-to-speech stream truncates its service's item here, and knows its words' timings only now.
    const timed = this.#cancelled ? undefined : this.#ttsStream?.interrupted?.(heardS);
    if (timed) this.words.splice(0, this.words.length, ...timed);
    this.cancel();
    this.metrics.interrupted = true;
    return history.interrupt(this.message, this.words, heardS);
  }

  /** Nothing more is sent or written for this reply; the watchdog stops. */
  cancel(): void {
    this.#cancelled = true;
    clearTimeout(this.#stallTimer);
  }

  /**
   * Interrupt step 4: closes the TTS socket, then aborts the LLM request.
   * Both removals start now, the TTS's first (its close frame goes out
   * before the abort), and are awaited together: the abort must not wait for
   * the TTS server to answer the close, which takes up to the socket's 1 s
   * close wait when the server is busy synthesising. Awaited in turn, the LLM
   * kept streaming to a cancelled reply meanwhile, and the user's next turn
   * could end with it still live (the soak's leaked quest and socket).
   */
  async removeStreams(): Promise<void> {
    // Cancelled from here on, however it was interrupted: a start() still under way adds nothing more.
    this.cancel();
    const results = await Promise.allSettled([this.#o.quests.remove("tts"), this.#o.quests.remove("llm")]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** The reply played out. Text that a failed TTS never voiced was not heard. */
  finish(history: ConversationHistory): void {
    clearTimeout(this.#stallTimer);
    if (!this.#ttsFailed) return;
    history.interrupt(this.message, this.words, Infinity);
    this.metrics.interrupted = true;
  }

  async #runLlm(ttsQuest: Quest<TtsStream>, signal: AbortSignal): Promise<void> {
    const { hooks, llm } = this.#o;
    const chunker = new WordChunker();
    let tts: TtsStream | undefined;
    const ttsReady = ttsQuest.get().then(
      (stream) => (tts = stream),
      (err) => {
        if (!isAbort(err)) hooks.error(err);
        this.#ttsFailed = true;
        this.#ttsDone = true;
      },
    );
    const pendingWords: string[] = [];
    // Once a send fails the TTS stream has ended: #runTts reports why, once.
    // The reply's text still goes into history, as unheard text: there is no voice for it.
    let ttsGone = false;
    const toTts = (send: (stream: TtsStream) => void) => {
      if (!tts || this.#cancelled || ttsGone) return;
      try {
        send(tts);
      } catch {
        ttsGone = true;
      }
    };
    const speak = (words: string[]) => {
      pendingWords.push(...words);
      toTts((stream) => {
        for (const word of pendingWords.splice(0)) stream.sendText(word);
      });
    };
    const tools = this.#o.tools;
    // No request options at all when there is nothing to say (no tools, not held).
    const options: LlmRequest = {};
    if (tools?.definitions.length) options.tools = tools.definitions;
    if (this.#o.held) options.speculative = true;
    const request: LlmRequest | undefined = Object.keys(options).length ? options : undefined;
    let chat = this.#o.chat;
    try {
      for (let round = 0; ; round++) {
        let calls: ToolCallRequest[] | undefined;
        let said = "";
        for await (const piece of llm.stream(chat, signal, request)) {
          // Interrupted: history already holds only the heard words; later deltas are not the user's to see.
          if (this.#cancelled) return;
          if (typeof piece !== "string") {
            calls = piece.calls;
            continue;
          }
          // A round after a tool call goes on from the words before it.
          const delta = round > 0 && said === "" && /\S$/.test(this.message.text) && /^\S/.test(piece) ? ` ${piece}` : piece;
          said += delta;
          this.metrics.speechEndToFirstTokenMs ??= this.#now() - this.#o.speechEndAt;
          this.#watchStall();
          this.message.text += delta;
          hooks.transcript(this.message.text);
          speak(chunker.push(delta));
        }
        if (!calls?.length || !tools) break;
        if (round >= tools.maxRoundsPerReply) {
          hooks.warning({ service: "tool", message: `the model asked for tools again after ${round} rounds in one reply; the reply ends with what it said (tools.maxRoundsPerReply)` });
          break;
        }
        // What was said before the call is spoken while the tool runs (once the TTS is up, if it is not yet).
        speak(chunker.flush());
        void ttsReady.then(() => speak([]));
        chat = [...chat, { role: "assistant", content: said, toolCalls: calls }, ...(await this.#runTools(tools, calls, signal))];
        if (this.#cancelled) return;
      }
      speak(chunker.flush());
      await ttsReady;
      speak([]);
      toTts((stream) => stream.end());
    } catch (err) {
      if (isAbort(err) || signal.aborted || this.#cancelled) return;
      hooks.error(err);
      // Speak what did arrive; the reply ends there.
      await ttsReady;
      speak(chunker.flush());
      toTts((stream) => stream.end());
    } finally {
      if (!this.#cancelled) this.message.text = this.message.text.trim();
      this.#llmDone = true;
      this.#maybeSilentEnd();
    }
  }

  async #runTools(tools: ToolRunner, calls: readonly ToolCallRequest[], signal: AbortSignal): Promise<ChatMessage[]> {
    this.#toolRunning = true;
    clearTimeout(this.#stallTimer);
    try {
      return await tools.run(calls, this.message, this.#o.history, signal);
    } finally {
      this.#toolRunning = false;
      this.#watchStall();
    }
  }

  async #runTts(stream: TtsStream, signal: AbortSignal): Promise<void> {
    const { player } = this.#o;
    const generation = this.generation;
    this.#ttsStream = stream;
    try {
      for await (const event of stream.events(signal)) {
        this.#watchStall();
        if (event.kind === "audio") {
          if (this.#firstAudioByteAt === undefined) {
            this.#firstAudioByteAt = this.#now();
            this.metrics.speechEndToFirstAudioByteMs = this.#firstAudioByteAt - this.#o.speechEndAt;
          }
          this.#audioWritten = true;
          if (this.#held) this.#held.audio.push({ pcm: event.pcm, sampleRate: event.sampleRate });
          else player.write(event.pcm, { sampleRate: event.sampleRate, generation });
        } else {
          this.words.push({ text: event.text, startS: event.startS, stopS: event.stopS });
        }
      }
    } catch (err) {
      if (isAbort(err) || signal.aborted || this.#cancelled) return;
      this.#ttsFailed = true;
      this.#o.hooks.error(err);
    }
    this.#ttsDone = true;
    if (this.#held) this.#held.ended = true;
    else player.endGeneration(generation);
    this.#maybeSilentEnd();
  }

  /**
   * (Re)arms the stall watchdog while the LLM or the TTS is still producing;
   * once both are done, only playback is left and it is disarmed.
   */
  #watchStall(): void {
    clearTimeout(this.#stallTimer);
    if (this.#cancelled || this.#toolRunning || (this.#llmDone && this.#ttsDone)) return;
    const ms = this.#o.stallMs;
    this.#stallTimer = setTimeout(() => {
      if (this.#cancelled) return;
      const service = this.#llmDone ? "tts" : "llm";
      const message = `the ${service.toUpperCase()} sent nothing for ${ms} ms while the reply was not complete; the reply was cut off (turn.replyStallMs)`;
      this.#o.hooks.stalled({ service, message });
    }, ms);
  }

  #maybeSilentEnd(): void {
    this.#watchStall();
    if (this.#llmDone && this.#ttsDone && !this.#audioWritten && !this.#cancelled) this.#o.hooks.silentEnd();
  }
}
