// The speech services the demo offers, and the VoiceSession it makes from the
// picked ones. Only the public API: providers with token functions (no secret
// lives in the page). Shared by the ES-module page and the script-tag page.

/**
 * Asks the page's own server for a short-lived token; the server holds the secret. `service`: for a
 * hosted service's emulator, the server mints that service's own kind of token (demo/README.md).
 */
async function fetchToken(service) {
  const response = await fetch(service ? `/api/token?service=${service}` : "/api/token", { cache: "no-store" });
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}`);
  const { token } = await response.json();
  return token;
}

/**
 * "reference" is the offline Kyutai-protocol backend; the others speak the hosted services'
 * protocols to the reference backend's emulators, which are not the services (README: "The
 * emulators are not the services"). `ws`: the backend's WebSocket origin.
 */
export const STT_CHOICES = {
  // The reference STT loads a pocketsphinx decoder when its pool is empty (~0.5 s): allow it more than the 0.5 s default.
  reference: { label: "Reference (Kyutai protocol)", make: (B, ws, query) => B.kyutaiStt({ urls: [`${ws}/api/asr-streaming${query}`], token: () => fetchToken() }) },
  deepgram: { label: "Deepgram Nova (emulated)", make: (B, ws, query) => B.deepgramStt({ urls: `${ws}${query}`, token: () => fetchToken("deepgram"), model: "nova-3" }) },
  "deepgram-flux": { label: "Deepgram Flux (emulated)", make: (B, ws, query) => B.deepgramStt({ urls: `${ws}${query}`, token: () => fetchToken("deepgram"), model: "flux-general-en" }) },
  assemblyai: { label: "AssemblyAI (emulated)", make: (B, ws, query) => B.assemblyaiStt({ urls: `${ws}${query}`, token: () => fetchToken("assemblyai") }) },
};
export const TTS_CHOICES = {
  reference: { label: "Reference (Kyutai protocol)", make: (B, ws) => B.kyutaiTts({ urls: [`${ws}/api/tts_streaming`], voice: "slt", token: () => fetchToken() }) },
  elevenlabs: { label: "ElevenLabs (emulated)", make: (B, ws) => B.elevenlabsTts({ voiceId: "slt", url: ws, token: () => fetchToken("elevenlabs") }) },
  cartesia: { label: "Cartesia (emulated)", make: (B, ws) => B.cartesiaTts({ voiceId: "slt", url: ws, token: () => fetchToken("cartesia") }) },
};
export const LLM_CHOICES = {
  sse: { label: "OpenAI-compatible (SSE)", make: (B, ws) => B.openaiChat({ url: `${location.origin}/v1`, model: "eliza", token: () => fetchToken() }) },
  ws: { label: "WebSocket (Responses events)", make: (B, ws) => B.websocketLlm({ url: `${ws}/v1/responses`, token: () => fetchToken() }) },
};

/** `<option>`s for a choice table (static labels: no user data goes through innerHTML). */
export const optionsOf = (choices) => Object.entries(choices).map(([value, { label }]) => `<option value="${value}">${label}</option>`).join("");

/**
 * A session on the picked services. `sttQuery`: the reference backend's fault knobs for the STT URL
 * (demo/README.md), e.g. `rate_bps=2000` (a slow uplink) to watch the uplink meter and overload events.
 */
export function makeSession(Bargein, { stt, tts, llm, sttQuery, assetsPath, extra }) {
  const ws = location.origin.replace(/^http/, "ws");
  const session = new Bargein.VoiceSession({
    stt: STT_CHOICES[stt].make(Bargein, ws, sttQuery ? `?${sttQuery}` : ""),
    tts: TTS_CHOICES[tts].make(Bargein, ws),
    llm: LLM_CHOICES[llm].make(Bargein, ws),
    assetsPath,
    ...extra,
    instructions: "You are a friendly, brief voice assistant.",
    meter: true,
    // The reference LLM calls get_time when asked "what time is it" (demo/server/eliza-tools.mjs).
    tools: { definitions: [{ name: "get_time", description: "The time now, where the user is.", parameters: { type: "object", properties: {} } }] },
  });
  session.handleTool("get_time", () => new Date().toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" }));
  return session;
}
