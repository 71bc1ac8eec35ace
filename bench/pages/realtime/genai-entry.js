// Bundled by bench/realtime.bench.mjs (rollup, at bench time) into the Gemini
// peer page's script: @google/genai, Google's own SDK, whose `live.connect`
// opens the Live API WebSocket, as a browser app would bundle it.
export { GoogleGenAI, Modality } from "@google/genai";
