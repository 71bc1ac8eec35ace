/** VoiceSession's options, events and metrics: all public. */
import type { TurnOptions } from "./turn-options.js";
export type { TurnOptions } from "./turn-options.js";
import type { AssetUrls } from "../assets/asset-urls.js";
import type { BargeinError } from "../errors.js";
import type { LlmProvider, SpeechToSpeechProvider, SttProvider, TtsProvider } from "../providers/types.js";
import type { ToolCallEvent, ToolCallRecord, ToolOptions, ToolResultEvent } from "./tool-types.js";
import type { AdmissionMetrics, AdmissionOptions } from "../providers/llm-admission.js";
import type { OverloadPolicy, UplinkMetrics, UplinkOverload } from "../uplink/uplink.js";
import type { ComponentsFactory, LoadProgressEvent } from "./ports.js";
import type { ReconnectContext, ReconnectPolicy } from "./reconnect-policy.js";
import type { DeviceChangeEvent, DeviceMetrics, InputDeviceEvent } from "./device-types.js";
import type { BackchannelEvent, BackchannelOptions } from "./backchannel.js";

/**
 * `connecting`: start() is opening the microphone, loading the VAD and
 * connecting the STT; `listening` once it resolves. `reconnecting`: the STT
 * stream failed and is being reconnected while the session would otherwise
 * be `listening` (speech now is kept and sent to the new stream); it goes
 * back to `listening` on `reconnected`. A user speaking or a reply going on
 * while the STT is down shows as `user_speaking` or `bot_*`, as usual.
 */
export type SessionState = "idle" | "connecting" | "listening" | "reconnecting" | "user_speaking" | "bot_thinking" | "bot_speaking";

export interface BargeInOptions {
  /** Barge-in on at all. Default true. When false, user speech during bot speech is ignored. */
  enabled?: boolean;
  /**
   * Speech during bot playback must add up to this many ms of speech frames
   * (counted by the VAD worker in audio time) before the interruption is
   * confirmed; shorter bursts only pause playback, which resumes when the VAD
   * calls them a misfire. This is also the VAD's `minSpeechMs`. Default 200,
   * at least 32 (one frame).
   */
  minSpeechMs?: number;
  /** Confirm as soon as the STT returns a word during bot speech. Default true. */
  confirmByWords?: boolean;
  /**
   * A listener's "yeah", "mm-hmm", "okay" over the bot pauses it and then lets
   * it go on: no `interruption`, no user turn, a `backchannel` event. An
   * interrupting word, `minWords` other words, or speech voiced `maxMs`
   * interrupt. Default false (off): any word and `minSpeechMs` of speech
   * interrupt. See README "Backchannels".
   */
  backchannels?: boolean | BackchannelOptions;
}

export interface EchoGuardOptions {
  /**
   * Default true when the session builds its own audio (false with the app's
   * own `components`, which have no capture worklet to run it in). With
   * headphones it passes the mic through once the bot has played half a
   * second with nothing coming back; with open speakers it learns the echo in
   * the first 1–2 s of the first reply (measured in Chromium on the test
   * room: converged by 2.3 s), and until then a barge-in by speech pauses
   * the bot and is confirmed once the guard trusts it or the bot's audio has
   * left the echo path.
   */
  enabled?: boolean;
  /** The echo tail the adaptive filter covers after the echo's delay, in ms. Default 256. */
  tailMs?: number;
  /** An STT word matching a word the bot rendered this recently (ms) is echo. Default 1500. */
  wordWindowMs?: number;
  /**
   * Send the STT the guard's output (the echo removed, at 16 kHz, resampled
   * to the STT's rate) instead of the raw microphone. Default false.
   */
  cleanUplink?: boolean;
}

/** A message of earlier conversation (VoiceSessionOptions.history). */
export interface HistorySeed {
  role: "user" | "assistant";
  text: string;
  /** Kept when given (an exported history's ids); otherwise one is made, as for new messages. */
  id?: string;
  interrupted?: boolean;
  unheardText?: string;
  /** An assistant message's tool calls and their results, as `session.history` gives them. */
  toolCalls?: readonly ToolCallRecord[];
}



export interface VoiceSessionOptions {
  /** The cascaded trio: speech to text, a language model, text to speech. Required unless `realtime` is given. */
  stt?: SttProvider;
  llm?: LlmProvider;
  tts?: TtsProvider;
  /**
   * A speech-to-speech service instead of the trio (`openaiRealtime({...})`):
   * one socket carries the user's audio in and the model's audio out; the
   * session runs it through the same turn logic, barge-in, uplink and history.
   */
  realtime?: SpeechToSpeechProvider;
  /** The system prompt sent first to the LLM. */
  instructions?: string;
  /** Tools the model may call (see ToolOptions; answered by `session.handleTool`). */
  tools?: ToolOptions;
  /**
   * URL folder holding the worklets, the VAD worker, the models and the
   * onnxruntime wasm (the package's dist/). Default: the files beside the
   * SDK's bundle, which Vite and webpack 5 copy into a production build (see
   * docs/bundlers.md).
   */
  assetsPath?: string;
  /**
   * One URL per file (e.g. from Vite's `?url` imports), each overriding
   * `assetsPath` for its file: `captureWorklet`, `playbackWorklet`,
   * `vadWorker`, `model`, `wasm`.
   */
  assets?: AssetUrls;
  /** The microphone: a MediaStream, or a function returning one. Default: getUserMedia. */
  input?: MediaStream | (() => MediaStream | Promise<MediaStream>);
  /** Voice-activity settings, in vad-web's names and units. */
  vad?: {
    model?: "v5" | "v6" | "legacy";
    positiveSpeechThreshold?: number;
    negativeSpeechThreshold?: number;
    redemptionMs?: number;
    minSpeechMs?: number;
    preSpeechPadMs?: number;
    /** With `meter`: the audio (ms) between two `vad` meter events. Default 100; 32 is every frame. */
    meterIntervalMs?: number;
  };
  bargeIn?: BargeInOptions;
  /**
   * bargein's own echo canceller, for open speakers: the capture worklet
   * reads what the playback worklet rendered (same render thread, sample
   * aligned), removes its echo from the VAD's signal, and marks frames the
   * echo alone explains, so the bot's own voice may pause playback (it then
   * resumes) but never confirms a barge-in. STT words that match what the bot
   * said in the last `wordWindowMs` are echo too: they neither confirm nor
   * become a user turn.
   */
  echoGuard?: EchoGuardOptions;
  turn?: TurnOptions;
  /** The bounded sender of microphone audio to the STT. */
  uplink?: {
    /**
     * Latency budget in ms of audio; bounds queued bytes + the socket's
     * bufferedAmount, and frame age, counted from the frame's capture: a
     * main thread that stalls longer than this delivers frames already past
     * it, which the policy then skips or ends on. Default 500.
     */
    budgetMs?: number;
    /**
     * Past the budget: "end" ends the STT stream cleanly and reconnects; "gap"
     * skips audio and sends a gap marker (only for STTs that support it).
     * Default "gap" when the STT supports it, else "end".
     */
    policy?: OverloadPolicy;
    /** Only count what would be rejected; enforce nothing. Default false. */
    observe?: boolean;
    /**
     * When the STT stream fails, the speech it had not yet turned into words
     * (and what the microphone caught while reconnecting) is sent to the new
     * stream first, up to this many ms, so no speech is lost. Sent only if the
     * user spoke within that time. After an overload "end", only what the
     * microphone caught after the end is sent: the backlog was given up on
     * purpose. 0 turns it off. Default 3000.
     */
    replayMs?: number;
  };
  /**
   * When and how often to reconnect the STT after its stream failed (dropped,
   * ended by the uplink's "end" policy, or a reconnect that failed). Default:
   * `backoffReconnectPolicy()`: three attempts (at once, then about 0.3 s and
   * 1 s later, with jitter) per episode; a stream that stays up 10 s ends the
   * episode. When the policy gives up, the session reports the error as fatal
   * and stops, keeping the transcript.
   */
  reconnect?: ReconnectPolicy;
  /**
   * The LLM request queue: fixed concurrency, bounded length, and a deadline
   * checked before a request is sent. Default: 1 at a time, 8 waiting, 10 s.
   */
  llmAdmission?: AdmissionOptions;
  /**
   * Emit `vad` events of kind "meter" (speech probability and mic level) and a
   * `metrics` event every 250 ms, for meters in a UI. Off by default: with it
   * off, the main thread gets no per-frame message at all.
   */
  meter?: boolean;
  /**
   * Stop the session when the page is hidden (`visibilitychange` to hidden)
   * or unloaded (`pagehide`), so the microphone is not left open in the
   * background; a `warning` (service "session") says so. Default true.
   */
  releaseMicOnHide?: boolean;
  /**
   * Earlier conversation to go on from: messages as `session.history` gives
   * them (so an exported history, `JSON.parse(JSON.stringify(session.history))`,
   * seeds a new session), or just `{ role, text }`. They are sent to the LLM
   * before the new turns and are part of `history`; new message ids continue
   * after theirs.
   */
  history?: ReadonlyArray<HistorySeed>;
  /** Audio settings. */
  audio?: {
    /** Use this AudioContext instead of creating one (the session then does not close it). */
    context?: AudioContext;
    /** Audio buffered (ms) before a reply starts to play. Default 40. */
    prebufferMs?: number;
    /** Where the bot's audio goes (a node of `context`). Default: the context's destination. */
    output?: AudioNode;
    /**
     * How the bot's audio reaches the speakers. `"context"` (default): the
     * AudioContext's destination. `"webrtc-loopback"`: through a local
     * RTCPeerConnection pair into a hidden `<audio>` element, which is the
     * output Chromium's echo canceller takes as its reference (it ignores
     * Web Audio output, crbug 687574), at the cost of the loopback's latency
     * (about 40–70 ms more, measured: README, "Open speakers"). Not with `output`.
     */
    outputRoute?: "context" | "webrtc-loopback";
  };
  /**
   * Builds the session's audio parts (player, VAD, capture; see
   * `SessionComponents`) instead of the browser's. With it, `start()` creates
   * no AudioContext, no microphone, no worklet and no VAD worker, so a session
   * runs in Node: bargein/testing's `fakeAudio()` gives scripted parts driven
   * by the test (`user.says("…")`), and `fakeSession()` a whole session on
   * them. `assetsPath`, `input`, `vad`, `audio` and the echo guard's audio
   * path are then the factory's to use or ignore. Default: the browser's components.
   */
  components?: ComponentsFactory;
}

/**
 * A message's text, new or changed. Keep one row per `id` and replace its
 * text on every event (the order of events is in the README's "Events").
 */
export interface TranscriptEvent {
  /** The message's id, stable for the session; `session.history` has the same id. */
  id: string;
  role: "user" | "assistant";
  /** The whole text of the message so far. */
  text: string;
  /** True in exactly one event per message: the text is complete. */
  final: boolean;
  /**
   * True when a message that was final changed after all: the STT's late
   * words after a flush that timed out (user). Never with `final`.
   */
  revised: boolean;
}

export type VadEvent =
  | {
      /**
       * `pauseLapse`: speech over the bot that nothing vouches for yet went
       * quiet for 128 ms, so the worker let the bot play again (the utterance
       * goes on); `pauseRenew`: it was voiced again, and the worker paused
       * the bot again. Both only while the worker's own pause stands.
       * `onsetPause`: the mic's level rose sharply over the bot before any
       * speech start, and the worker paused the bot (`vad.onsetPause`);
       * `onsetRelease`: no speech started within 480 ms of it, and the bot
       * plays on. A speech start while it stands keeps the pause.
       */
      kind: "speechStart" | "speechRealStart" | "speechEnd" | "misfire" | "pauseLapse" | "pauseRenew" | "onsetPause" | "onsetRelease";
      /** True when the VAD worker paused or resumed playback itself, with no main-thread hop. */
      direct: boolean;
      /** AudioContext time (s) at the end of the audio frame that decided it. */
      contextTime: number;
    }
  | {
      /** Only with `meter: true`, about every 100 ms: for a level meter in the UI. */
      kind: "meter";
      /** The VAD's latest speech probability (0..1). */
      probability: number;
      /** The microphone's RMS level (0..1). */
      level: number;
    }
  | {
      /** `turn.detector`'s verdict on the utterance that just ended. */
      kind: "turnPrediction";
      /** The probability (0..1) that the user's turn is over. */
      probability: number;
      /** Time the model took (ms), in the VAD worker. */
      inferenceMs: number;
      /** AudioContext time (s) of the frame that ended the utterance. */
      contextTime: number;
    };

export interface InterruptionEvent {
  /**
   * What caused it: user speech, an STT word during bot speech, a call to
   * interrupt(), a reply that stalled (see `turn.replyStallMs`), or a turn
   * typed over the bot (`sendText()`).
   */
  reason: "speech" | "words" | "api" | "stall" | "text";
  /** The part of the reply the user heard; it is what history keeps. */
  heardText: string;
  /** The part that was generated but not heard. */
  unheardText: string;
  /** Milliseconds of the reply's audio that reached the user. */
  heardMs: number;
  /** From the VAD's speech start to the interruption's confirmation, in ms (absent for "api"). */
  speechStartToConfirmMs?: number;
  /**
   * True when none of the reply had been heard and the user's words resume
   * their last turn (`turn.resumeUnheard`): that user message is revised to
   * all their words, this reply's empty message leaves the history, and one
   * reply answers. Absent otherwise.
   */
  userTurnResumed?: boolean;
}

/**
 * Per-turn timings, in ms, from the moment the session decided the user's
 * turn was over: the VAD's speech end (which comes `vad.redemptionMs` after
 * the last speech, 600 ms by default) or the STT's pause probability. What the
 * user waits is this plus that endpointing delay.
 */
export interface TurnMetrics {
  turn: number;
  /**
   * What the user feels: from the end of their last speech frame (the VAD's
   * frame, AudioContext time) to the reply's first sample heard (rendered
   * time plus the output latency, same clock). Includes the VAD's wait for
   * silence (`vad.redemptionMs`). It reads short of what the user felt: the
   * mic's input latency is left out (browsers do not report it reliably), and
   * the VAD's last speech frame ends after the sound does (Silero still scores
   * a frame or two of the decay as speech): against the recording's truth,
   * 57 ms short at p50 and 102 ms at p95 (`npm run bench -- turn`). None for a
   * typed turn, when the turn ended while the VAD still heard speech (push-to-talk
   * released mid-word), or at a misfire (an utterance too short for the VAD, with words).
   */
  voiceToVoiceMs?: number;
  /** Its first part: the user's last speech frame → the session's end-of-turn decision (the VAD's silence, or the STT's pause). */
  voiceEndToDecisionMs?: number;
  /** The parts below start at that decision. */
  speechEndToSttFinalMs?: number;
  speechEndToFirstTokenMs?: number;
  speechEndToFirstAudioByteMs?: number;
  speechEndToFirstAudibleMs?: number;
  /** The SDK's own overhead: first TTS byte received → first sample audible. */
  firstAudioByteToAudibleMs?: number;
  interrupted: boolean;
}

export interface SessionMetrics {
  turns: number;
  interruptions: number;
  lastTurn?: TurnMetrics;
  /** The STT uplink's queue, while a stream is open. */
  uplink?: UplinkMetrics;
  /** The LLM admission queue: queue wait apart from generation time. */
  llm: AdmissionMetrics;
  /** Samples of speech sent again to a new STT stream after a failure (uplink.replayMs), over the session. */
  sttReplayedSamples: number;
  /**
   * Times the browser skipped the capture worklet (render-thread hiccups), and
   * the audio lost in them, over the session. The capture counts a skipped span
   * as silence, so timing after it stays right.
   */
  captureGaps: { count: number; ms: number };
  /**
   * The echo guard's latest figures (about once a second, while it runs):
   * `erleDb`, the echo return loss enhancement; `delayMs`, the echo path's
   * delay it found (NaN until found); whether it has converged; and how many
   * STT words it took for echo (`echoWords`).
   */
  echo?: { erleDb: number; delayMs: number; converged: boolean; echoWords: number };
  /** Whether the microphone is muted now (`mute()`), and for how long it was muted over the session, in ms. */
  mic: { muted: boolean; mutedMs: number };
  /** Input swaps (`setInputDevice()`, fallbacks) and the input lost across them. */
  devices: DeviceMetrics;
  /**
   * `turn.preemptive`, over the session: replies prepared before the turn was
   * certainly over (`started`), those that played (`released`), and those
   * dropped because the user went on (`dropped`: wasted LLM requests; none of
   * their audio was heard).
   */
  preemptive: { started: number; released: number; dropped: number };
}

export interface WarningEvent {
  service: string;
  message: string;
  cause?: unknown;
}

/**
 * The payload of the session's `error` event. Named so, not `ErrorEvent`, so
 * that it does not shadow the DOM's global `ErrorEvent` in an app's module.
 */
export interface SessionErrorEvent {
  error: BargeinError | Error;
  /** True when the session stopped because of it. */
  fatal: boolean;
}

/** The session's state changed from `previous` to `state`. */
export interface SessionStateEvent {
  state: SessionState;
  previous: SessionState;
}

/** A stream failed and the session reconnects it after `delayMs` (see the `reconnect` option). A `warning` says so too. */
export interface ReconnectingEvent {
  service: string;
  attempt: number;
  delayMs: number;
  /** What failed (ReconnectContext), or "moved": the service asked for a new stream before closing this one (Gemini's goAway). */
  reason: ReconnectContext["reason"] | "moved";
  cause: unknown;
}

/** The stream is back, after `attempts` attempts. */
export interface ReconnectedEvent {
  service: string;
  attempts: number;
}

/** The uplink to `service` went past its budget (see the `uplink` option); `policy` is what it did about it. */
export interface OverloadEvent extends UplinkOverload {
  service: string;
}

/** Every event of a VoiceSession, by name, with its payload's type. */
export type VoiceSessionEvents = {
  state: SessionStateEvent;
  transcript: TranscriptEvent;
  vad: VadEvent;
  interruption: InterruptionEvent;
  backchannel: BackchannelEvent;
  turn: TurnMetrics;
  metrics: SessionMetrics;
  warning: WarningEvent;
  error: SessionErrorEvent;
  reconnecting: ReconnectingEvent;
  reconnected: ReconnectedEvent;
  progress: LoadProgressEvent;
  overload: OverloadEvent;
  mute: MuteEvent;
  toolCall: ToolCallEvent;
  toolResult: ToolResultEvent;
  devicechange: DeviceChangeEvent;
  inputDevice: InputDeviceEvent;
};

/** The microphone was muted or unmuted (`mute()`, `unmute()`). */
export interface MuteEvent {
  muted: boolean;
}

export type { BackchannelEvent, BackchannelOptions } from "./backchannel.js";
export type { ToolCallEvent, ToolCallRecord, ToolCallStatus, ToolHandler, ToolOptions, ToolResultEvent } from "./tool-types.js";
