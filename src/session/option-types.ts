/**
 * VoiceSession's options (public). Every default is in src/defaults.ts; each
 * `@defaultValue` here must agree with it (scripts/doc-drift.mjs checks).
 */
import type { AssetUrls } from "../assets/asset-urls.js";
import type { LlmProvider, SpeechToSpeechProvider, SttProvider, TtsProvider } from "../providers/types.js";
import type { AdmissionOptions } from "../providers/llm-admission.js";
import type { OverloadPolicy } from "../uplink/uplink.js";
import type { VadModel } from "../protocol/vad-messages.js";
import type { TurnDetectorOptions } from "../vad/turn-detector.js";
import type { OnsetPauseOptions } from "../vad/onset-options.js";
import type { ComponentsFactory } from "./ports.js";
import type { ReconnectPolicy } from "./reconnect-policy.js";
import type { BackchannelOptions } from "./backchannel.js";
import type { ToolCallRecord, ToolOptions } from "./tool-types.js";
import type { TurnOptions } from "./turn-options.js";

/**
 * When user speech over the bot interrupts it.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface BargeInOptions {
  /**
   * Barge-in on at all. When false, user speech during bot speech is ignored.
   * @defaultValue true
   */
  enabled?: boolean;
  /**
   * Speech during bot playback must add up to this many ms of speech frames
   * (counted by the VAD worker in audio time) before the interruption is
   * confirmed; shorter bursts only pause playback, which resumes when the VAD
   * calls them a misfire. Also the VAD's `minSpeechMs`; at least 32 (one frame).
   * @defaultValue 200
   */
  minSpeechMs?: number;
  /**
   * Confirm as soon as the STT returns a word during bot speech.
   * @defaultValue true
   */
  confirmByWords?: boolean;
  /**
   * A listener's "yeah", "mm-hmm", "okay" over the bot pauses it and then lets
   * it go on: no `interruption`, no user turn, a `backchannel` event. An
   * interrupting word, `minWords` other words, or speech voiced `maxMs`
   * interrupt. Off: any word and `minSpeechMs` of speech interrupt.
   * @defaultValue false
   */
  backchannels?: boolean | BackchannelOptions;
}

/**
 * bargein's own echo canceller, for open speakers.
 * @see docs/guides/open-speakers.md
 */
export interface EchoGuardOptions {
  /**
   * On by default when the session builds its own audio; off by default with
   * the app's own `components`, which have no capture worklet to run it in.
   * With headphones it passes the mic through once the bot has played a while
   * with nothing coming back; with open speakers it learns the echo during the
   * first reply, and until then a barge-in by speech pauses the bot and is
   * confirmed once the guard trusts it or the bot's audio has left the echo path.
   * @defaultValue true
   */
  enabled?: boolean;
  /**
   * The echo tail the adaptive filter covers after the echo's delay, in ms (32 to 1024).
   * @defaultValue 256
   */
  tailMs?: number;
  /**
   * An STT word matching a word the bot rendered this recently (ms) is echo.
   * @defaultValue 1500
   */
  wordWindowMs?: number;
  /**
   * Send the STT the guard's output (the echo removed, at 16 kHz, resampled
   * to the STT's rate) instead of the raw microphone.
   * @defaultValue false
   */
  cleanUplink?: boolean;
}

/**
 * Voice-activity settings (`vad`): vad-web's names and units, with the
 * session's own `redemptionMs` and `minSpeechMs`.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface SessionVadOptions {
  /**
   * The Silero version: "v5", "v6" or "legacy" (v4). With `assets.model`, the version of that file.
   * @defaultValue "v5"
   */
  model?: VadModel;
  /**
   * A frame at or over this speech probability (0..1) counts as speech.
   * @defaultValue 0.3
   */
  positiveSpeechThreshold?: number;
  /**
   * Under this probability (0..1, at most `positiveSpeechThreshold`) a frame counts as quiet.
   * @defaultValue 0.25
   */
  negativeSpeechThreshold?: number;
  /**
   * The quiet (ms) after which the VAD ends an utterance. Shorter than
   * vad-web's 1400: `turn.holdUnfinished` holds the turns whose words are unfinished.
   * @defaultValue 300
   */
  redemptionMs?: number;
  /**
   * Speech (ms) an utterance needs to be real; `bargeIn.minSpeechMs` wins when both are given.
   * @defaultValue 200
   */
  minSpeechMs?: number;
  /**
   * Audio (ms) kept from before the speech start.
   * @defaultValue 800
   */
  preSpeechPadMs?: number;
  /**
   * With `meter`: the audio (ms) between two `vad` meter events; 32 is every frame.
   * @defaultValue 100
   */
  meterIntervalMs?: number;
  /**
   * The onset cue: while the bot speaks, a sudden rise of the mic's level
   * ducks the bot before Silero calls it speech, and silences it once the
   * sound turns speech-like; a keystroke, a door or music costs a short dip,
   * and the bot plays on as before. `{ action: "pause" }` silences at the
   * rise itself; `false` leaves it to Silero's speech start. `true` takes
   * OnsetPauseOptions' defaults; an object sets some of them.
   * @defaultValue true
   */
  onsetPause?: boolean | OnsetPauseOptions;
  /**
   * `false`: `start()` resolves, and the session listens, once the
   * microphone, the worklets and the STT are up, without waiting for
   * Silero's model (about 16 MB uncompressed). Until the model is ready a
   * level-based detector in the VAD worker hears the user, the session is
   * `degraded` (its `state` events say so), and over the bot only the
   * user's words confirm an interruption; then the model takes over, inside
   * an utterance under way if there is one, and the `vad` event `ready`
   * comes. A model that fails to load then is an `error` event (not fatal),
   * and the fallback goes on. `true`: `start()` waits for the model, as
   * before, and a failure to load rejects it.
   * @see docs/guides/barge-in-and-turn-taking.md
   * @defaultValue false
   */
  waitForModel?: boolean;
  /**
   * An end-of-turn model run in the VAD worker on each utterance, `{ module,
   * options }`: its verdicts come as `vad` events of kind `turnPrediction`,
   * but do not end turns. `turn.detector` sets this for the session and also
   * takes the verdicts for the turn; it wins when both are given.
   */
  turnDetector?: TurnDetectorOptions;
}

/**
 * The bounded sender of microphone audio to the STT (`uplink`).
 * @see docs/guides/providers.md
 */
export interface SessionUplinkOptions {
  /**
   * Latency budget in ms of audio: bounds queued bytes plus the socket's
   * bufferedAmount, and frame age counted from the frame's capture (a main
   * thread that stalls longer delivers frames already past it).
   * @defaultValue 500
   */
  budgetMs?: number;
  /**
   * Past the budget: "end" ends the STT stream cleanly and reconnects; "gap"
   * skips audio and sends a gap marker (only for STTs that support it).
   * @defaultValue "gap" when the STT supports it, else "end"
   */
  policy?: OverloadPolicy;
  /**
   * Only count what would be rejected; enforce nothing.
   * @defaultValue false
   */
  observe?: boolean;
  /**
   * When the STT stream fails, the speech it had not yet turned into words
   * (and what the microphone caught while reconnecting) is sent to the new
   * stream first, up to this many ms, if the user spoke within that time.
   * After an overload "end" only what came after the end is sent. 0 turns it off.
   * @defaultValue 3000
   */
  replayMs?: number;
}

/**
 * Audio settings (`audio`).
 * @see docs/guides/open-speakers.md
 */
export interface SessionAudioOptions {
  /** Use this AudioContext instead of creating one (the session then does not close it). */
  context?: AudioContext;
  /**
   * Audio buffered (ms) before a reply starts to play.
   * @defaultValue 40
   */
  prebufferMs?: number;
  /** Where the bot's audio goes (a node of `context`). Default: the context's destination. */
  output?: AudioNode;
  /**
   * How the bot's audio reaches the speakers: `"context"`, the AudioContext's
   * destination; `"webrtc-loopback"`, a local RTCPeerConnection pair into a
   * hidden `<audio>` element, which Chromium's echo canceller takes as its
   * reference (it ignores Web Audio output, crbug 687574), at the cost of the
   * loopback's latency. Not with `output`.
   * @defaultValue "context"
   */
  outputRoute?: "context" | "webrtc-loopback";
  /**
   * Seconds from the bot's audio being rendered to its being heard, when the
   * app knows them (the heard text of an interruption and the `audible` times
   * use it). Given, the context's `outputLatency` is never read. By default it
   * is read as the session starts, before its audio graph exists (Firefox's
   * getter can freeze the page when read while the graph plays), and once
   * more as the first reply plays only if the context reported none then.
   * The `"webrtc-loopback"` route's own latency is added to either.
   */
  outputLatency?: number;
  /**
   * The page's audio session type (`navigator.audioSession.type`, the Audio
   * Session API: Safari 16.4 and later), set as the session opens the
   * microphone where the browser has it and the page left it at `"auto"`.
   * `"auto"` leaves it to the browser. `"play-and-record"` says the page plays
   * and records at once; WebKit then uses its video-chat mode and that mode's
   * volume (WebKit pull request 68835), so whether it plays louder or softer
   * than `"auto"` on an iPhone is not known here (no phone to measure on):
   * the default leaves it alone. A type the page set itself is kept.
   * https://developer.mozilla.org/en-US/docs/Web/API/AudioSession/type
   * @defaultValue "auto"
   */
  sessionType?: "play-and-record" | "auto";
}

/** A message of earlier conversation (VoiceSessionOptions.history). */
export interface HistorySeed {
  /** Who said it. */
  role: "user" | "assistant";
  /** What was said (for an interrupted assistant message, what was heard). */
  text: string;
  /** Kept when given (an exported history's ids); otherwise one is made, as for new messages. */
  id?: string;
  /** An assistant message the user cut off. */
  interrupted?: boolean;
  /** An interrupted assistant message's part that was generated but not heard. */
  unheardText?: string;
  /** An assistant message's tool calls and their results, as `session.history` gives them. */
  toolCalls?: readonly ToolCallRecord[];
}

/**
 * Everything a VoiceSession takes. Only the providers are required.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface VoiceSessionOptions {
  /**
   * Speech to text, the first of the cascaded trio. Required unless `realtime` is given.
   * @see docs/guides/providers.md
   */
  stt?: SttProvider;
  /**
   * The language model of the cascaded trio. Required unless `realtime` is given.
   * @see docs/guides/providers.md
   */
  llm?: LlmProvider;
  /**
   * Text to speech, the last of the cascaded trio. Required unless `realtime` is given.
   * @see docs/guides/providers.md
   */
  tts?: TtsProvider;
  /**
   * A speech-to-speech service instead of the trio (`openaiRealtime({...})`):
   * one socket carries the user's audio in and the model's audio out; the
   * session runs it through the same turn logic, barge-in, uplink and history.
   * @see docs/guides/speech-to-speech.md
   */
  realtime?: SpeechToSpeechProvider;
  /**
   * The system prompt sent first to the LLM.
   * @see docs/guides/providers.md
   */
  instructions?: string;
  /**
   * Tools the model may call, answered by `session.handleTool`.
   * @see docs/guides/providers.md
   */
  tools?: ToolOptions;
  /**
   * URL folder holding the worklets, the VAD worker, the models and the
   * onnxruntime wasm (the package's dist/). Default: the files beside the
   * SDK's bundle, which Vite and webpack 5 copy into a production build.
   * @see docs/guides/bundlers-and-csp.md
   */
  assetsPath?: string;
  /**
   * One URL per file (e.g. from Vite's `?url` imports), each overriding
   * `assetsPath` for its file: `captureWorklet`, `playbackWorklet`,
   * `vadWorker`, `model`, `wasm`.
   * @see docs/guides/bundlers-and-csp.md
   */
  assets?: AssetUrls;
  /**
   * The microphone: a MediaStream, or a function returning one. Default: getUserMedia.
   * @see docs/guides/errors-and-warnings.md
   */
  input?: MediaStream | (() => MediaStream | Promise<MediaStream>);
  /**
   * Voice-activity settings, in vad-web's names and units.
   * @see docs/guides/barge-in-and-turn-taking.md
   */
  vad?: SessionVadOptions;
  /**
   * When user speech over the bot interrupts it.
   * @see docs/guides/barge-in-and-turn-taking.md
   */
  bargeIn?: BargeInOptions;
  /**
   * bargein's own echo canceller, for open speakers: it removes the bot's
   * echo from the VAD's signal so the bot's own voice never confirms a
   * barge-in, and takes STT words that match what the bot said in the last
   * `wordWindowMs` for echo.
   * @see docs/guides/open-speakers.md
   */
  echoGuard?: EchoGuardOptions;
  /**
   * When the user's turn ends: the VAD's silence, the STT's pause, held
   * unfinished turns, the service's end of turn, a preemptive reply.
   * @see docs/guides/barge-in-and-turn-taking.md
   */
  turn?: TurnOptions;
  /**
   * The bounded sender of microphone audio to the STT.
   * @see docs/guides/providers.md
   */
  uplink?: SessionUplinkOptions;
  /**
   * When and how often to reconnect the STT after its stream failed. When
   * the policy gives up, the session reports the error as fatal and stops,
   * keeping the transcript. Default: `backoffReconnectPolicy()`.
   * @see docs/guides/errors-and-warnings.md
   */
  reconnect?: ReconnectPolicy;
  /**
   * The LLM request queue: fixed concurrency, bounded length, and a deadline
   * checked before a request is sent.
   * @see docs/guides/providers.md
   */
  llmAdmission?: AdmissionOptions;
  /**
   * Emit `vad` events of kind "meter" and a `metrics` event every 250 ms, for
   * meters in a UI. With it off, the main thread gets no per-frame message.
   * @defaultValue false
   * @see docs/guides/metrics-and-events.md
   */
  meter?: boolean;
  /**
   * Stop the session when the page is hidden or unloaded, so the microphone
   * is not left open in the background; a `warning` (service "session") says so.
   * @defaultValue true
   * @see docs/guides/errors-and-warnings.md
   */
  releaseMicOnHide?: boolean;
  /**
   * Earlier conversation to go on from: messages as `session.history` gives
   * them (an exported history seeds a new session), or just `{ role, text }`.
   * @see docs/guides/providers.md
   */
  history?: ReadonlyArray<HistorySeed>;
  /**
   * Audio settings: the AudioContext, the prebuffer, where the bot's audio goes.
   * @see docs/guides/open-speakers.md
   */
  audio?: SessionAudioOptions;
  /**
   * Builds the session's audio parts (player, VAD, capture) instead of the
   * browser's, so a session runs in Node: bargein/testing's `fakeAudio()`.
   * `assetsPath`, `input`, `vad`, `audio` and the echo guard's audio path are
   * then the factory's to use or ignore. Default: the browser's components.
   * @see docs/guides/testing-your-ui.md
   */
  components?: ComponentsFactory;
}
