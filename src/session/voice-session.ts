/**
 * VoiceSession: one voice conversation. It owns the turn state machine, the
 * history, and a QuestManager holding the remote streams: "stt" for the whole
 * session, "llm" and "tts" per reply. Audio and voice activity come in through
 * the narrow ports of session/ports.ts; the session never touches a sample.
 *
 * Barge-in: while the bot speaks, the VAD's speech start pauses playback (the
 * VAD worker does it itself, with no main-thread hop, when it can). The VAD's
 * speechRealStart (`bargeIn.minSpeechMs` of speech frames, counted in audio
 * time by the worker, so a busy main thread cannot stretch it) or an STT word
 * confirms the interruption, and `interrupt()` runs its four steps in order; a
 * misfire resumes playback from where it paused.
 */
import { AudioContextError, ConfigError, MicrophoneError, OverloadError } from "../errors.js";
import type { LlmProvider, SttStream, TtsStream } from "../providers/types.js";
import { Quest } from "../quest/quest.js";
import { QuestManager } from "../quest/quest-manager.js";
import { LlmAdmission } from "../uplink/admission.js";
import { Uplink, type UplinkMetrics } from "../uplink/uplink.js";
import { isAbort } from "../util/abort.js";
import { Emitter, type Listener } from "../util/emitter.js";
import { ConversationHistory, type AssistantMessage, type HistoryMessage, type TimedWord, type UserMessage } from "./history.js";
import { createComponents } from "./components.js";
import { SpeechReplay } from "./speech-replay.js";
import type { CapturePort, PlayerPort, VadPort } from "./ports.js";
import type {
  SessionMetrics,
  SessionState,
  TurnMetrics,
  VoiceSessionEvents,
  VoiceSessionOptions,
} from "./types.js";
import { WordChunker } from "./word-chunker.js";

/** The parts a session runs on; made in the browser by session/components.ts. */
export interface SessionComponents {
  player: PlayerPort;
  vad: VadPort;
  capture: CapturePort;
  /** Releases the microphone, the worker and the worklets. */
  dispose(): Promise<void>;
}

/** Builds the session's components. @internal Tests pass scripted ones. */
export type ComponentsFactory = (
  options: VoiceSessionOptions,
  context: { sttFormat: VoiceSessionOptions["stt"]["audioFormat"]; signal: AbortSignal },
) => Promise<SessionComponents>;

/** The "stt" quest's resource: the stream and its one sender. */
interface SttLink {
  stream: SttStream;
  uplink: Uplink;
}

/** One reply of the bot, from the LLM request to the last audible sample. */
interface BotTurn {
  index: number;
  generation: number;
  message: AssistantMessage;
  words: TimedWord[];
  speechEndAt: number;
  metrics: TurnMetrics;
  firstAudioByteAt?: number;
  audioWritten: boolean;
  llmDone: boolean;
  ttsDone: boolean;
  started: boolean;
  /** Set by interrupt() before its streams are removed: nothing more may be sent for it. */
  cancelled: boolean;
  /** The TTS stream failed: only the words it voiced were heard. */
  ttsFailed?: boolean;
  /** The reply-stall watchdog (turn.replyStallMs), re-armed by every LLM delta and TTS event. */
  stallTimer?: ReturnType<typeof setTimeout>;
}

/** Uplink metrics that count events over the whole session, across STT reconnects. */
const UPLINK_COUNTS = ["admissionRejects", "wouldReject", "gapSamples", "overloads"] as const;

const DEFAULTS = {
  replayMs: 3000,
  pauseThreshold: 0.8,
  flushTimeoutMs: 1500,
  replyStallMs: 8000,
};

/**
 * STT reconnects allowed within STT_RECONNECT_WINDOW_MS. A service that fails
 * every stream at once (malformed messages, a broken deployment) would
 * otherwise be reconnected to in a tight loop for ever; past this the session
 * reports the error as fatal and stops cleanly.
 */
const STT_MAX_RECONNECTS = 3;
const STT_RECONNECT_WINDOW_MS = 10_000;

export class VoiceSession {
  readonly #options: VoiceSessionOptions;
  readonly #makeComponents: ComponentsFactory | undefined;
  readonly #admission: LlmAdmission;
  readonly #llm: LlmProvider;
  readonly #events = new Emitter<VoiceSessionEvents>();
  readonly #history = new ConversationHistory();
  #state: SessionState = "idle";
  #controller: AbortController | undefined;
  #quests: QuestManager | undefined;
  #components: SessionComponents | undefined;
  #unsubscribe: Array<() => void> = [];

  #generation = 0;
  #turnCount = 0;
  #interruptions = 0;
  /** Spans the browser skipped the capture for (see CapturePort "gap"), over the session. */
  readonly #captureGaps = { count: 0, ms: 0 };
  #lastTurn: TurnMetrics | undefined;
  #turn: BotTurn | undefined;
  #userWords: string[] = [];
  #vadSpeaking = false;
  #endingUserTurn = false;
  /**
   * A barge-in that paused playback and waits for confirmation or a misfire.
   * `words`: how many user words there were before it, so that words the STT
   * found in a misfire (a cough, a bump) do not become a turn.
   */
  #bargeIn: { startedAt: number; words: number } | undefined;
  #stopping: Promise<void> | undefined;
  #meterTimer: ReturnType<typeof setInterval> | undefined;
  /** Resolved when #runStt has handled a marker, i.e. every word before it. */
  #markerSeen: Array<() => void> = [];
  /**
   * Set when a turn ended without the STT confirming its last words in time:
   * words that still arrive before that flush's marker belong to this message,
   * not to a new turn.
   */
  #lateWordsTo: UserMessage | undefined;
  #level = 0;
  /** When each recent STT reconnect happened (performance.now()), for the reconnect limit. */
  #sttReconnects: number[] = [];
  /** Audio the STT has not confirmed as words yet, for a new stream after a failure (uplink.replayMs). */
  readonly #replay: SpeechReplay;
  /** uplink.replayMs, read once: 0 means nothing is recorded for replay. */
  readonly #replayMs: number;
  /** Set by a reconnect after a stream failure: the next stream starts with the replay. */
  #replayOnConnect = false;
  /** performance.now() of the VAD's last speech start or end, to tell whether there is speech to replay. */
  #lastSpeechAt = -Infinity;

  constructor(options: VoiceSessionOptions, internal?: { components?: ComponentsFactory }) {
    for (const key of ["stt", "llm", "tts"] as const) {
      if (!options?.[key]) throw new ConfigError(`VoiceSession: the \`${key}\` provider is required`);
    }
    const minSpeechMs = options.bargeIn?.minSpeechMs;
    if (minSpeechMs !== undefined && !(minSpeechMs >= 0)) {
      throw new ConfigError(`VoiceSession: \`bargeIn.minSpeechMs\` must be a number ≥ 0, not ${minSpeechMs}`);
    }
    this.#options = options;
    this.#makeComponents = internal?.components;
    this.#admission = new LlmAdmission(options.llmAdmission);
    this.#replayMs = Math.max(0, options.uplink?.replayMs ?? DEFAULTS.replayMs);
    this.#replay = new SpeechReplay(options.stt.audioFormat.sampleRate, this.#replayMs / 1000);
    this.#llm = this.#admission.wrap(options.llm);
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<K extends keyof VoiceSessionEvents & string>(name: K, fn: Listener<VoiceSessionEvents[K]>): () => void {
    return this.#events.on(name, fn);
  }

  get state(): SessionState {
    return this.#state;
  }

  /** The conversation as the user experienced it. */
  get history(): readonly HistoryMessage[] {
    return this.#history.messages;
  }

  get metrics(): SessionMetrics {
    return {
      turns: this.#turnCount,
      interruptions: this.#interruptions,
      lastTurn: this.#lastTurn,
      // An uplink that ended itself stays visible (its rejects) until the new stream is up.
      uplink: this.#uplinkMetrics(),
      sttReplayedSamples: this.#replayedSamples,
      captureGaps: { ...this.#captureGaps },
      llm: this.#admission.metrics,
    };
  }

  /** Names of the remote streams open now ("stt", "llm", "tts"). */
  get liveQuests(): string[] {
    return this.#quests?.names ?? [];
  }

  /**
   * Opens the microphone, loads the VAD, connects the STT, and resolves once
   * the STT is ready and the session listens. On failure everything opened so
   * far is released and the error is thrown.
   */
  async start(): Promise<void> {
    if (this.#state !== "idle" || this.#controller) throw new Error("VoiceSession.start(): the session is already started");
    this.#controller = new AbortController();
    const signal = this.#controller.signal;
    this.#quests = new QuestManager(signal);
    try {
      const make = this.#makeComponents ?? createComponents;
      const components = await make(this.#options, { sttFormat: this.#options.stt.audioFormat, signal });
      this.#components = components;
      this.#wire(components);
      for (const provider of [this.#options.stt, this.#options.llm, this.#options.tts]) {
        const off = provider.on?.("warning", (w) => this.#events.emit("warning", { service: w.service, message: w.message, cause: w.cause }));
        if (off) this.#unsubscribe.push(off);
      }
      await this.#connectStt();
      this.#releaseOnHide();
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.#setState("listening");
  }

  /**
   * With `releaseMicOnHide` (default on), a page that is hidden (tab switched,
   * phone locked) or unloaded stops the session: the microphone is released at
   * once instead of staying open in the background, and the sockets close.
   */
  #releaseOnHide(): void {
    if (this.#options.releaseMicOnHide === false || typeof document === "undefined") return;
    const onHide = (event: Event) => {
      if (event.type === "visibilitychange" && document.visibilityState !== "hidden") return;
      if (this.#controller?.signal.aborted) return;
      this.#events.emit("warning", {
        service: "session",
        message: "the page was hidden, so the session stopped and released the microphone (releaseMicOnHide); call start() again to resume",
      });
      void this.stop();
    };
    document.addEventListener("visibilitychange", onHide);
    globalThis.addEventListener("pagehide", onHide);
    this.#unsubscribe.push(() => {
      document.removeEventListener("visibilitychange", onHide);
      globalThis.removeEventListener("pagehide", onHide);
    });
  }

  /** Ends the conversation and releases everything. Safe to call more than once. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stopOnce();
    return this.#stopping;
  }

  async #stopOnce(): Promise<void> {
    this.#cancelBargeIn();
    this.#keepUnfinishedUserTurn();
    this.#keepHeardPartOfReply();
    clearTimeout(this.#turn?.stallTimer);
    clearInterval(this.#meterTimer);
    this.#controller?.abort();
    for (const off of this.#unsubscribe.splice(0)) off();
    try {
      await this.#quests?.dispose();
    } catch (err) {
      this.#emitError(err, false);
    }
    await this.#components?.dispose();
    this.#components = undefined;
    this.#turn = undefined;
    this.#setState("idle");
  }

  /**
   * Words the user said in a turn that never ended (stop() or a fatal error
   * came first) are part of the conversation: they go into the history as a
   * final user message instead of being dropped.
   */
  #keepUnfinishedUserTurn(): void {
    const text = this.#userWords.join(" ").trim();
    this.#userWords = [];
    if (!text) return;
    this.#history.addUser(text);
    this.#events.emit("transcript", { role: "user", text, final: true });
  }

  /**
   * A reply cut off by stop() or a fatal error: the history keeps only what
   * was heard (`interrupted: true`, the rest in `unheardText`), as after a
   * barge-in. No `interruption` event: the session is ending, not turning.
   */
  #keepHeardPartOfReply(): void {
    const turn = this.#turn;
    if (!turn || turn.cancelled || !this.#components) return;
    turn.cancelled = true;
    this.#cutToHeard(turn);
    turn.metrics.interrupted = true;
    this.#events.emit("transcript", { role: "assistant", text: turn.message.text, final: true });
  }

  /**
   * Stops the bot's reply now (a stop button): keeps what was heard, silences
   * playback, fences its audio off and cancels the LLM and TTS streams.
   */
  interrupt(): Promise<void> {
    return this.#interrupt("api");
  }

  // ─── wiring ───────────────────────────────────────────────────────────────

  #wire({ player, vad, capture }: SessionComponents): void {
    this.#unsubscribe.push(
      vad.on("speechStart", (e) => this.#onSpeechStart(e.pausedPlayback, e.contextTime)),
      vad.on("speechRealStart", (e) => {
        this.#events.emit("vad", { kind: "speechRealStart", direct: false, contextTime: e.contextTime });
        if (this.#bargeIn) this.#confirmBargeIn("speech");
      }),
      vad.on("misfire", (e) => this.#onMisfire(e.resumedPlayback, e.contextTime)),
      vad.on("speechEnd", (e) => this.#onSpeechEnd(e.contextTime)),
      player.on("started", (e) => this.#onPlaybackStarted(e.generation, e.at)),
      player.on("ended", (e) => this.#onPlaybackEnded(e.generation)),
      capture.on("frame", (e) => this.#sendAudio(e.pcm)),
      capture.on("gap", (e) => {
        this.#captureGaps.count++;
        this.#captureGaps.ms += e.ms;
      }),
      // Without the microphone or the VAD there is no conversation: end it
      // cleanly (the transcript so far is kept) and say what to do.
      capture.on("ended", () =>
        this.#fail(
          new MicrophoneError(
            "the microphone stopped while the session was using it (device unplugged, permission revoked, or the input stream ended); the session has stopped: call start() again",
            { reason: "ended" },
          ),
        ),
      ),
      vad.on("error", (e) => this.#fail(e.error)),
      player.on("contextState", (e) => this.#onContextState(e.state)),
    );
    if (this.#options.meter) {
      vad.setMeter(true);
      capture.setMeter(true);
      this.#unsubscribe.push(
        capture.on("level", (e) => (this.#level = e.rms)),
        vad.on("probability", (e) => this.#events.emit("vad", { kind: "meter", probability: e.probability, level: this.#level })),
      );
      this.#meterTimer = setInterval(() => this.#events.emit("metrics", this.metrics), 250);
    }
  }

  /**
   * The AudioContext stopped running: while it is suspended nothing is
   * captured or played, so say so; once it is closed the session cannot go on.
   */
  #onContextState(state: string): void {
    if (state === "closed") {
      this.#fail(new AudioContextError("the AudioContext was closed while the session was using it; the session has stopped: call start() again (with a new context if you passed one in)", { service: "audio" }));
      return;
    }
    this.#events.emit("warning", {
      service: "audio",
      message: `the AudioContext is ${state}: no audio is captured or played until it runs again (a context the session created is resumed by it; one you passed in is yours to resume)`,
    });
  }

  /** Opens (or replaces) the "stt" quest: the stream and the bounded uplink that feeds it. */
  #connectStt(): Promise<void> {
    const { stt } = this.#options;
    const quest = new Quest<SttLink>(
      "stt",
      async (signal) => {
        const stream = await stt.connect(signal);
        this.#lateWordsTo = undefined; // a new stream's words are new speech
        // Synchronous up to the link being in place: every frame is either replayed or pushed.
        this.#replayInto(stream);
        return { stream, uplink: this.#makeUplink(stream) };
      },
      (link, signal) => this.#runStt(link.stream, signal),
      (link) => {
        link.uplink.close();
        return link.stream.close();
      },
    );
    return this.#quests!.add(quest).then((q) => q.get().then(() => {}));
  }

  /**
   * A new stream after a failure starts with the speech the old one had not
   * turned into words, and what the microphone caught while reconnecting
   * (uplink.replayMs). It is one bounded burst, sent before the uplink takes
   * over; the uplink's budget then counts what is still in the socket.
   */
  #replayInto(stream: SttStream): void {
    const wanted = this.#replayOnConnect;
    this.#replayOnConnect = false;
    const recentSpeech = this.#vadSpeaking || performance.now() - this.#lastSpeechAt < this.#replayMs;
    if (!wanted || !recentSpeech) {
      this.#replay.clear();
      return;
    }
    const { frames, reopened } = this.#replay.rebase();
    // The new stream hears that word again: do not count it twice.
    if (reopened && this.#userWords.length > 0) {
      this.#userWords.pop();
      this.#events.emit("transcript", { role: "user", text: this.#userWords.join(" "), final: false });
    }
    let samples = 0;
    for (const pcm of frames) {
      stream.sendAudio(pcm);
      samples += pcm.length;
    }
    this.#replayedSamples += samples;
  }

  /** Samples sent again to new STT streams (uplink.replayMs), over the session. */
  #replayedSamples = 0;

  #makeUplink(stream: SttStream): Uplink {
    const { stt, uplink: options = {} } = this.#options;
    const uplink = new Uplink(stream, {
      sampleRate: stt.audioFormat.sampleRate,
      bytesPerSample: stream.bytesPerSample,
      budgetMs: options.budgetMs,
      policy: options.policy ?? (stt.supportsGap ? "gap" : "end"),
      observe: options.observe,
    });
    uplink.on("overload", (e) => this.#events.emit("overload", { service: "stt", ...e }));
    uplink.on("ended", () => {
      this.#reconnectStt(
        "the speech-to-text uplink fell behind its latency budget; the stream was ended and is reconnecting",
        new OverloadError("stt: the uplink fell behind its latency budget too often; check the network or raise uplink.budgetMs", { service: "stt" }),
      );
    });
    return uplink;
  }

  /** Counts of the session's earlier uplinks (one per STT stream), so reconnects do not reset them. */
  #earlierUplinks: Record<(typeof UPLINK_COUNTS)[number], number> = { admissionRejects: 0, wouldReject: 0, gapSamples: 0, overloads: 0 };
  #lastUplink: Uplink | undefined;

  /**
   * The STT uplink's metrics: queue figures of the live (or, while it
   * reconnects, the last) stream; reject, gap and overload counts for the
   * whole session.
   */
  #uplinkMetrics(): UplinkMetrics | undefined {
    const live = this.#sttLink()?.uplink;
    if (live && live !== this.#lastUplink) {
      if (this.#lastUplink) {
        const done = this.#lastUplink.metrics;
        for (const key of UPLINK_COUNTS) this.#earlierUplinks[key] += done[key];
      }
      this.#lastUplink = live;
    }
    const current = this.#lastUplink?.metrics;
    if (!current) return undefined;
    const totals = { ...current };
    for (const key of UPLINK_COUNTS) totals[key] += this.#earlierUplinks[key];
    return totals;
  }

  #sttLink(): SttLink | undefined {
    return this.#quests?.get<SttLink>("stt")?.getNowait();
  }

  #sendAudio(pcm: Float32Array | Int16Array): void {
    if (this.#replayMs > 0) this.#replay.record(pcm);
    try {
      this.#sttLink()?.uplink.push(pcm);
    } catch {
      // The socket closed under us; #runStt reports it and reconnects.
    }
  }

  // ─── user side ────────────────────────────────────────────────────────────

  async #runStt(stream: SttStream, signal: AbortSignal): Promise<void> {
    const threshold = this.#options.turn?.pauseThreshold ?? DEFAULTS.pauseThreshold;
    try {
      for await (const event of stream.events(signal)) {
        if (event.kind === "word") {
          this.#replay.word(event.startS);
          this.#onUserWord(event.text);
        } else if (event.kind === "word-end") this.#replay.wordEnd(event.stopS);
        else if (event.kind === "marker") {
          this.#lateWordsTo = undefined;
          for (const seen of this.#markerSeen.splice(0)) seen();
        }
        else if (event.kind === "pause" && event.probability >= threshold) {
          if (this.#userWords.length > 0 && !this.#vadSpeaking && this.#isUserSide()) void this.#endUserTurn();
        }
      }
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      this.#emitError(err, false);
      // Replace ourselves with a fresh connection; the user's words so far are
      // kept, and the speech not yet turned into words is replayed to it.
      this.#replayOnConnect = true;
      this.#reconnectStt("speech-to-text stream ended; reconnecting", err);
    }
  }

  /**
   * Replaces the "stt" quest with a fresh connection, unless it has been
   * replaced STT_MAX_RECONNECTS times in the last STT_RECONNECT_WINDOW_MS:
   * then `fatal` is reported and the session stops.
   */
  #reconnectStt(message: string, fatal: unknown): void {
    const now = performance.now();
    this.#sttReconnects = this.#sttReconnects.filter((t) => now - t < STT_RECONNECT_WINDOW_MS);
    if (this.#sttReconnects.length >= STT_MAX_RECONNECTS) {
      this.#fail(fatal);
      return;
    }
    this.#sttReconnects.push(now);
    this.#events.emit("warning", { service: "stt", message, cause: fatal });
    this.#connectStt().catch((e) => this.#fail(e));
  }

  #isUserSide(): boolean {
    return this.#state === "listening" || this.#state === "user_speaking";
  }

  #onUserWord(text: string): void {
    const late = this.#lateWordsTo;
    if (late) {
      // The end of the last turn's speech, after its flush timed out: keep it there.
      late.text = `${late.text} ${text}`;
      this.#events.emit("transcript", { role: "user", text: late.text, final: true });
      return;
    }
    this.#userWords.push(text);
    this.#events.emit("transcript", { role: "user", text: this.#userWords.join(" "), final: false });
    if (this.#bargeIn && (this.#options.bargeIn?.confirmByWords ?? true)) this.#confirmBargeIn("words");
  }

  #onSpeechStart(pausedPlayback: boolean, contextTime: number): void {
    this.#vadSpeaking = true;
    this.#lastSpeechAt = performance.now();
    this.#events.emit("vad", { kind: "speechStart", direct: pausedPlayback, contextTime });
    const botHasFloor = this.#state === "bot_speaking" || this.#state === "bot_thinking";
    if (botHasFloor && this.#turn && this.#options.bargeIn?.enabled !== false) {
      // Pause now (unless the VAD worker already did); confirm on the VAD's
      // speechRealStart (bargeIn.minSpeechMs of speech frames) or an STT word.
      if (!pausedPlayback) this.#components!.player.pause();
      this.#bargeIn = { startedAt: performance.now(), words: this.#userWords.length };
      return;
    }
    // The worker paused playback on its own (auto-pause), but there is no reply
    // to barge into: its pause raced the disarm, after the turn ended. Undo it,
    // or the next reply would be written to a paused player and never heard.
    if (pausedPlayback) this.#components!.player.resume();
    if (this.#state === "listening") this.#setState("user_speaking");
  }

  #onMisfire(resumedPlayback: boolean, contextTime: number): void {
    this.#vadSpeaking = false;
    this.#events.emit("vad", { kind: "misfire", direct: resumedPlayback, contextTime });
    if (this.#bargeIn) {
      this.#userWords.length = this.#bargeIn.words;
      this.#cancelBargeIn();
      if (!resumedPlayback) this.#components!.player.resume();
    } else if (this.#state === "user_speaking" && this.#userWords.length === 0) {
      this.#setState("listening");
    }
  }

  #onSpeechEnd(contextTime: number): void {
    this.#vadSpeaking = false;
    this.#lastSpeechAt = performance.now();
    this.#events.emit("vad", { kind: "speechEnd", direct: false, contextTime });
    if (this.#bargeIn) this.#confirmBargeIn("speech");
    if (this.#state === "user_speaking") void this.#endUserTurn();
  }

  #cancelBargeIn(): void {
    this.#bargeIn = undefined;
  }

  #confirmBargeIn(reason: "speech" | "words"): void {
    const pending = this.#bargeIn;
    if (!pending) return;
    this.#cancelBargeIn();
    void this.#interrupt(reason, performance.now() - pending.startedAt);
  }

  /** The user's turn is over: get the STT's last words, then reply. */
  async #endUserTurn(): Promise<void> {
    if (this.#endingUserTurn) return;
    this.#endingUserTurn = true;
    const speechEndAt = performance.now();
    let flushMissed = false;
    try {
      const stream = this.#sttLink()?.stream;
      if (stream) {
        const timeout = AbortSignal.timeout(this.#options.turn?.flushTimeoutMs ?? DEFAULTS.flushTimeoutMs);
        const signal = AbortSignal.any([timeout, this.#controller!.signal]);
        // The provider's flush resolves when the marker arrives; the words before
        // it are handled once our own loop reaches the marker event too.
        const handled = new Promise<void>((resolve, reject) => {
          this.#markerSeen.push(resolve);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
        await Promise.all([stream.flush(signal), handled]).catch((err) => {
          flushMissed = true;
          if (!this.#controller?.signal.aborted) {
            this.#events.emit("warning", { service: "stt", message: "the STT did not confirm its last words in time; replying with what it returned", cause: err });
          }
        });
      }
      if (this.#controller?.signal.aborted) return;
      const text = this.#userWords.join(" ").trim();
      this.#userWords = [];
      if (!text) {
        if (this.#isUserSide()) this.#setState(this.#vadSpeaking ? "user_speaking" : "listening");
        return;
      }
      const message = this.#history.addUser(text);
      if (flushMissed) this.#lateWordsTo = message;
      this.#events.emit("transcript", { role: "user", text, final: true });
      await this.#startReply(speechEndAt, performance.now() - speechEndAt);
    } finally {
      this.#endingUserTurn = false;
    }
  }

  // ─── bot side ─────────────────────────────────────────────────────────────

  async #startReply(speechEndAt: number, sttFinalMs: number): Promise<void> {
    const player = this.#components!.player;
    const generation = ++this.#generation;
    player.setGeneration(generation);
    // A new reply starts unpaused, whatever pause from the VAD worker is still in flight.
    player.resume();
    const index = ++this.#turnCount;
    const turn: BotTurn = {
      index,
      generation,
      message: this.#history.addAssistant(),
      words: [],
      speechEndAt,
      metrics: { turn: index, speechEndToSttFinalMs: sttFinalMs, interrupted: false },
      audioWritten: false,
      llmDone: false,
      ttsDone: false,
      started: false,
      cancelled: false,
    };
    this.#turn = turn;
    this.#setState("bot_thinking");
    this.#watchStall(turn);
    const { tts } = this.#options;
    // TTS first, so its connection is opening while the LLM thinks.
    const ttsQuest = new Quest<TtsStream>(
      "tts",
      (signal) => tts.connect(signal),
      (stream, signal) => this.#runTts(turn, stream, signal),
      (stream) => stream.close(),
    );
    const llmQuest = Quest.fromRunStep("llm", (signal) => this.#runLlm(turn, ttsQuest, signal));
    try {
      await this.#quests!.add(ttsQuest);
      await this.#quests!.add(llmQuest);
    } catch (err) {
      this.#emitError(err, false);
    }
  }

  async #runLlm(turn: BotTurn, ttsQuest: Quest<TtsStream>, signal: AbortSignal): Promise<void> {
    const chunker = new WordChunker();
    let tts: TtsStream | undefined;
    const ttsReady = ttsQuest.get().then(
      (stream) => (tts = stream),
      (err) => {
        if (!isAbort(err)) this.#emitError(err, false);
        turn.ttsFailed = true;
        turn.ttsDone = true;
      },
    );
    const pendingWords: string[] = [];
    // Once a send fails the TTS stream has ended: #runTts reports why, once.
    // The reply's text still goes into history, as unheard text: there is no voice for it.
    let ttsGone = false;
    const toTts = (send: (stream: TtsStream) => void) => {
      if (!tts || turn.cancelled || ttsGone) return;
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
    try {
      const messages = this.#history.toChat(this.#options.instructions);
      for await (const delta of this.#llm.stream(messages, signal)) {
        // Interrupted: history already holds only the heard words; later deltas are not the user's to see.
        if (turn.cancelled) return;
        if (turn.metrics.speechEndToFirstTokenMs === undefined) {
          turn.metrics.speechEndToFirstTokenMs = performance.now() - turn.speechEndAt;
        }
        this.#watchStall(turn);
        turn.message.text += delta;
        this.#events.emit("transcript", { role: "assistant", text: turn.message.text, final: false });
        speak(chunker.push(delta));
      }
      speak(chunker.flush());
      await ttsReady;
      speak([]);
      toTts((stream) => stream.end());
    } catch (err) {
      if (isAbort(err) || signal.aborted || turn.cancelled) return;
      this.#emitError(err, false);
      // Speak what did arrive; the reply ends there.
      await ttsReady;
      speak(chunker.flush());
      toTts((stream) => stream.end());
    } finally {
      if (!turn.cancelled) turn.message.text = turn.message.text.trim();
      turn.llmDone = true;
      this.#maybeFinish(turn);
    }
  }

  async #runTts(turn: BotTurn, stream: TtsStream, signal: AbortSignal): Promise<void> {
    const player = this.#components!.player;
    try {
      for await (const event of stream.events(signal)) {
        this.#watchStall(turn);
        if (event.kind === "audio") {
          if (turn.firstAudioByteAt === undefined) {
            turn.firstAudioByteAt = performance.now();
            turn.metrics.speechEndToFirstAudioByteMs = turn.firstAudioByteAt - turn.speechEndAt;
          }
          turn.audioWritten = true;
          player.write(event.pcm, { sampleRate: event.sampleRate, generation: turn.generation });
        } else {
          turn.words.push({ text: event.text, startS: event.startS, stopS: event.stopS });
        }
      }
    } catch (err) {
      if (isAbort(err) || signal.aborted || turn.cancelled) return;
      turn.ttsFailed = true;
      this.#emitError(err, false);
    }
    turn.ttsDone = true;
    player.endGeneration(turn.generation);
    this.#maybeFinish(turn);
  }

  #onPlaybackStarted(generation: number, at: number): void {
    const turn = this.#turn;
    if (!turn || turn.generation !== generation || turn.started) return;
    turn.started = true;
    turn.metrics.speechEndToFirstAudibleMs = at - turn.speechEndAt;
    if (turn.firstAudioByteAt !== undefined) turn.metrics.firstAudioByteToAudibleMs = at - turn.firstAudioByteAt;
    if (this.#state === "bot_thinking") this.#setState("bot_speaking");
    this.#components!.vad.setAutoPause(this.#options.bargeIn?.enabled !== false);
  }

  #onPlaybackEnded(generation: number): void {
    const turn = this.#turn;
    if (!turn || turn.generation !== generation) return;
    this.#finish(turn);
  }

  /**
   * (Re)arms the reply's stall watchdog while its LLM or TTS is still
   * producing; once both are done, only playback is left and it is disarmed.
   */
  #watchStall(turn: BotTurn): void {
    clearTimeout(turn.stallTimer);
    if (turn.cancelled || (turn.llmDone && turn.ttsDone)) return;
    const ms = this.#options.turn?.replyStallMs ?? DEFAULTS.replyStallMs;
    turn.stallTimer = setTimeout(() => {
      if (this.#turn !== turn) return;
      const service = turn.llmDone ? "tts" : "llm";
      this.#events.emit("warning", {
        service,
        message: `the ${service.toUpperCase()} sent nothing for ${ms} ms while the reply was not complete; the reply was cut off (turn.replyStallMs)`,
      });
      void this.#interrupt("stall");
    }, ms);
  }

  /** A reply with no audio (the TTS failed) ends once both streams are done. */
  #maybeFinish(turn: BotTurn): void {
    this.#watchStall(turn);
    if (turn.llmDone && turn.ttsDone && !turn.audioWritten && this.#turn === turn) this.#finish(turn);
  }

  #finish(turn: BotTurn): void {
    if (this.#turn !== turn) return;
    clearTimeout(turn.stallTimer);
    this.#turn = undefined;
    this.#cancelBargeIn();
    this.#components?.vad.setAutoPause(false);
    // Everything voiced has played out; text the failed TTS never voiced was not heard.
    if (turn.ttsFailed) {
      this.#history.interrupt(turn.message, turn.words, Infinity);
      turn.metrics.interrupted = true;
    }
    this.#events.emit("transcript", { role: "assistant", text: turn.message.text, final: true });
    this.#reportTurn(turn);
    if (this.#state !== "idle") this.#setState(this.#vadSpeaking ? "user_speaking" : "listening");
  }

  async #interrupt(reason: "speech" | "words" | "api" | "stall", speechStartToConfirmMs?: number): Promise<void> {
    const turn = this.#turn;
    if (!turn || !this.#components) return;
    this.#turn = undefined;
    turn.cancelled = true;
    clearTimeout(turn.stallTimer);
    this.#cancelBargeIn();
    const { player, vad } = this.#components;
    // 1. History keeps what was heard.
    const { heardS, split } = this.#cutToHeard(turn);
    // 2. Silence now. 3. Fence off anything of this turn still on its way.
    player.flush();
    this.#generation++;
    player.setGeneration(this.#generation);
    player.resume();
    vad.setAutoPause(false);
    turn.metrics.interrupted = true;
    this.#interruptions++;
    this.#events.emit("interruption", {
      reason,
      heardText: split.heard,
      unheardText: split.unheard,
      heardMs: heardS * 1000,
      speechStartToConfirmMs,
    });
    this.#events.emit("transcript", { role: "assistant", text: turn.message.text, final: true });
    const byUser = reason === "speech" || reason === "words";
    this.#setState(byUser ? "user_speaking" : this.#vadSpeaking ? "user_speaking" : "listening");
    // 4. Close the TTS socket, then abort the LLM request.
    try {
      await this.#quests!.remove("tts");
      await this.#quests!.remove("llm");
    } catch (err) {
      this.#emitError(err, false);
    }
    this.#reportTurn(turn);
  }

  /** Cuts the turn's history message to what was heard: rendered audio less what is still in the output path. */
  #cutToHeard(turn: BotTurn): { heardS: number; split: { heard: string; unheard: string } } {
    const player = this.#components!.player;
    const heardS = Math.max(0, player.renderedSeconds() - player.outputLatency);
    return { heardS, split: this.#history.interrupt(turn.message, turn.words, heardS) };
  }

  #reportTurn(turn: BotTurn): void {
    this.#lastTurn = { ...turn.metrics };
    this.#events.emit("turn", this.#lastTurn);
    this.#events.emit("metrics", this.metrics);
  }

  // ─── plumbing ─────────────────────────────────────────────────────────────

  #setState(state: SessionState): void {
    if (state === this.#state) return;
    const previous = this.#state;
    this.#state = state;
    this.#events.emit("state", { state, previous });
  }

  #emitError(err: unknown, fatal: boolean): void {
    const error = err instanceof Error ? err : new Error(String(err));
    this.#events.emit("error", { error, fatal });
  }

  /** A failure the session cannot continue after: report it and stop cleanly. */
  #fail(err: unknown): void {
    if (this.#controller?.signal.aborted) return;
    this.#emitError(err, true);
    void this.stop();
  }
}
