/**
 * The narrow views of the audio engine and the VAD that VoiceSession uses.
 * The real `Player`, `Microphone` and `VadWorker` satisfy them (through
 * session/components.ts); keeping the session on these interfaces lets the
 * turn logic be tested in Node with scripted parts, and keeps data flowing one
 * way: the parts never import the session.
 *
 * Public: an app's tests pass their own components through the session's
 * `components` option (bargein/testing has scripted ones, `fakeAudio()`).
 * Thread: main. Every `on` returns the function that unsubscribes; the
 * session unsubscribes all of them when it stops.
 */
import { ConfigError } from "../errors.js";
import type { ChannelLevel } from "../audio/level-meter.js";
import type { DeviceList } from "./device-types.js";

/** Playback, as the session drives it. */
export interface PlayerPort {
  /** Queues PCM of `generation`; PCM of an older generation than the current one is dropped. */
  write(pcm: Float32Array | Int16Array, options: { sampleRate: number; generation: number }): void;
  /** Makes `generation` current: audio of older generations is fenced off. */
  setGeneration(generation: number): void;
  /** No more audio will be written for `generation`; `ended` fires once it has all played. */
  endGeneration(generation: number): void;
  /** Empties the ring: silence within one render quantum. */
  flush(): void;
  /**
   * Fades out and holds playback of `token`'s audio (a reply's generation).
   * A pause whose token is not the generation being rendered is ignored, so a
   * late pause cannot hold a newer reply; a new generation starts unpaused.
   */
  pause(token: number): void;
  /** Lifts the pause of `token`; a resume for another token is ignored. */
  resume(token: number): void;
  /** Seconds of the current generation's audio rendered so far. */
  renderedSeconds(): number;
  /** Seconds between rendering a sample and hearing it. */
  readonly outputLatency: number;
  /**
   * The first sample of `generation` is heard at `at` (performance.now() ms)
   * and, when the player knows it, at `audibleContextTime` (AudioContext
   * seconds: rendered time plus the output latency; the VAD's clock).
   */
  on(name: "started", fn: (e: { generation: number; at: number; audibleContextTime?: number }) => void): () => void;
  on(name: "ended", fn: (e: { generation: number }) => void): () => void;
  /** The AudioContext left "running" (suspended or interrupted by the browser or the app, or closed), or runs again after that. */
  on(name: "contextState", fn: (e: { state: string }) => void): () => void;
  /**
   * Plays out of the output device `deviceId` ("" the default). Optional; the
   * browser's player uses AudioContext.setSinkId and throws a ConfigError
   * where the browser lacks it. Without it, `setOutputDevice()` throws one too.
   */
  setSinkId?(deviceId: string): Promise<void>;
  /** Optional: the output's level now (see LevelMeter); without it, the session's `getLevels()` reads silence for the output. */
  level?(bins: boolean): ChannelLevel;
}

/** Voice activity, as the session hears it. `contextTime`: the AudioContext time of the frame that decided it. */
export interface VadPort {
  /**
   * Arms the worker's direct pause of playback on speech start, with the
   * reply's generation as the pause token (null disarms). A pause the worker
   * sends with a stale token is ignored by the playback worklet.
   */
  setAutoPause(token: number | null): void;
  /** Optional: turns the `judged` events on (the session asks at start). */
  reportJudged?(on: boolean): void;
  on(name: "speechStart", fn: (e: { pausedPlayback: boolean; contextTime: number }) => void): () => void;
  on(name: "speechRealStart", fn: (e: { contextTime: number }) => void): () => void;
  /**
   * Optional, once asked for (`reportJudged(true)`): how far the VAD has judged the audio
   * (`contextTime`, the frame's AudioContext time), every so often. With it the session keeps the STT's
   * words behind what the VAD has heard when the VAD falls behind (a starved worker); a VAD that never
   * emits it is taken as keeping up.
   */
  on(name: "judged", fn: (e: { contextTime: number }) => void): () => void;
  /**
   * `lastSpeechContextTime`: the end of the utterance's last speech frame, in
   * the same AudioContext time as the player's `audibleContextTime` (the
   * session's `voiceToVoiceMs` is the gap between the two; without it, none).
   * `verdictDue`: the turn detector will judge the utterance (its `turnPrediction` follows).
   */
  on(name: "speechEnd", fn: (e: { contextTime: number; lastSpeechContextTime?: number; verdictDue?: boolean }) => void): () => void;
  on(name: "misfire", fn: (e: { resumedPlayback: boolean; contextTime: number }) => void): () => void;
  /**
   * Only once asked for (`noticeQuiet`): a confirmed utterance went quiet
   * that long, short of its end (`lastSpeechContextTime`: where the voice
   * stopped); `speechResumed`: its voice came back after that.
   */
  on(name: "speechQuiet", fn: (e: { contextTime: number; lastSpeechContextTime?: number }) => void): () => void;
  on(name: "speechResumed", fn: (e: { contextTime: number }) => void): () => void;
  /** Only once asked for (`noticeVoiced`): a confirmed utterance's voice has lasted that long (it goes on). */
  on(name: "speechVoiced", fn: (e: { contextTime: number; voicedMs: number }) => void): () => void;
  /**
   * `turn.detector`: the end-of-turn model's verdict on the utterance whose
   * `speechEnd` came last: `probability` that the turn is over, or `error`.
   */
  on(name: "turnPrediction", fn: (e: { probability?: number; error?: string; inferenceMs: number; contextTime: number }) => void): () => void;
  /** The worker's own pause lapsed (the bot plays again while unvouched speech is quiet) or was renewed: for the app's `vad` events only. */
  on(name: "pauseLapse", fn: (e: { lapsed: boolean; contextTime: number }) => void): () => void;
  /** The worker's onset cue ducked, paused or released playback before any speech start: for the app's `vad` events only. */
  on(name: "onsetPause", fn: (e: { action?: "duck" | "pause" | "release"; paused: boolean; contextTime: number }) => void): () => void;
  /** Only once the meter is on: the latest speech probability, and the RMS (linear) of its frame when the VAD gives it. */
  on(name: "probability", fn: (e: { probability: number; rms?: number }) => void): () => void;
  /** The worker failed after it had loaded (inference threw, or the worker died): no more voice activity comes. */
  on(name: "error", fn: (e: { error: Error }) => void): () => void;
  /**
   * After `modelReady` read false: the model is ready and judges from the
   * next frame on, inside the utterance under way if there is one (it is
   * neither ended nor started again).
   */
  on(name: "ready", fn: (e: { loadMs: number; contextTime: number }) => void): () => void;
  /**
   * After `modelReady` read false: the model failed to load; the fallback
   * goes on judging, and no `ready` comes. A failure before the subscription
   * is told to it at once (the session subscribes once all parts are up).
   */
  on(name: "loadError", fn: (e: { error: Error }) => void): () => void;
  /**
   * Optional: false while the VAD's model loads and a level-based fallback
   * judges the speech instead (the session listens degraded until `ready`).
   * Absent: the model is ready from the start.
   */
  readonly modelReady?: boolean;
  /** Turns the probability stream on or off (off by default). */
  setMeter(on: boolean): void;
  /**
   * The STT service judged the user's turn over (`turn.serviceEndOfTurn`): end
   * the current utterance with its `speechEnd` once it has been quiet
   * `quietMs`, unless the voice comes back first. Optional: without it the
   * service's end of turn waits for the VAD's own end.
   */
  endWhenQuiet?(quietMs: number): void;
  /**
   * `turn.preemptive`: from now on, `speechQuiet` once a confirmed utterance
   * has been quiet `quietMs` (before its end), and `speechResumed` when its
   * voice comes back after that (null: off). Optional: without it there is no
   * preemptive reply.
   */
  noticeQuiet?(quietMs: number | null): void;
  /**
   * `bargeIn.backchannels`: from now on, `speechVoiced` once a confirmed
   * utterance's voice has lasted `voicedMs` from its onset (null: off).
   * Optional: without it, such speech over the bot interrupts at its end.
   */
  noticeVoiced?(voicedMs: number | null): void;
}

/** The microphone's uplink frames, at the STT's rate and encoding. */
export interface CapturePort {
  /**
   * `capturedAt`: the AudioContext time (s) at the frame's end. `capturedAtMs`,
   * when given: the same moment on `performance.now()`'s clock, so that the
   * uplink judges the frame's age from its capture, however late a busy main
   * thread delivered it (without it, from its arrival).
   */
  on(name: "frame", fn: (e: { pcm: Float32Array | Int16Array; capturedAt: number; capturedAtMs?: number }) => void): () => void;
  /** Only once the meter is on: the microphone's RMS level (0..1). */
  on(name: "level", fn: (e: { rms: number }) => void): () => void;
  /** The microphone's track ended while in use (unplugged, permission revoked): no more audio comes. */
  on(name: "ended", fn: () => void): () => void;
  /** The browser skipped the capture for `ms` (a render-thread hiccup): that audio is lost, counted as silence. */
  on(name: "gap", fn: (e: { ms: number }) => void): () => void;
  /** The echo guard's figures, about once a second while it runs. */
  on(name: "echo", fn: (e: { erleDb: number; delayMs: number; converged: boolean }) => void): () => void;
  setMeter(on: boolean): void;
  /**
   * Muted: from the next render quantum the capture sends silence (to the VAD
   * and the uplink) while the track stays open. Optional for an app's own
   * components; without it, the session's `mute()` throws a ConfigError.
   */
  setMuted?(muted: boolean): void;
  /**
   * Moves the capture to input `deviceId` (undefined: the default) without a
   * restart; on failure the old device keeps running and this rejects.
   * Resolves once the new device's first sample arrived (at most a second
   * later), with the input lost across the swap in ms. Optional; without it,
   * the session's `setInputDevice()` throws a ConfigError.
   */
  setDevice?(deviceId: string | undefined): Promise<{ gapMs: number }>;
  /** Optional: the input device being captured now. */
  readonly deviceId?: string;
  /** Optional: the input's level now (see LevelMeter); without it, `getLevels()` reads silence for the input. */
  level?(bins: boolean): ChannelLevel;
}

/** The devices the page can use, and their changes (navigator.mediaDevices in the browser). */
export interface DevicesPort {
  list(): Promise<DeviceList>;
  /** The set of devices changed (a headset plugged in or out). */
  on(name: "change", fn: () => void): () => void;
}

/** The parts a session runs on; made in the browser by session/components.ts. */
export interface SessionComponents {
  /** Where the bot's audio goes. */
  player: PlayerPort;
  /** Where the user's speech starts and ends are heard. */
  vad: VadPort;
  /** Where the user's audio for the STT comes from. */
  capture: CapturePort;
  /** Optional: the devices, for the session's `devicechange` event and its fallback to the default input. */
  devices?: DevicesPort;
  /** Releases the microphone, the worker and the worklets; called once, when the session stops. */
  dispose(): Promise<void>;
}

/**
 * While the VAD loads (state `connecting`, and after it while the session
 * listens degraded: `vad.waitForModel`): bytes of the Silero model or of
 * onnxruntime's wasm fetched so far (`loaded`: the file's own
 * bytes; `total`: Content-Length, 0 when the server did not say or sent the
 * file compressed, whose Content-Length counts the compressed bytes; the last
 * report's `total` is the file's size). A page can show a loading bar:
 * together they are ~16 MB uncompressed, the seconds a first start takes on a
 * cold cache.
 */
export interface LoadProgressEvent {
  asset: "model" | "wasm";
  url: string;
  loaded: number;
  total: number;
  /**
   * On each asset's last report only: true when its body came from the
   * browser's HTTP cache (a warm start: Resource Timing's transferSize below
   * the body's size), false when it came over the network. Absent on the
   * other reports, and when the browser does not say (a cross-origin asset
   * served without Timing-Allow-Origin).
   */
  cached?: boolean;
}

/** What the session decided that its components need, given to a ComponentsFactory. */
export interface ComponentsContext {
  /** The STT's audio format: the capture's `frame` events carry PCM at this rate and encoding. */
  sttFormat: { sampleRate: number; encoding: "f32" | "s16" };
  /**
   * Speech (ms) the VAD must hear before its `speechRealStart`, which is what
   * confirms a barge-in: the session's `bargeIn.minSpeechMs` (else
   * `vad.minSpeechMs`, else 200), at least 32.
   */
  minSpeechMs: number;
  /** The input device the app picked with `setInputDevice()` before start() (undefined: the default). */
  inputDeviceId?: string;
  /** Aborted when the session stops while the components are being built. */
  signal: AbortSignal;
  /** Load progress of the VAD's model and wasm, for the session's `progress` event (optional for a factory of the app's own); it may go on after the factory resolved. */
  onProgress?: (e: LoadProgressEvent) => void;
}

/**
 * Builds a session's components; called by `start()`, once per start. The
 * browser's default (session/components.ts) creates the AudioContext, the
 * microphone, the VAD worker and the player; a factory passed as the
 * session's `components` option replaces all of that, so nothing of Web
 * Audio is needed (bargein/testing's `fakeAudio().components` runs in Node).
 */
export type ComponentsFactory = (context: ComponentsContext) => Promise<SessionComponents>;

/** A factory's result must have every part, or the session fails later and far from the cause. */
export function checkComponents(components: SessionComponents | undefined): SessionComponents {
  const missing = (["player", "vad", "capture", "dispose"] as const).filter((key) => !components?.[key]);
  if (components && missing.length === 0) return components;
  if (typeof components?.dispose === "function") void components.dispose().catch(() => {});
  throw new ConfigError(`VoiceSession: the \`components\` factory returned no ${missing.map((k) => `\`${k}\``).join(", ")}; it must resolve to { player, vad, capture, dispose } (see SessionComponents)`);
}
