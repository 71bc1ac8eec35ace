/** VoiceSession's options, events and metrics: all public. */
export type { TurnOptions } from "./turn-options.js";
export type { BargeInOptions, EchoGuardOptions, HistorySeed, SessionAudioOptions, SessionUplinkOptions, SessionVadOptions, VoiceSessionOptions } from "./option-types.js";
import type { BargeinError } from "../errors.js";
import type { ToolCallEvent, ToolCallRecord, ToolOptions, ToolResultEvent } from "./tool-types.js";
import type { AdmissionMetrics } from "../providers/llm-admission.js";
import type { UplinkMetrics, UplinkOverload } from "../uplink/uplink.js";
import type { LoadProgressEvent } from "./ports.js";
import type { ReconnectContext } from "./reconnect-policy.js";
import type { DeviceChangeEvent, DeviceMetrics, InputDeviceEvent } from "./device-types.js";
import type { BackchannelEvent, BackchannelOptions } from "./backchannel.js";

/**
 * `connecting`: start() is opening the microphone, starting the VAD and
 * connecting the STT; `listening` once it resolves (`degraded` while the
 * VAD's model still loads: `vad.waitForModel`). `reconnecting`: the STT
 * stream failed and is being reconnected while the session would otherwise
 * be `listening` (speech now is kept and sent to the new stream); it goes
 * back to `listening` on `reconnected`. A user speaking or a reply going on
 * while the STT is down shows as `user_speaking` or `bot_*`, as usual.
 */
export type SessionState = "idle" | "connecting" | "listening" | "reconnecting" | "user_speaking" | "bot_thinking" | "bot_speaking";

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
       * `onsetDuck`: the mic's level rose sharply over the bot before any
       * speech start, and the worker plays the bot on, softer
       * (`vad.onsetPause`); `onsetPause`: the worker silenced the bot on
       * such a rise, or the ducked sound turned speech-like; `onsetRelease`:
       * no speech came of it, and the bot plays on as before. A speech start
       * while either stands pauses the bot.
       */
      kind: "speechStart" | "speechRealStart" | "speechEnd" | "misfire" | "pauseLapse" | "pauseRenew" | "onsetDuck" | "onsetPause" | "onsetRelease";
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
      /**
       * The VAD's model is ready and judges the user's voice from now on
       * (`vad.waitForModel: false`): the session is no longer `degraded`. An
       * utterance under way goes on under the model. Not sent when the model
       * was ready before the session's parts were (a warm start): the first
       * `state` event then says `degraded: false`.
       */
      kind: "ready";
      /** Time the VAD worker took to fetch the model and the wasm and load them (ms). */
      loadMs: number;
      /** AudioContext time (s) at the end of the last frame the fallback judged: the model judges the audio after it. */
      contextTime: number;
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
   * interrupt(), a reply that stalled (see `turn.replyStallMs`), a turn
   * typed over the bot (`sendText()`), or the AudioContext stopping (suspended
   * or interrupted, see the `audioState` event: the rest of the reply would
   * be stale when the audio comes back).
   */
  reason: "speech" | "words" | "api" | "stall" | "text" | "audio";
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
   * a frame or two of the decay as speech); `npm run bench -- turn` measures
   * the gap against the recording's truth (bench/results/turn.json). None for a
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
  /**
   * True while the session listens before the VAD's model is ready
   * (`vad.waitForModel: false`): a level-based fallback hears the user, and
   * over the bot only the user's words confirm an interruption. The `vad`
   * event `ready` ends it (no `state` event comes for that alone); so does
   * stop(). `session.degraded` reads the same.
   */
  degraded: boolean;
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
  audioState: AudioStateEvent;
};

/**
 * The AudioContext stopped running, or runs again. While it is "suspended" or
 * "interrupted" (WebKit: a phone call, Siri, an iOS page in the background)
 * nothing is captured or played; a reply playing then is interrupted with
 * reason "audio". A context the session created is resumed by the session,
 * at once or, where the browser wants a gesture, at the page's next tap or
 * key press: show the user a hint such as "Tap to resume". A context you
 * passed in (`audio.context`) is yours to resume. Not sent for "closed": that
 * stops the session with an error.
 */
export interface AudioStateEvent {
  state: "running" | "suspended" | "interrupted";
}

/** The microphone was muted or unmuted (`mute()`, `unmute()`). */
export interface MuteEvent {
  muted: boolean;
}

export type { BackchannelEvent, BackchannelOptions } from "./backchannel.js";
export type { ToolCallEvent, ToolCallRecord, ToolCallStatus, ToolHandler, ToolOptions, ToolResultEvent } from "./tool-types.js";
