/**
 * bargein: the one public barrel. Every export is listed by name; types are
 * exported with `export type`.
 */
export { Quest, QuestManager } from "./quest/index.js";
export type { QuestInit, QuestRun, QuestClose } from "./quest/index.js";
export {
  BargeinError,
  AssetLoadError,
  ConfigError,
  ProtocolError,
  AtCapacityError,
  ServiceTimeoutError,
  ConnectionClosedError,
  OverloadError,
  MicrophoneError,
  AudioContextError,
  DeadlineExceededError,
  StateError,
  isExpectedAtShutdown,
} from "./errors.js";
export type { BargeinErrorOptions, BargeinErrorCode, MicrophoneErrorReason } from "./errors.js";
export { isAbort } from "./util/abort.js";
export { Emitter } from "./util/emitter.js";
export type { Listener, EventMap } from "./util/emitter.js";
export { VERSION } from "./version.js";
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
  VadLoadProgress,
} from "./vad/vad-worker-client.js";
export type { VadWorkerOptions } from "./vad/vad-options.js";
export { TURN_DETECTOR_MAX_SECONDS } from "./vad/turn-detector.js";
export type { TurnDetector, TurnDetectorInit, TurnDetectorModule, TurnDetectorOptions } from "./vad/turn-detector.js";
export type { VadModel, SpeechOptions, PlaybackControlMessage } from "./protocol/vad-messages.js";
export type { FrameEcho } from "./protocol/frames.js";
export { kyutaiStt, kyutaiTts, deepgramStt, assemblyaiStt, elevenlabsTts, cartesiaTts, openaiChat, websocketLlm, openaiRealtime, geminiLive } from "./providers/index.js";
export type { AssemblyaiSttOptions, AssemblyaiSttConfiguration, AssemblyaiSttStream, AssemblyaiSttProvider } from "./providers/index.js";
export type {
  DeepgramSttOptions,
  KyutaiSttOptions,
  KyutaiServiceOptions,
  KyutaiTtsOptions,
  KyutaiTtsProvider,
  ElevenlabsTtsOptions,
  ElevenlabsPcmFormat,
  ElevenlabsVoiceSettings,
  CartesiaTtsOptions,
  CartesiaEncoding,
  CartesiaSampleRate,
  OpenaiChatOptions,
  WebsocketLlmOptions,
  OpenaiRealtimeOptions,
  GeminiLiveOptions,
  SpeechToSpeechProvider,
  SttProvider,
  SttConnectContext,
  SttStream,
  SttEvent,
  SttAudioFormat,
  LlmProvider,
  ChatMessage,
  ToolDefinition,
  ToolCall,
  ToolCallRequest,
  LlmToolCalls,
  LlmOutput,
  LlmRequest,
  TtsProvider,
  TtsStream,
  TtsEvent,
  ProviderWarning,
  ProviderEvents,
  ProviderEventSource,
} from "./providers/index.js";
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
export { openWebrtcLoopback } from "./audio/webrtc-loopback.js";
export type { WebrtcLoopback } from "./audio/webrtc-loopback.js";
export type { PlayerOptions, PlayerWriteOptions, PlayerPosition, PlayerStarted, PlayerUnderrun, PlayerEnded, PlayerFlushed, PlayerEvents } from "./audio/player.js";
export { playbackControl, pausePlayback, resumePlayback, flushPlayback } from "./audio/playback-control.js";
export { PlaybackSlot } from "./protocol/audio-messages.js";
export type { PlaybackCommand, PlaybackState, UplinkFormat } from "./protocol/audio-messages.js";
export { VoiceSession } from "./session/voice-session.js";
export { backoffReconnectPolicy } from "./session/reconnect-policy.js";
export { BACKCHANNEL_WORDS_EN } from "./session/backchannel.js";
export type { BackchannelEvent, BackchannelOptions } from "./session/backchannel.js";
export { CONTINUATION_WORDS_EN } from "./session/turn-end.js";
export type { HoldUnfinishedOptions } from "./session/turn-end.js";
export type { PreemptiveOptions, ServiceEndOfTurnOptions, TurnDetectorSessionOptions } from "./session/turn-options.js";
export type { ReconnectPolicy, ReconnectContext, BackoffPolicyOptions } from "./session/reconnect-policy.js";
export type {
  VoiceSessionOptions,
  VoiceSessionEvents,
  SessionState,
  SessionMetrics,
  TurnMetrics,
  TranscriptEvent,
  VadEvent,
  InterruptionEvent,
  WarningEvent,
  SessionErrorEvent,
  SessionStateEvent,
  ReconnectingEvent,
  ReconnectedEvent,
  OverloadEvent,
  MuteEvent,
  HistorySeed,
  ToolOptions,
  ToolHandler,
  ToolCallStatus,
  ToolCallRecord,
  ToolCallEvent,
  ToolResultEvent,
  BargeInOptions,
  EchoGuardOptions,
  SessionVadOptions,
  SessionUplinkOptions,
  SessionAudioOptions,
  TurnOptions,
} from "./session/types.js";
export type { HistoryMessage, UserMessage, AssistantMessage } from "./session/history.js";
export type { PlayerPort, VadPort, CapturePort, DevicesPort, SessionComponents, ComponentsFactory, ComponentsContext, LoadProgressEvent } from "./session/ports.js";
export type { AudioDevice, DeviceList, DeviceChangeEvent, InputDeviceEvent, DeviceMetrics, AudioLevels, ChannelLevel } from "./session/device-types.js";
export { Uplink } from "./uplink/uplink.js";
export type { UplinkOptions, UplinkSink, UplinkMetrics, UplinkOverload, UplinkEnded, UplinkEvents, OverloadPolicy } from "./uplink/uplink.js";
export { LlmAdmission } from "./providers/llm-admission.js";
export type { AdmissionOptions, AdmissionMetrics } from "./providers/llm-admission.js";
export type { AssetUrls } from "./assets/asset-urls.js";
