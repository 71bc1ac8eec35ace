/**
 * bargein/advanced: the building blocks a VoiceSession is made of, for an app
 * that assembles its own pipeline or writes its own provider: the player and
 * the microphone, the VAD worker, the uplink, LLM admission, quests, the
 * session's ports, the provider interfaces' stream and event types, and the
 * session's nested option types. The app's entry is `bargein` (src/index.ts).
 *
 * In dist/, advanced.js imports the error classes from bargein.js rather than
 * bundling a copy, so `instanceof` agrees between the two entries.
 */
export { Quest, QuestManager } from "./quest/index.js";
export type { QuestInit, QuestRun, QuestClose } from "./quest/index.js";
export type { BargeinErrorOptions } from "./errors.js";
export { isAbort } from "./util/abort.js";
export { Emitter } from "./util/emitter.js";
export type { Listener, EventMap } from "./util/emitter.js";

export { VadWorker } from "./vad/vad-worker-client.js";
export type {
  VadWorkerEvents,
  VadWorkerState,
  VadSpeechStart,
  VadSpeechRealStart,
  VadSpeechEnd,
  VadMisfire,
  VadPauseLapse,
  VadSpeechQuiet,
  VadSpeechResumed,
  VadSpeechVoiced,
  VadTurnPrediction,
  VadOnsetPause,
  VadProbability,
  VadJudged,
  VadLoadProgress,
  VadReady,
} from "./vad/vad-worker-client.js";
export type { VadWorkerOptions } from "./vad/vad-options.js";
export type { OnsetPauseOptions } from "./vad/onset-options.js";
export { TURN_DETECTOR_MAX_SECONDS } from "./vad/turn-detector.js";
export type { TurnDetector, TurnDetectorInit, TurnDetectorModule, TurnDetectorOptions } from "./vad/turn-detector.js";
export type { VadModel, SpeechOptions } from "./protocol/vad-messages.js";
export type { FrameEcho } from "./protocol/frames.js";

export type {
  AssemblyaiSttConfiguration,
  AssemblyaiSttStream,
  AssemblyaiSttProvider,
  KyutaiServiceOptions,
  KyutaiTtsProvider,
  ElevenlabsPcmFormat,
  ElevenlabsVoiceSettings,
  CartesiaEncoding,
  CartesiaSampleRate,
  SttConnectContext,
  SttStream,
  SttEvent,
  SttAudioFormat,
  ChatMessage,
  ToolCall,
  ToolCallRequest,
  LlmToolCalls,
  LlmOutput,
  LlmRequest,
  TtsStream,
  TtsEvent,
  TtsSession,
  ProviderWarning,
  ProviderEvents,
  ProviderEventSource,
} from "./providers/index.js";
export { LlmAdmission } from "./providers/llm-admission.js";
export type { AdmissionOptions, AdmissionMetrics } from "./providers/llm-admission.js";

export { RingBuffer } from "./audio/ring-buffer.js";
export { Resampler } from "./audio/resampler.js";
export { Microphone } from "./audio/microphone.js";
export type {
  MicrophoneOptions,
  MicrophoneInput,
  MicrophoneUplinkOptions,
  MicrophoneFrame,
  MicrophoneLevel,
  MicrophoneStarted,
  MicrophoneGap,
  MicrophoneEcho,
  MicrophoneSwapGap,
  MicrophoneEvents,
} from "./audio/microphone.js";
export { Player } from "./audio/player.js";
export type { PlayerOptions, PlayerWriteOptions, PlayerPosition, PlayerStarted, PlayerUnderrun, PlayerEnded, PlayerFlushed, PlayerEvents } from "./audio/player.js";
export { openWebrtcLoopback } from "./audio/webrtc-loopback.js";
export type { WebrtcLoopback } from "./audio/webrtc-loopback.js";
export { playbackControl, pausePlayback, resumePlayback, flushPlayback } from "./audio/playback-control.js";
export { PlaybackSlot } from "./protocol/audio-messages.js";
export type { PlaybackCommand, PlaybackState, UplinkFormat } from "./protocol/audio-messages.js";
export { Uplink } from "./uplink/uplink.js";
export type { UplinkOptions, UplinkSink, UplinkMetrics, UplinkOverload, UplinkEnded, UplinkEvents, OverloadPolicy } from "./uplink/uplink.js";

export type { PlayerPort, VadPort, CapturePort, DevicesPort, SessionComponents, ComponentsFactory, ComponentsContext } from "./session/ports.js";
export type { DeviceList, DeviceMetrics, ChannelLevel } from "./session/device-types.js";
export type { UserMessage, AssistantMessage } from "./session/history.js";
export type { BargeInOptions, EchoGuardOptions, TurnOptions, HistorySeed, ToolOptions, ToolCallStatus, ToolCallRecord, SessionVadOptions, SessionUplinkOptions, SessionAudioOptions, AudioStateEvent } from "./session/types.js";
export { BACKCHANNEL_WORDS_EN } from "./session/backchannel.js";
export type { BackchannelOptions } from "./session/backchannel.js";
export { CONTINUATION_WORDS_EN } from "./session/turn-end.js";
export type { HoldUnfinishedOptions } from "./session/turn-end.js";
export type { PreemptiveOptions, ServiceEndOfTurnOptions, TurnDetectorSessionOptions } from "./session/turn-options.js";
/** Every option's default, in one place (the reference docs quote it). */
export { DEFAULTS } from "./defaults.js";
export { browserSupport } from "./support.js";
export type { BrowserSupport, MissingFeature } from "./support.js";
export type { ReconnectPolicy, ReconnectContext, BackoffPolicyOptions } from "./session/reconnect-policy.js";
