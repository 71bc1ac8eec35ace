// Bundled by bench/realtime.bench.mjs (rollup, at bench time) into the peer
// page's script: the WebSocket transport of @openai/agents-realtime, the
// OpenAI Agents SDK's own Realtime client, as a browser app would bundle it.
export { OpenAIRealtimeWebSocket } from "@openai/agents-realtime";
