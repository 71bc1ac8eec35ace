// The STT and TTS a bench session uses, by name, all against the reference
// backend that serves the page. A hosted service's provider is paired with
// the reference Kyutai provider of the other kind, so a bench figure that
// differs from the Kyutai pair's is that one provider's doing.
//
// Each hosted provider's token function asks the backend's GET /api/token?service=NAME, the
// documented browser path: the backend plays the app's server and mints that service's own
// short-lived token (the benches run it without a key, so the emulators accept what it mints).
import { assemblyaiStt, cartesiaTts, deepgramStt, elevenlabsTts, kyutaiStt, kyutaiTts } from "/dist/bargein.js";

const ws = `ws://${location.host}`;
/** @param {string} service */
const tokenFor = (service) => async () => (await (await fetch(`/api/token?service=${service}`, { cache: "no-store" })).json()).token;

const referenceStt = () => kyutaiStt({ urls: ws, startupTimeoutMs: 3000 });
const referenceTts = () => kyutaiTts({ urls: ws, voice: "slt" });

/** name → { stt, tts } factories; each name replaces one side of the Kyutai pair. */
const PAIRS = {
  kyutai: { stt: referenceStt, tts: referenceTts },
  deepgram: { stt: () => deepgramStt({ urls: ws, token: tokenFor("deepgram"), model: "nova-3" }), tts: referenceTts },
  "deepgram-flux": { stt: () => deepgramStt({ urls: ws, token: tokenFor("deepgram"), model: "flux-general-en" }), tts: referenceTts },
  assemblyai: { stt: () => assemblyaiStt({ urls: ws, token: tokenFor("assemblyai") }), tts: referenceTts },
  // The emulators speak with flite; a voice id naming "slt" picks the voice the Kyutai pair uses.
  elevenlabs: { stt: referenceStt, tts: () => elevenlabsTts({ url: ws, voiceId: "bench-slt", token: tokenFor("elevenlabs") }) },
  cartesia: { stt: referenceStt, tts: () => cartesiaTts({ url: ws, voiceId: "bench-slt", token: tokenFor("cartesia") }) },
};

export const PROVIDER_NAMES = Object.keys(PAIRS);

/** @param {string} name one of PROVIDER_NAMES */
export function benchProviders(name = "kyutai") {
  const pair = PAIRS[name];
  if (!pair) throw new Error(`unknown bench provider "${name}"; one of: ${PROVIDER_NAMES.join(", ")}`);
  return { stt: pair.stt(), tts: pair.tts() };
}
