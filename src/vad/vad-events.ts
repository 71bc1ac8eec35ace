/**
 * The VadWorker's events: what each one carries (vad-worker-client.ts emits
 * them, from the worker's messages in protocol/vad-messages.ts).
 */
import type { BargeinError } from "../errors.js";
import type { AssetKind, VadEventTiming, VadTurnPredictionMessage } from "../protocol/vad-messages.js";

export interface VadSpeechStart extends VadEventTiming {
  probability: number;
  /** The worker already paused playback (auto-pause was armed). */
  pausedPlayback: boolean;
  /** The token (playback generation) of that pause, or null: resume this one to undo it. */
  pauseToken: number | null;
}
export type VadSpeechRealStart = VadEventTiming;
export interface VadSpeechEnd extends VadEventTiming {
  /** The utterance's last speech frame: where the user stopped talking (the event comes `redemptionMs` later). */
  lastSpeechSampleIndex: number;
  lastSpeechContextTime: number;
  audioStartIndex: number;
  audio?: Float32Array;
  /** With a turn detector loaded: it will judge this utterance, and a `turnPrediction` follows. */
  verdictDue: boolean;
}
export interface VadMisfire extends VadEventTiming {
  /** The worker resumed the pause it made at speech start. */
  resumedPlayback: boolean;
  /** The token it resumed, or null. */
  pauseToken: number | null;
}
/**
 * The worker let its own pause lapse while the utterance it paused for stays
 * quiet and unvouched (`lapsed: true`: the bot plays again), or renewed it on
 * that utterance's next voiced frame (`lapsed: false`). See PAUSE_LAPSE_MS.
 */
export interface VadPauseLapse extends VadEventTiming {
  lapsed: boolean;
  /** The token (playback generation) resumed or paused again. */
  pauseToken: number;
}
/**
 * `noticeQuiet(ms)`: a confirmed utterance has been quiet that long, short of
 * `redemptionMs` (it goes on): the user may be done. `speechResumed`: its
 * voice came back after that.
 */
export interface VadSpeechQuiet extends VadEventTiming {
  /** The utterance's last speech frame: where the voice stopped. */
  lastSpeechSampleIndex: number;
  lastSpeechContextTime: number;
}
export type VadSpeechResumed = VadEventTiming;
/** `noticeVoiced(ms)`: a confirmed utterance's voice has lasted `voicedMs` from its onset frame (it goes on). */
export interface VadSpeechVoiced extends VadEventTiming {
  voicedMs: number;
}
/**
 * `turnDetector`: its verdict on the utterance whose `speechEnd` came just
 * before, the worker's message as it is (VadTurnPredictionMessage's fields).
 */
export type VadTurnPrediction = Omit<VadTurnPredictionMessage, "kind">;
/**
 * The onset cue (`onsetPause` option) ducked or paused playback on a sudden
 * rise of the mic's level before any speech start (`paused: true`), or let
 * the bot play on as before when no speech followed (`paused: false`). A
 * speech start while it stands pauses (that speechStart has
 * `pausedPlayback: true`).
 */
export interface VadOnsetPause extends VadEventTiming {
  /** `duck`: the bot plays on, softer; `pause`: silenced (at the cue, or a duck whose sound turned speech-like); `release`. */
  action: "duck" | "pause" | "release";
  paused: boolean;
  /** The token (playback generation) paused or resumed. */
  pauseToken: number;
}
export interface VadProbability extends VadEventTiming {
  probability: number;
  /** Time the frame spent in the model (ms). */
  inferenceMs: number;
  /** RMS of that frame (linear, 0..1). */
  rms: number;
}
/** The VAD has judged the audio up to this frame (every 128 ms of audio). */
export type VadJudged = VadEventTiming;
export interface VadLoadProgress {
  asset: AssetKind;
  url: string;
  loaded: number;
  total: number;
  /** On the asset's last report only (see VadProgressMessage.cached). */
  cached?: boolean;
}

/**
 * With `waitForModel: false`: the model is ready and judges every frame after
 * this one (the level fallback judged it and those before: `sampleIndex` and
 * `contextTime` are that last frame's, 0 when there was none).
 */
export interface VadReady extends VadEventTiming {
  /** Time the worker took to fetch the assets and create the model's session (ms). */
  loadMs: number;
}

export type VadWorkerEvents = {
  speechStart: VadSpeechStart;
  speechRealStart: VadSpeechRealStart;
  speechEnd: VadSpeechEnd;
  misfire: VadMisfire;
  pauseLapse: VadPauseLapse;
  speechQuiet: VadSpeechQuiet;
  speechResumed: VadSpeechResumed;
  speechVoiced: VadSpeechVoiced;
  turnPrediction: VadTurnPrediction;
  onsetPause: VadOnsetPause;
  probability: VadProbability;
  judged: VadJudged;
  progress: VadLoadProgress;
  ready: VadReady;
  /**
   * With `waitForModel: false`, after `start()` resolved: the model or the
   * wasm failed to load (an AssetLoadError naming the URL, or a
   * ServiceTimeoutError after `loadTimeoutMs`). The level fallback goes on
   * judging; no `ready` follows.
   */
  loadError: BargeinError;
  error: BargeinError;
};
