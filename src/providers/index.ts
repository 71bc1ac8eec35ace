/** The providers part: interfaces, the built-in providers, and service discovery. */
export { assemblyaiStt } from "./assemblyai-stt.js";
export type { AssemblyaiSttOptions, AssemblyaiSttConfiguration, AssemblyaiSttStream, AssemblyaiSttProvider } from "./assemblyai-stt.js";
export { kyutaiStt } from "./kyutai-stt.js";
export type { KyutaiSttOptions } from "./kyutai-stt.js";
export type { KyutaiServiceOptions } from "./kyutai-socket.js";
export { kyutaiTts } from "./kyutai-tts.js";
export type { KyutaiTtsOptions, KyutaiTtsProvider } from "./kyutai-tts.js";
export { elevenlabsTts } from "./elevenlabs-tts.js";
export type { ElevenlabsTtsOptions, ElevenlabsPcmFormat, ElevenlabsVoiceSettings } from "./elevenlabs-tts.js";
export { cartesiaTts } from "./cartesia-tts.js";
export type { CartesiaTtsOptions, CartesiaEncoding, CartesiaSampleRate } from "./cartesia-tts.js";
export { openaiChat } from "./openai-chat.js";
export type { OpenaiChatOptions } from "./openai-chat.js";
export { websocketLlm } from "./websocket-llm.js";
export { openaiRealtime } from "./openai-realtime.js";
export type { OpenaiRealtimeOptions } from "./openai-realtime.js";
export { geminiLive } from "./gemini-live.js";
export type { GeminiLiveOptions } from "./gemini-live.js";
export type { WebsocketLlmOptions } from "./websocket-llm.js";
export { findInstance, retryWithBackoff, backoffDelays, shuffled, isRetryableStartupError } from "./discovery.js";
export type { DiscoveryOptions, BackoffOptions, RetryInfo } from "./discovery.js";
export type {
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
  TtsSession,
  TtsStream,
  TtsEvent,
  ProviderWarning,
  ProviderEvents,
  ProviderEventSource,
  SpeechToSpeechProvider,
} from "./types.js";
export { deepgramStt } from "./deepgram-stt.js";
export type { DeepgramSttOptions } from "./deepgram-stt.js";
