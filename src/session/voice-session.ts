/**
 * VoiceSession: one voice conversation. It is the interpreter of the pure
 * turn machine (session/turn-machine.ts): it turns what the VAD, the STT link
 * and the player report into TurnEvents, and has the machine's effects carried
 * out in order (TurnEffects, session/turn-effects.ts: calls on the parts and the
 * app's events). It owns the I/O the cores must not touch: the
 * components (session/ports.ts), the QuestManager with the remote streams
 * ("stt" for the session, in SttLink; "llm" and "tts" per reply, in Reply),
 * the history and the timers.
 *
 * Who owns which decision:
 * - who has the floor, when a turn ends, when a barge-in pauses, confirms or
 *   misfires, and the order of an interruption: the turn machine (with the
 *   barge-in core, session/barge-in.ts);
 * - the pause of playback: the playback worklet, by token (a reply's
 *   generation); the session and the VAD worker only ask;
 * - reconnects of the STT: SttLink, under a ReconnectPolicy;
 * - the reply's streams and its stall watchdog: Reply.
 */
import { BargeinError, ConfigError, StateError } from "../errors.js";
import { QuestManager } from "../quest/quest-manager.js";
import { LlmAdmission } from "../providers/llm-admission.js";
import { MessageSocket } from "../providers/message-socket.js";
import { EventSource } from "../util/emitter.js";
import { createComponents } from "./components.js";
import { ConversationHistory, type HistoryMessage } from "./history.js";
import { UserMessages } from "./user-messages.js";
import { checkComponents, type ComponentsFactory, type LoadProgressEvent, type SessionComponents } from "./ports.js";
import { backoffReconnectPolicy } from "./reconnect-policy.js";
import { ReplySlot } from "./reply-slot.js";
import type { TurnTiming } from "./reply.js";
import { SessionCounters } from "./session-metrics.js";
import { SttOrder, askVad, forwardWarnings, onSttEvent, wireComponents, wireMeter, type InputSink } from "./session-inputs.js";
import { RecentBotWords } from "./echo-words.js";
import { SttLink } from "./stt-link.js";
import { MicMute } from "./mic-mute.js";
import { SessionDevices, readLevels } from "./session-devices.js";
import type { AudioLevels } from "./device-types.js";
import { TranscriptFeed } from "./transcript-feed.js";
import { ToolRunner } from "./tool-runner.js";
import { INITIAL_TURN_STATE, step, type TurnConfig, type TurnEvent, type TurnState } from "./turn-machine.js";
import { TurnEffects } from "./turn-effects.js";
import { onsetAgeS } from "./onset-age.js";
import { floorFree, presentedState } from "./floor.js";
import { presentedDegraded } from "./vad-source.js";
import type { SessionMetrics, SessionState, ToolHandler, VoiceSessionEvents, VoiceSessionOptions } from "./types.js";
import { stopWhenHidden } from "./page-lifecycle.js";
import { checkSessionOptions, turnConfigOf, type ResolvedSessionOptions } from "./session-options.js";

export type { ComponentsFactory, SessionComponents } from "./ports.js";

export class VoiceSession extends EventSource<VoiceSessionEvents> {
  readonly #options: ResolvedSessionOptions;
  readonly #makeComponents: ComponentsFactory;
  readonly #admission: LlmAdmission;
  readonly #config: TurnConfig;
  readonly #mute: MicMute;
  readonly #history = new ConversationHistory();
  readonly #counters = new SessionCounters();
  readonly #transcripts = new TranscriptFeed();
  readonly #devices = new SessionDevices({ events: this.emitter, components: () => this.#components, fail: (err) => this.#fail(err) });
  /** The app's tools and their handlers; undefined without the `tools` option. */
  readonly #tools: ToolRunner | undefined;
  #turn: TurnState = INITIAL_TURN_STATE;
  /** The state last announced with a `state` event. */
  #announced: SessionState = "idle";
  #controller: AbortController | undefined;
  #quests: QuestManager | undefined;
  #components: SessionComponents | undefined;
  /** The AudioContext time (s) at the end of the newest captured frame; undefined until one came in this start(). */
  #capturedUntil: number | undefined;
  #stt: SttLink | undefined;
  #unsubscribe: Array<() => void> = [];
  #stopping: Promise<void> | undefined;
  /** The reply that holds the floor, until it finishes or its streams are cancelled. */
  readonly #replies: ReplySlot;
  /** The user's messages and their transcript events. */
  readonly #userMessages = new UserMessages(this.#history, this.#transcripts, (event) => this.emit("transcript", event));
  /** When the user's turn was decided over, how long the STT took to confirm it, and where the voice ended. */
  #turnTiming: TurnTiming = { speechEndAt: 0 };
  /** Carries out the machine's effects; owns its timer. */
  readonly #effects: TurnEffects;

  constructor(given: VoiceSessionOptions) {
    super();
    const options = (this.#options = checkSessionOptions(given));
    this.#makeComponents = options.components ?? ((context) => createComponents(options, context));
    // A speech-to-speech service that takes its tools only at the socket's setup learns them now.
    options.realtime?.configure?.({ tools: options.tools?.definitions ?? [] });
    this.#admission = new LlmAdmission(options.llmAdmission);
    this.#tools = options.tools
      ? new ToolRunner(options.tools, {
          toolCall: (e) => this.emit("toolCall", e),
          toolResult: (e) => this.emit("toolResult", e),
          warning: (e) => this.emit("warning", e),
        })
      : undefined;
    this.#replies = new ReplySlot({
      history: this.#history,
      transcripts: this.#transcripts,
      counters: this.#counters,
      // The bot's recent words, to tell its echo in the STT from the user: only with the echo guard on.
      botWords: options.echoGuard.enabled ? new RecentBotWords(options.echoGuard.wordWindowMs) : undefined,
      events: this.emitter,
      llm: this.#admission.wrap(options.llm),
      tts: options.tts,
      instructions: options.instructions,
      tools: this.#tools,
      stallMs: options.turn.replyStallMs,
      dispatch: (event) => this.#dispatch(event),
      error: (err) => this.#emitError(err, false),
      metrics: () => this.metrics,
    });
    this.#effects = new TurnEffects({
      events: this.emitter,
      replies: this.#replies,
      userMessages: this.#userMessages,
      counters: this.#counters,
      countEchoWords: options.echoGuard.enabled,
      components: () => this.#components,
      quests: () => this.#quests,
      turnTiming: () => this.#turnTiming,
      dispatch: (event) => this.#dispatch(event),
      announce: (state) => this.#announce(state),
      endUserTurn: (voiceEnd) => void this.#endUserTurn(voiceEnd),
    });
    this.#config = turnConfigOf(options);
    if (options.history) {
      this.#transcripts.reserve(options.history.map((m) => m?.id ?? ""));
      this.#history.seed(options.history, (role) => this.#transcripts.newId(role));
    }
    this.#mute = new MicMute(this.#config.pushToTalk);
  }

  get state(): SessionState {
    return presentedState(this.#turn);
  }

  /** True while the session listens before the VAD's model is ready, on its level fallback (`vad.waitForModel`). */
  get degraded(): boolean {
    return presentedDegraded(this.#turn);
  }

  /** The conversation as the user experienced it. */
  get history(): readonly HistoryMessage[] {
    return this.#history.messages;
  }

  get metrics(): SessionMetrics {
    return this.#counters.snapshot({
      // An uplink that ended itself stays visible (its rejects) until the new stream is up.
      uplink: this.#stt?.uplinkMetrics,
      sttReplayedSamples: this.#stt?.replayedSamples ?? 0,
      llm: this.#admission.metrics,
      mic: this.#mute.snapshot(performance.now()),
      devices: this.#devices.metrics,
    });
  }

  /** Whether the microphone is muted (`mute()`). */
  get muted(): boolean {
    return this.#mute.muted;
  }

  /** Mutes the microphone: it sends silence (MicMute), so the VAD and the STT hear nothing; the track stays open. Emits `mute`. */
  mute(): void {
    this.#setMuted(true);
  }

  /** Unmutes the microphone, from the next render quantum. Emits `mute`. */
  unmute(): void {
    this.#setMuted(false);
  }

  /** Push-to-talk (`turn.mode`): the button went down; the microphone opens. Speech over the bot barges in as usual. */
  startTurn(): void {
    this.#push("startTurn", true);
  }

  /** Push-to-talk: the button went up; the microphone closes and the turn's words get a reply. */
  endTurn(): void {
    this.#push("endTurn", false);
  }

  /** A user turn typed instead of spoken, on the same reply path; over the bot it interrupts (reason "text"). */
  sendText(text: string): void {
    if (typeof text !== "string" || !text.trim()) throw new ConfigError("VoiceSession.sendText(): give the text of the user's turn, a non-empty string");
    this.#requireListening("sendText");
    // A typed turn: its clock starts now, with no STT and no voice to measure from.
    this.#turnTiming = { speechEndAt: performance.now() };
    this.#dispatch({ kind: "text", text });
  }

  /**
   * Answers the model's calls of tool `name` (one of `tools.definitions`):
   * see ToolHandler. Returns the function that removes the handler. Allowed
   * before start(); a call with no handler is answered with an error.
   */
  handleTool(name: string, handler: ToolHandler): () => void {
    if (!this.#tools) throw new ConfigError("VoiceSession.handleTool(): the session has no tools; give them in the `tools: { definitions }` option");
    return this.#tools.handle(name, handler);
  }

  /** Moves the mic to input `deviceId` (undefined: default) mid-session, or picks it for start() (SessionDevices). */
  setInputDevice(deviceId: string | undefined): Promise<void> {
    return this.#devices.setInput(deviceId);
  }

  /** Plays the bot out of output `deviceId` ("" the default) through AudioContext.setSinkId; before start(), at start. */
  setOutputDevice(deviceId: string): Promise<void> {
    return this.#devices.setOutput(deviceId);
  }

  /** Input and output levels now (dBFS), and bins with `{ bins: true }`: for requestAnimationFrame, no per-frame messages. */
  getLevels(options: { bins?: boolean } = {}): AudioLevels {
    return readLevels(this.#components, options.bins === true);
  }

  /** Names of the remote streams open now ("stt", "llm", "tts"). */
  get liveQuests(): string[] {
    return this.#quests?.names ?? [];
  }

  /**
   * Opens the microphone and the worklets, starts the VAD, connects the STT,
   * and resolves once the STT is ready and the session listens: with
   * `vad.waitForModel` once the VAD's model is ready too, else while it loads
   * (`degraded`). On failure everything opened so far is released and the
   * error is thrown. With the `components` option, its factory makes the
   * audio parts instead (no AudioContext is created).
   */
  async start(): Promise<void> {
    if (this.#turn.phase !== "idle" || this.#controller) throw new StateError("VoiceSession.start(): the session is already started; call stop() first");
    this.#controller = new AbortController();
    this.#dispatch({ kind: "connect" });
    const signal = this.#controller.signal;
    const quests = (this.#quests = new QuestManager(signal));
    try {
      const context = {
        sttFormat: this.#options.stt.audioFormat,
        minSpeechMs: this.#options.bargeIn.minSpeechMs,
        signal,
        inputDeviceId: this.#devices.inputDeviceId,
        onProgress: (e: LoadProgressEvent) => this.emit("progress", e),
      };
      const components = (this.#components = checkComponents(await this.#makeComponents(context)));
      this.#mute.attach(components.capture);
      askVad(components.vad, this.#config);
      this.#stt = new SttLink({
        provider: this.#options.stt,
        quests,
        signal,
        uplink: this.#options.uplink ?? {},
        policy: this.#options.reconnect ?? backoffReconnectPolicy(),
        emit: (e) => onSttEvent(e, this.#inputs, (err) => this.#emitError(err, false)),
        // Heard text only: a reply still playing is left out (its text so far is what was generated, not heard).
        conversation: () => this.#history.toChat(this.#options.instructions, this.#replies.current?.message),
        openTurn: () => (this.#announced === "user_speaking" ? this.#turnOnsetS() : undefined),
        busy: () => !floorFree(this.#turn),
      });
      this.#unsubscribe.push(...wireComponents(components, this.#inputs), ...(await this.#devices.attach(components)));
      if (this.#options.meter) this.#unsubscribe.push(...wireMeter(components, this.#inputs, () => this.metrics));
      this.#unsubscribe.push(...forwardWarnings(this.#options.realtime ? [this.#options.realtime] : [this.#options.stt, this.#options.llm, this.#options.tts], this.emitter));
      await this.#stt.connect();
      if (this.#options.releaseMicOnHide !== false) this.#unsubscribe.push(stopWhenHidden(signal, (w) => this.emit("warning", w), () => this.stop()));
    } catch (err) {
      await this.stop();
      throw err;
    }
    // The level fallback judges until the model's `ready` (wired above, so none is missed).
    this.#dispatch({ kind: "listen", vad: this.#components?.vad.modelReady === false ? "level" : "model" });
  }

  /**
   * Ends the conversation and releases everything. Safe to call more than once. Resolves once every socket is
   * closed; one cancelled while connecting is given up to 1 s to open first (closed connecting, the browser logs an error).
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stopOnce();
    return this.#stopping;
  }

  /**
   * Stops the bot's reply now (a stop button): keeps what was heard, silences
   * playback, fences its audio off and cancels the LLM and TTS streams.
   */
  interrupt(): Promise<void> {
    if (this.#turn.reply.kind !== "playing") return Promise.resolve();
    this.#dispatch({ kind: "interrupt", reason: "api" });
    return this.#replies.cancelling;
  }

  async #stopOnce(): Promise<void> {
    // The words said so far and the heard part of a reply stay in the history.
    this.#dispatch({ kind: "stop" });
    this.#effects.clearTimer();
    const ttsClosed = this.#replies.clear();
    this.#controller?.abort();
    for (const off of this.#unsubscribe.splice(0)) off();
    try {
      await this.#quests?.dispose();
    } catch (err) {
      this.#emitError(err, false);
    }
    await Promise.all([this.#components?.dispose(), ttsClosed.catch((err) => this.#emitError(err, false))]);
    // Last: the sockets cancelled above (and at earlier barge-ins) are recorded by now; a barge-in never waits for them.
    await MessageSocket.settleCancelled();
    this.#components = undefined;
    this.#dispatch({ kind: "stopped" });
    // Ready for another start(): the history and the message ids carry on.
    this.#controller = undefined;
    this.#stt = undefined;
    this.#capturedUntil = undefined;
    this.#stopping = undefined;
  }

  /** What the components and the STT link report goes through here (session-inputs.ts). */
  readonly #inputs: InputSink = {
    dispatch: (event) => this.#dispatch(event),
    events: this.emitter,
    counters: this.#counters,
    noteSpeech: (speaking) => this.#stt?.noteSpeech(speaking),
    sendAudio: (pcm, capturedAtMs, capturedAt) => {
      if (capturedAt !== undefined) this.#capturedUntil = capturedAt;
      this.#replies.sampleRendered(this.#components?.player);
      this.#stt?.send(pcm, capturedAtMs);
    },
    playbackStarted: (generation, at, audibleContextTime) => {
      const reply = this.#turn.reply;
      if (reply.kind !== "playing" || reply.generation !== generation || reply.audible) return;
      this.#replies.current?.audible(at, audibleContextTime);
      this.#dispatch({ kind: "replyAudible", generation, contextTime: audibleContextTime });
    },
    echoOf: (text, spokenAt) => this.#replies.echoOf(text, this.#components?.player, spokenAt),
    fail: (err) => this.#fail(err),
    inputEnded: (err) => this.#devices.inputEnded(err),
    sttOrder: new SttOrder((event) => this.#dispatch(event)),
  };

  // ─── the machine and its effects ──────────────────────────────────────────

  #dispatch(event: TurnEvent): void {
    // Once stopping, only the stop itself moves the machine.
    if (this.#stopping && event.kind !== "stop" && event.kind !== "stopped") return;
    const next = step(this.#turn, event, this.#config);
    this.#turn = next.state;
    for (const effect of next.effects) this.#effects.apply(effect);
  }

  /** The user's turn is over: get the STT's last words, then let the machine decide. */
  async #endUserTurn(voiceEnd: number | undefined): Promise<void> {
    const speechEndAt = performance.now();
    const flushed = await this.#stt!.flush(this.#options.turn.flushTimeoutMs);
    if (this.#controller?.signal.aborted) return;
    if (flushed.missed) {
      this.emit("warning", { service: "stt", message: "the STT did not confirm its last words in time; replying with what it returned", cause: flushed.cause });
    }
    this.#turnTiming = { speechEndAt, sttFinalMs: performance.now() - speechEndAt, voiceEnd };
    this.#inputs.sttOrder.releaseAll();
    this.#dispatch({ kind: "turnFlushed", missed: flushed.missed, at: performance.now(), ...(this.#config.pushToTalk ? { talkHeld: this.#mute.held } : {}) });
  }

  // ─── plumbing ─────────────────────────────────────────────────────────────

  #requireListening(method: string): void {
    if (this.#turn.phase !== "idle" && this.#turn.phase !== "connecting" && !this.#stopping) return;
    throw new StateError(`VoiceSession.${method}(): the session is not listening yet; call it once start() has resolved`);
  }

  #push(method: string, held: boolean): void {
    if (!this.#config.pushToTalk) throw new ConfigError(`VoiceSession.${method}(): needs \`turn: { mode: "push-to-talk" }\``);
    this.#requireListening(method);
    this.#mute.hold(held, this.#components?.capture);
    this.#dispatch({ kind: held ? "pushStart" : "pushEnd" });
  }

  #setMuted(muted: boolean): void {
    if (this.#mute.set(muted, this.#components?.capture, performance.now())) this.emit("mute", { muted });
  }

  #announce(state: SessionState): void {
    if (state === this.#announced) return;
    const previous = this.#announced;
    this.#announced = state;
    // The user has the floor: at a speech start while listening, or at a confirmed barge-in, after the cut.
    if (state === "user_speaking") this.#stt?.turnStarted(this.#turnOnsetS());
    this.emit("state", { state, previous, degraded: presentedDegraded(this.#turn) });
  }

  /** How long ago (s) the user's turn began (onsetAgeS). */
  #turnOnsetS(): number {
    return onsetAgeS(this.#turn, performance.now(), this.#capturedUntil);
  }

  #emitError(err: unknown, fatal: boolean): void {
    const error = err instanceof Error ? err : new BargeinError(`unexpected failure: ${String(err)}`, { cause: err });
    this.emit("error", { error, fatal });
  }

  /** A failure the session cannot continue after: report it and stop cleanly. */
  #fail(err: unknown): void {
    if (this.#controller?.signal.aborted) return;
    this.#emitError(err, true);
    void this.stop();
  }
}
