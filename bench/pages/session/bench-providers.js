// The STT and TTS a bench session uses, by name, all against the reference
// backend that serves the page. A hosted service's provider is paired with
// the reference Kyutai provider of the other kind, so a bench figure that
// differs from the Kyutai pair's is that one provider's doing.
//
// The backend runs the benches without a token, so every emulator accepts
// any token; the token functions are still given, as a page would, so the
// providers' token paths run (Deepgram's through its emulated grant).
import { assemblyaiStt, cartesiaTts, deepgramStt, elevenlabsTts, kyutaiStt, kyutaiTts } from "/dist/bargein.js";

const ws = `ws://${location.host}`;
const benchToken = async () => "bench-token";
/** Deepgram's browser flow, the page standing in for the app's server: the grant endpoint's short-lived JWT. */
const deepgramGrant = async () => (await (await fetch("/v1/auth/grant", { method: "POST" })).json()).access_token;

const referenceStt = () => kyutaiStt({ urls: ws, startupTimeoutMs: 3000 });
const referenceTts = () => kyutaiTts({ urls: ws, voice: "slt" });

/** name → { stt, tts } factories; each name replaces one side of the Kyutai pair. */
const PAIRS = {
  kyutai: { stt: referenceStt, tts: referenceTts },
  deepgram: { stt: () => deepgramStt({ urls: ws, token: deepgramGrant, model: "nova-3" }), tts: referenceTts },
  "deepgram-flux": { stt: () => deepgramStt({ urls: ws, token: deepgramGrant, model: "flux-general-en" }), tts: referenceTts },
  assemblyai: { stt: () => assemblyaiStt({ urls: ws, token: benchToken }), tts: referenceTts },
  // The emulators speak with flite; a voice id naming "slt" picks the voice the Kyutai pair uses.
  elevenlabs: { stt: referenceStt, tts: () => elevenlabsTts({ url: ws, voiceId: "bench-slt", token: benchToken }) },
  cartesia: { stt: referenceStt, tts: () => cartesiaTts({ url: ws, voiceId: "bench-slt", token: benchToken }) },
};

export const PROVIDER_NAMES = Object.keys(PAIRS);

/** @param {string} name one of PROVIDER_NAMES */
export function benchProviders(name = "kyutai") {
  const pair = PAIRS[name];
  if (!pair) throw new Error(`unknown bench provider "${name}"; one of: ${PROVIDER_NAMES.join(", ")}`);
  return { stt: pair.stt(), tts: pair.tts() };
}
