// The four hosted-service providers, pointed at their emulators on this page's
// origin (the reference backend), with the fault knobs (`query`) on the URL.
// Each takes its token the documented browser way: a function that asks the
// app's server for a short-lived token. Here the "app's server" is the test:
// /api/token is what the test backend issues, and /api/deepgram-token is
// answered by the spec, which holds the Deepgram key and asks the emulator's
// /v1/auth/grant for a JWT, so the key itself never reaches the page.
import { assemblyaiStt, cartesiaTts, deepgramStt, elevenlabsTts } from "/dist/bargein.js";
import { referenceProvider } from "../session/reference-providers.js";

const ws = `ws://${location.host}`;

/** The token the test backend issues to the page (/api/token). */
export const issuedToken = async () => (await (await fetch("/api/token")).json()).token;
/** A Deepgram JWT, minted by the app's server (README, deepgramStt). */
const deepgramToken = async () => (await (await fetch("/api/deepgram-token", { method: "POST" })).json()).access_token;

const at = (query) => (query ? `${ws}/?${query}` : ws);

/** Which service each hosted provider is, and how to build it with `query` knobs and extra `options`. */
export const HOSTED = {
  "deepgram-nova": { service: "stt", make: (query, options) => deepgramStt({ urls: at(query), token: deepgramToken, model: "nova-3", ...options }) },
  "deepgram-flux": { service: "stt", make: (query, options) => deepgramStt({ urls: at(query), token: deepgramToken, model: "flux-general-en", ...options }) },
  assemblyai: { service: "stt", make: (query, options) => assemblyaiStt({ urls: at(query), token: issuedToken, ...options }) },
  elevenlabs: { service: "tts", make: (query, options) => elevenlabsTts({ url: at(query), voiceId: "slt", token: issuedToken, ...options }) },
  cartesia: { service: "tts", make: (query, options) => cartesiaTts({ url: at(query), voiceId: "slt", token: issuedToken, ...options }) },
};

/**
 * A provider factory in the form the fault pages take (`make(service, query, options)`):
 * the hosted provider `name` for its own service, the reference backend's for the others.
 */
export function pairedWith(name) {
  const hosted = HOSTED[name];
  if (!hosted) throw new Error(`no hosted provider ${name}`);
  return (service, query = "", options = {}) =>
    service === hosted.service ? hosted.make(query, options) : referenceProvider(service, query, options, { token: issuedToken });
}
