/**
 * bargein: the app's entry. A VoiceSession, the providers it talks to, its
 * events and the errors it throws; nothing more. The building blocks a
 * session is made of (player, microphone, VAD worker, uplink, quests, ...)
 * and the types for writing one's own provider are in `bargein/advanced`
 * (src/advanced.ts).
 *
 * Every export is listed by name (no `export *`), types with `export type`,
 * so the count stays visible: test/unit/root-exports.test.ts holds it to 70.
 */
export { VoiceSession } from "./session/voice-session.js";
export { VERSION } from "./version.js";
export { isSupported } from "./support.js";
export type {
  VoiceSessionOptions,
  VoiceSessionEvents,
  SessionState,
  SessionMetrics,
  TurnMetrics,
  TranscriptEvent,
  VadEvent,
  InterruptionEvent,
  BackchannelEvent,
  WarningEvent,
  SessionErrorEvent,
  SessionStateEvent,
  ReconnectingEvent,
  ReconnectedEvent,
  OverloadEvent,
  MuteEvent,
  ToolCallEvent,
  ToolResultEvent,
  ToolHandler,
} from "./session/types.js";
export type { LoadProgressEvent } from "./session/ports.js";
export type { AudioDevice, AudioLevels, DeviceChangeEvent, InputDeviceEvent } from "./session/device-types.js";
export type { HistoryMessage } from "./session/history.js";
export { backoffReconnectPolicy } from "./session/reconnect-policy.js";
export type { AssetUrls } from "./assets/asset-urls.js";

export { kyutaiStt, kyutaiTts, deepgramStt, assemblyaiStt, elevenlabsTts, cartesiaTts, openaiChat, websocketLlm, openaiRealtime, geminiLive } from "./providers/index.js";
export type {
  KyutaiSttOptions,
  KyutaiTtsOptions,
  DeepgramSttOptions,
  AssemblyaiSttOptions,
  ElevenlabsTtsOptions,
  CartesiaTtsOptions,
  OpenaiChatOptions,
  WebsocketLlmOptions,
  OpenaiRealtimeOptions,
  GeminiLiveOptions,
  SttProvider,
  LlmProvider,
  TtsProvider,
  SpeechToSpeechProvider,
  ToolDefinition,
} from "./providers/index.js";

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
export type { BargeinErrorCode, MicrophoneErrorReason } from "./errors.js";
