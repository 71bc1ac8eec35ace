/**
 * Messages between the main thread (VadWorker) and the VAD worker, and from the
 * VAD worker to the playback worklet's control port. Discriminated on `kind`.
 * Types only: imported by the main thread and the worker alike (no DOM, no
 * WebWorker globals), so `MessagePort` is the only platform type used.
 */
import type { PlaybackCommand } from "./audio-messages.js";
import type { ConnectFramesMessage } from "./frames.js";

export type VadModel = "v5" | "v6" | "legacy";

/** The speech state machine's settings, in vad-web's names and units. */
export interface SpeechOptions {
  /** A frame whose probability is at or above this counts as speech (0..1). */
  positiveSpeechThreshold: number;
  /** Below this, a frame counts toward ending speech (0..positiveSpeechThreshold). */
  negativeSpeechThreshold: number;
  /** Low-probability time (ms) allowed inside speech before it ends. */
  redemptionMs: number;
  /** Speech shorter than this (ms of speech frames) is a misfire, not an utterance. */
  minSpeechMs: number;
  /** Audio (ms) kept from before speech start and prepended to the utterance. */
  preSpeechPadMs: number;
  /** On `pause`, end the current utterance (true) or drop it (false). */
  submitUserSpeechOnPause: boolean;
}

/** The onset cue's rule, resolved (`vad.onsetPause`; see src/vad/onset-cue.ts). */
export interface OnsetCueSettings {
  /** "duck": the bot plays on `duckDb` softer until the sound turns speech-like; "pause": silence at the cue. */
  action: "duck" | "pause";
  /** How much softer a duck plays the bot (dB, > 0). */
  duckDb: number;
  /** A frame at this Silero probability or more is speech-like: a duck becomes a pause, and no quick release comes. */
  silenceProbability: number;
  /** Frames after the cue at which, none having been speech-like, the bot plays on (0: no quick release). */
  quickReleaseFrames: number;
  /** A frame whose voice-pitch periodicity (src/vad/voicing.ts) reaches this is speech-like too; 0: off. */
  voicing: number;
  /** At each cue, the model's recurrent state is reset before the next frame (a fresh stream). */
  resetModel: boolean;
}

/** The worker's own settings. */
export interface VadWorkerSettings extends SpeechOptions {
  model: VadModel;
  /** Absolute URL of the model file. */
  modelUrl: string;
  /** Absolute URL of `ort-wasm-simd-threaded.wasm`. */
  wasmUrl: string;
  /** Attach the utterance's 16 kHz audio to `speechEnd` (transferred). */
  speechEndAudio: boolean;
  /** What a sudden rise of the level does before Silero calls speech (src/vad/onset-cue.ts); null: nothing. */
  onsetPause: OnsetCueSettings | null;
  /** Shortest audio interval (ms) between two `probability` messages while the meter is on. */
  meterIntervalMs: number;
  /** The app's end-of-turn model (src/vad/turn-detector.ts): its module's absolute URL and options. */
  turnDetector?: { url: string; options: Record<string, unknown> };
  /**
   * False: the level fallback (src/vad/level-voice.ts) judges the frames until
   * the model is ready, and the worker says `fallback` as soon as it runs.
   * True: frames wait for the model (nothing is judged before `ready`).
   */
  waitForModel: boolean;
}

// ---- main → worker ----

export interface VadInitMessage {
  kind: "init";
  settings: VadWorkerSettings;
}
/** Turns the throttled probability stream on or off. Off by default. */
export interface VadSetMeterMessage {
  kind: "set-meter";
  on: boolean;
}
/** Turns the `judged` reports (how far the VAD has judged, every 128 ms of audio) on or off. Off by default. */
export interface VadReportJudgedMessage {
  kind: "report-judged";
  on: boolean;
}
/**
 * Arms direct pause of playback on speech start, for the playback generation
 * `token` (the reply the bot is speaking), or disarms it (`null`). The worker's
 * pause and its resume on a misfire carry the token armed at speech start, so
 * one that lands after that generation is over is ignored by the worklet.
 */
export interface VadAutoPauseMessage {
  kind: "auto-pause";
  token: number | null;
}
/**
 * Once: how the worker reaches the playback worklet. With `control` (the
 * Player's shared control block, crossOriginIsolated pages) it writes the
 * pause there directly through playback-control.ts, within one render quantum
 * and with no message hop; otherwise it posts PlaybackControlMessages to `port`.
 */
export interface ConnectPlaybackControlMessage {
  kind: "connect-playback-control";
  port: MessagePort;
  control?: SharedArrayBuffer;
}
/** Stop listening: ends (or drops) the current utterance, per submitUserSpeechOnPause. */
export interface VadPauseMessage {
  kind: "pause";
}
export interface VadResumeMessage {
  kind: "resume";
}
/**
 * The STT service judged the user's turn over: end the current utterance
 * (speechEnd, or misfire) once it has been quiet `quietMs`, unless the voice
 * comes back first (SpeechDetector.endWhenQuiet).
 */
export interface VadEndWhenQuietMessage {
  kind: "end-when-quiet";
  quietMs: number;
}
/**
 * From now on, send `speechQuiet` when a confirmed utterance has been quiet
 * `quietMs` (short of redemptionMs), and `speechResumed` when its voice comes
 * back after that; `null` stops it (SpeechDetector.noticeQuiet).
 */
export interface VadNoticeQuietMessage {
  kind: "notice-quiet";
  quietMs: number | null;
}
/**
 * From now on, send `speechVoiced` once a confirmed utterance's voice has
 * lasted `voicedMs` from its onset; `null` stops it (SpeechDetector.noticeVoiced).
 */
export interface VadNoticeVoicedMessage {
  kind: "notice-voiced";
  voicedMs: number | null;
}
/** Release the ORT session and close every port; answered by `disposed`. */
export interface VadDisposeMessage {
  kind: "dispose";
}
/** Liveness check kept for the smoke test; answered by `pong`. */
export interface VadPingMessage {
  kind: "ping";
}

export type MainToVadMessage =
  | VadInitMessage
  | ConnectFramesMessage
  | VadSetMeterMessage
  | VadReportJudgedMessage
  | VadAutoPauseMessage
  | ConnectPlaybackControlMessage
  | VadPauseMessage
  | VadResumeMessage
  | VadEndWhenQuietMessage
  | VadNoticeQuietMessage
  | VadNoticeVoicedMessage
  | VadDisposeMessage
  | VadPingMessage;

/**
 * Sent on a frame port after frames (ordering within one port is kept): the
 * worker answers `flushed` with the same id once every earlier frame on that
 * port has been through the model and the detector.
 */
export interface VadFlushMessage {
  kind: "vad-flush";
  id: number;
}

// ---- worker → main ----

/**
 * Where in the audio an event happened: the frame that caused it. `sampleIndex`
 * is the frame's first sample in the 16 kHz stream; `contextTime` is the
 * capture AudioContext time the source stamped on it; `workerTime` is the
 * worker's clock (performance.timeOrigin + now(), ms since the epoch) when the
 * event was decided, so latency can be measured across threads.
 */
export interface VadEventTiming {
  sampleIndex: number;
  contextTime: number;
  workerTime: number;
}

export type AssetKind = "model" | "wasm";

export interface VadProgressMessage {
  kind: "progress";
  asset: AssetKind;
  url: string;
  loaded: number;
  /** Content-Length, or 0 when the server did not say or sent the file compressed; the file's size on the last report. */
  total: number;
  /** On the asset's last report only: its body came from the browser's HTTP cache (absent: the browser did not say). */
  cached?: boolean;
}
/** The worker runs and its level fallback judges the frames, until `ready` (only with `waitForModel: false`). */
export interface VadFallbackMessage {
  kind: "fallback";
}
/** The model is ready: it judges every frame from the next one on (the fallback's utterance goes on under it). */
/**
 * The timing is the last frame the level fallback judged (0, 0 when it judged
 * none, or with `waitForModel`): the model judges every frame after it.
 */
export interface VadReadyMessage extends VadEventTiming {
  kind: "ready";
  /** Time to fetch both assets and create the session (ms). */
  loadMs: number;
}
export interface VadLoadErrorMessage {
  kind: "load-error";
  url: string;
  /** Which file failed, when known. */
  asset?: AssetKind;
  message: string;
}
export interface VadSpeechStartMessage extends VadEventTiming {
  kind: "speechStart";
  probability: number;
  /** True when the worker paused playback for it (control block or port). */
  pausedPlayback: boolean;
  /** The token of that pause (the generation auto-pause was armed with), or null. */
  pauseToken: number | null;
}
export interface VadSpeechRealStartMessage extends VadEventTiming {
  kind: "speechRealStart";
}
export interface VadSpeechEndMessage extends VadEventTiming {
  kind: "speechEnd";
  /**
   * The utterance's last speech frame (at or over the speech threshold): where
   * the user stopped talking. The event itself comes `redemptionMs` later.
   */
  lastSpeechSampleIndex: number;
  lastSpeechContextTime: number;
  /** First sample of the utterance's audio (including the pre-speech pad). */
  audioStartIndex: number;
  /** The utterance at 16 kHz, when `speechEndAudio` is on (transferred). */
  audio?: Float32Array;
  /** The turn detector will judge this utterance: a `turnPrediction` follows (with a verdict or why none). */
  verdictDue: boolean;
}
export interface VadMisfireMessage extends VadEventTiming {
  kind: "misfire";
  /** True when the worker resumed its own pause for it (control block or port). */
  resumedPlayback: boolean;
  /** The token resumed: that of the pause made at speech start, or null. */
  pauseToken: number | null;
}
/**
 * The worker let its own pause lapse (`lapsed: true`: the utterance it paused
 * for has nothing that counts toward a barge-in and has gone quiet, so the
 * bot plays again) or renewed it (`lapsed: false`: voiced again). Sent only
 * when the worker did it. The utterance goes on either way.
 */
export interface VadPauseLapseMessage extends VadEventTiming {
  kind: "pauseLapse";
  lapsed: boolean;
  pauseToken: number;
}
/**
 * A confirmed utterance has been quiet the `notice-quiet` time, short of
 * redemptionMs: the user may be done (the utterance goes on). The last
 * speech frame is where the voice stopped.
 */
export interface VadSpeechQuietMessage extends VadEventTiming {
  kind: "speechQuiet";
  lastSpeechSampleIndex: number;
  lastSpeechContextTime: number;
}
/** The voice came back after a `speechQuiet`, in the same utterance. */
export interface VadSpeechResumedMessage extends VadEventTiming {
  kind: "speechResumed";
}
/** A confirmed utterance's voice has lasted the `notice-voiced` time, `voicedMs` from its onset frame (it goes on). */
export interface VadSpeechVoicedMessage extends VadEventTiming {
  kind: "speechVoiced";
  voicedMs: number;
}
/**
 * The turn detector's verdict on the utterance that just ended (its
 * `speechEnd` came first): the probability that the turn is over, or `error`
 * when `predict` threw or answered something else than a number in 0..1.
 */
export interface VadTurnPredictionMessage extends VadEventTiming {
  kind: "turnPrediction";
  /** The probability (0..1) that the user's turn is over; absent with `error`. */
  probability?: number;
  /** Why there is no verdict: the model threw, or answered no probability. */
  error?: string;
  /** Time `predict` took (ms). */
  inferenceMs: number;
  /** The utterance's last speech frame, as in its `speechEnd`. */
  lastSpeechSampleIndex: number;
  lastSpeechContextTime: number;
  /** Length of the audio `predict` was given (samples at 16 kHz; at most TURN_DETECTOR_MAX_SECONDS). */
  audioSamples: number;
}
/**
 * The onset cue ducked (`action: "duck"`) or paused (`"pause"`: at the cue,
 * or a duck whose sound turned speech-like) playback on a sudden rise of the
 * level, before any speech start; or released what it held (`"release"`)
 * when no speech started. `paused`: whether the cue holds the bot now (duck
 * or pause). A speech start while it stands takes it over (its
 * `pausedPlayback` is true), and no release follows.
 */
export interface VadOnsetPauseMessage extends VadEventTiming {
  kind: "onsetPause";
  action: "duck" | "pause" | "release";
  paused: boolean;
  pauseToken: number;
}
export interface VadProbabilityMessage extends VadEventTiming {
  kind: "probability";
  probability: number;
  /** Time this frame spent in the model (ms), for diagnostics and benchmarks. */
  inferenceMs: number;
  /** RMS of the frame the probability is for (linear, 0..1): the level the VAD heard. */
  rms: number;
}
/**
 * Once asked for (VadReportJudgedMessage), every 128 ms of audio: the VAD has
 * judged the audio up to this frame. The session orders what the STT says after what the VAD has heard
 * (stt-gate.ts): a starved worker falls behind the STT.
 */
export interface VadJudgedMessage extends VadEventTiming {
  kind: "judged";
}
export interface VadRuntimeErrorMessage {
  kind: "runtime-error";
  message: string;
}
export interface VadFlushedMessage {
  kind: "flushed";
  id: number;
}
export interface VadDisposedMessage {
  kind: "disposed";
}
export interface VadPongMessage {
  kind: "pong";
}

export type VadToMainMessage =
  | VadProgressMessage
  | VadFallbackMessage
  | VadReadyMessage
  | VadLoadErrorMessage
  | VadSpeechStartMessage
  | VadSpeechRealStartMessage
  | VadSpeechEndMessage
  | VadMisfireMessage
  | VadPauseLapseMessage
  | VadSpeechQuietMessage
  | VadSpeechResumedMessage
  | VadSpeechVoicedMessage
  | VadTurnPredictionMessage
  | VadOnsetPauseMessage
  | VadProbabilityMessage
  | VadJudgedMessage
  | VadRuntimeErrorMessage
  | VadFlushedMessage
  | VadDisposedMessage
  | VadPongMessage;

// ---- VAD worker → playback worklet ----

/**
 * Posted by the VAD worker on the port from ConnectPlaybackControlMessage when
 * it has no shared control block: `pause` on speech start while auto-pause is
 * armed, `resume` on the misfire that follows it, both with the token armed at
 * that speech start (a PlaybackCommand, so the worklet applies it by the token
 * rules). `sampleIndex` is the VAD frame that decided it.
 */
export type PlaybackControlMessage = Extract<PlaybackCommand, { kind: "pause" | "resume" | "duck" | "unduck" }> & { sampleIndex: number };
