// The reference backend's own services as providers: Kyutai STT and TTS, and
// the scripted LLM over SSE or a WebSocket, each on this page's origin with
// fault knobs (`query`) on its URL. Shared by the session, fault and hosted
// pages. `token` (optional) is the page's token function, for a backend
// started with a token.
import { kyutaiStt, kyutaiTts, openaiChat, websocketLlm } from "/dist/bargein.js";

const ws = `ws://${location.host}`;

/** `service`: "stt", "tts", "sse" (the LLM over SSE, the default) or "ws-llm". */
export function referenceProvider(service, query = "", options = {}, { token } = {}) {
  const q = query ? `?${query}` : "";
  const auth = token ? { token } : {};
  // The SDK's startup timeout, not a stricter one: on a loaded machine a reconnect's Ready came after
  // 3 s (soak.spec), which is what the default's margin is for. The fault cases set their own.
  if (service === "stt") return kyutaiStt({ urls: `${ws}/${q}`, ...auth, ...options });
  if (service === "tts") return kyutaiTts({ urls: `${ws}/${q}`, voice: "slt", ...auth, ...options });
  if (service === "ws-llm") return websocketLlm({ url: `${ws}/v1/responses${q}`, ...auth, ...options });
  return openaiChat({ url: `${location.origin}/v1${q}`, model: "eliza", ...auth, ...options });
}
