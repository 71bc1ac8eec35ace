// OpenAI Realtime's ephemeral keys (client secrets), as the service mints and checks them:
//   POST /v1/realtime/client_secrets with `Authorization: Bearer <API key>` and an optional JSON
//   body { expires_after: { anchor: "created_at", seconds: 10–7200 (default 600) }, session }
//   → { value: "ek_…", expires_at (epoch seconds), session }. A key opens any number of sessions
//   until it expires; the session config minted with it is the sessions' starting config.
// The socket takes the API key or an ephemeral key, as the subprotocol
// `openai-insecure-api-key.<key>` (browsers, next to `realtime`) or `Authorization: Bearer <key>`.
// A wrong or expired key is refused after the upgrade: an `error` event with code
// invalid_api_key, then close 3000 "invalid_request_error.invalid_api_key" (the close the service
// is seen to send, twilio-samples/speech-assistant-openai-realtime-api-python#4).
// Built from:
//   https://platform.openai.com/docs/api-reference/realtime-sessions/create-realtime-client-secret
//   the browser subprotocols as openai-agents-js's voice-agents guide gives them
//   (docs/src/content/docs/guides/voice-agents/build.mdx)
// Keys are JWTs from ../jwt.mjs (TokenMint, audience openai-realtime) after the `ek_` prefix.
import { TokenMint } from "../jwt.mjs";
import { readJsonBody, sendJson } from "../http-json.mjs";

const DEFAULT_S = 600;
const MIN_S = 10;
const MAX_S = 7200;
const PAGE_S = 60;
const PROTOCOL_PREFIX = "openai-insecure-api-key.";

/** @param {string} key the start of a key, as the service's message shows it */
const masked = (key) => `${key.slice(0, 6)}${"*".repeat(Math.min(20, Math.max(0, key.length - 10)))}${key.slice(-4)}`;

/**
 * The credential a socket upgrade offered, or null.
 * @param {import("node:http").IncomingMessage} req
 */
export function offeredKey(req) {
  const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  const fromProtocol = offered.find((p) => p.startsWith(PROTOCOL_PREFIX));
  if (fromProtocol) return fromProtocol.slice(PROTOCOL_PREFIX.length);
  const header = String(req.headers.authorization ?? "");
  return header.startsWith("Bearer ") ? header.slice("Bearer ".length) : null;
}

/** @param {{ stats: import("../stats.mjs").Stats, key: string | undefined }} deps */
export function openaiRealtimeTokens({ stats, key }) {
  const mint = new TokenMint(key, { audience: "openai-realtime" });
  /** @param {number} ttlS @param {Record<string, unknown> | undefined} session */
  const issue = (ttlS, session) => {
    const expiresAt = Math.floor(Date.now() / 1000) + ttlS;
    return { value: `ek_${mint.mint(ttlS, session ? { session } : {})}`, expires_at: expiresAt, session: { type: "realtime", ...session } };
  };
  /** @param {import("node:http").ServerResponse} res @param {number} status @param {string} message @param {string | null} code @param {string | null} [param] */
  const fail = (res, status, message, code, param = null) => sendJson(res, status, { error: { message, type: "invalid_request_error", param, code } });

  /** @type {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => unknown} */
  const clientSecrets = async (req, res) => {
    if (req.method !== "POST") return fail(res, 405, `Invalid method for URL (${req.method} /v1/realtime/client_secrets)`, null);
    const header = String(req.headers.authorization ?? "");
    const given = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (!mint.isKey(given)) {
      stats.add("http", "unauthorized");
      return fail(res, 401, `Incorrect API key provided: ${masked(given)}. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_api_key");
    }
    /** @type {any} */
    let body;
    try {
      body = await readJsonBody(req, 64 * 1024);
    } catch (err) {
      return fail(res, 400, `We could not parse the JSON body of your request: ${/** @type {Error} */ (err).message}.`, "invalid_json");
    }
    const seconds = body?.expires_after?.seconds ?? DEFAULT_S;
    if (!Number.isInteger(seconds) || seconds < MIN_S || seconds > MAX_S) {
      return fail(res, 400, `Invalid 'expires_after.seconds': expected an integer from ${MIN_S} to ${MAX_S}, got ${JSON.stringify(seconds)}.`, "invalid_value", "expires_after.seconds");
    }
    const session = body?.session;
    if (session !== undefined && (typeof session !== "object" || session === null || session.type !== "realtime")) {
      return fail(res, 400, "Invalid 'session.type': this emulator serves only realtime sessions ('realtime').", "invalid_value", "session.type");
    }
    sendJson(res, 200, issue(seconds, session));
  };

  return {
    http: { "/v1/realtime/client_secrets": clientSecrets },
    /**
     * The socket's credential: the API key, or an unexpired ephemeral key (with the session
     * config minted with it).
     * @param {import("node:http").IncomingMessage} req
     * @returns {{ ok: true, session: Record<string, any> | null } | { ok: false, message: string }}
     */
    check(req) {
      const given = offeredKey(req);
      if (!key) return { ok: true, session: null };
      if (given === null) return { ok: false, message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)." };
      if (mint.isKey(given)) return { ok: true, session: null };
      if (given.startsWith("ek_")) {
        const redeemed = mint.redeem(given.slice(3));
        if (redeemed.ok) return { ok: true, session: redeemed.claims.session ?? null };
        if (redeemed.refused === "expired") return { ok: false, message: "The ephemeral key has expired. Mint a new one with POST /v1/realtime/client_secrets." };
      }
      return { ok: false, message: `Incorrect API key provided: ${masked(given)}. You can find your API key at https://platform.openai.com/account/api-keys.` };
    },
    /** @returns {{ token: string, expiresInS: number }} */
    forPage: () => ({ token: issue(PAGE_S, undefined).value, expiresInS: PAGE_S }),
  };
}
