// Gemini Live's ephemeral tokens, as the service mints and checks them:
//   POST /v1alpha/auth_tokens with the API key (`x-goog-api-key: <key>`, `?key=<key>`, or
//   `Authorization: Bearer <key>`) and an optional JSON body { uses, expireTime,
//   newSessionExpireTime, bidiGenerateContentSetup } → { name: "auth_tokens/…", uses,
//   expireTime, newSessionExpireTime }.
//   - uses: how many sessions the token may open; default 1, 0 = no limit;
//   - expireTime: after it, the sessions' messages are refused (default 30 min);
//   - newSessionExpireTime: after it, no new session opens (default 60 s); both under 20 h.
// The token opens the constrained endpoint as `?access_token=auth_tokens/…`.
// Built from https://ai.google.dev/gemini-api/docs/ephemeral-tokens and the genai SDKs'
// CreateAuthTokenConfig / AuthToken reference (googleapis.github.io/js-genai, types.CreateAuthTokenConfig).
// Refusals: the service closes the socket with 1007 and a reason. "API key expired. Please
// renew the API key." is the service's, as yagudaev/voiceclaw#155 quotes it; "API key not
// valid. Please pass a valid API key." is the wording of Google's REST APIs for a bad key; the
// spent-token reason and the HTTP errors' exact messages are this emulator's own, in Google's
// error shape { error: { code, message, status } }.
// Tokens are kept in memory (uses are counted), so a token is only valid on the backend that minted it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readJsonBody, sendJson } from "../http-json.mjs";

export const AUTH_TOKENS_PATH = "/v1alpha/auth_tokens";
const DEFAULT_EXPIRE_S = 30 * 60;
const DEFAULT_NEW_SESSION_S = 60;
const MAX_S = 20 * 60 * 60;
const PAGE_S = 60;
const KEPT = 1000;

/** Close code and reason for a refused credential. */
export const CLOSE_BAD_ARGUMENT = 1007;
export const REFUSED = Object.freeze({
  invalid: "API key not valid. Please pass a valid API key.",
  expired: "API key expired. Please renew the API key.",
  spent: "The ephemeral token has no uses left. Mint a new one (POST /v1alpha/auth_tokens).",
  missing: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
});

/** @param {import("node:http").IncomingMessage} req @param {URL} url */
function offeredKey(req, url) {
  const header = req.headers["x-goog-api-key"];
  if (typeof header === "string" && header) return header;
  const auth = String(req.headers.authorization ?? "");
  if (auth.startsWith("Bearer ")) return auth.slice(7);
  return url.searchParams.get("key");
}

/**
 * @typedef {object} Minted
 * @property {number} expireAt    ms
 * @property {number} newSessionBy ms
 * @property {number} usesLeft    Infinity for no limit
 * @property {Record<string, unknown> | null} setup  bidiGenerateContentSetup minted with it
 */

/** @param {{ stats: import("../stats.mjs").Stats, key: string | undefined }} deps */
export function geminiLiveTokens({ stats, key }) {
  /** @type {Map<string, Minted>} */
  const tokens = new Map();
  /** @param {unknown} given */
  const isKey = (given) => {
    if (!key) return true;
    if (typeof given !== "string") return false;
    const a = Buffer.from(given);
    const b = Buffer.from(key);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  /** @param {{ uses?: number, expireAt: number, newSessionBy: number, setup?: Record<string, unknown> | null }} t */
  const issue = ({ uses = 1, expireAt, newSessionBy, setup = null }) => {
    const name = `auth_tokens/${randomBytes(16).toString("hex")}`;
    tokens.set(name, { expireAt, newSessionBy, usesLeft: uses === 0 ? Infinity : uses, setup });
    if (tokens.size > KEPT) tokens.delete(/** @type {string} */ (tokens.keys().next().value));
    return { name, uses, expireTime: new Date(expireAt).toISOString(), newSessionExpireTime: new Date(newSessionBy).toISOString() };
  };
  /** @param {import("node:http").ServerResponse} res @param {number} code @param {string} status @param {string} message */
  const fail = (res, code, status, message) => sendJson(res, code, { error: { code, message, status } });
  /** @param {unknown} value @param {number} fallbackMs @param {string} field @returns {number | string} */
  const time = (value, fallbackMs, field) => {
    if (value === undefined) return fallbackMs;
    const at = typeof value === "string" ? Date.parse(value) : NaN;
    if (!Number.isFinite(at)) return `Invalid value at '${field}' (type.googleapis.com/google.protobuf.Timestamp), ${JSON.stringify(value)}`;
    if (at > Date.now() + MAX_S * 1000) return `'${field}' must be less than 20 hours in the future.`;
    return at;
  };

  /** @type {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, url: URL) => unknown} */
  const create = async (req, res, url) => {
    if (req.method !== "POST") return fail(res, 405, "METHOD_NOT_ALLOWED", `Method ${req.method} is not allowed on ${AUTH_TOKENS_PATH}; use POST.`);
    if (!isKey(offeredKey(req, url))) {
      stats.add("http", "unauthorized");
      return fail(res, 400, "INVALID_ARGUMENT", REFUSED.invalid);
    }
    /** @type {any} */
    let body;
    try {
      body = (await readJsonBody(req, 64 * 1024)) ?? {};
    } catch (err) {
      return fail(res, 400, "INVALID_ARGUMENT", `Invalid JSON payload received. ${/** @type {Error} */ (err).message}.`);
    }
    const uses = body.uses ?? 1;
    if (!Number.isInteger(uses) || uses < 0) return fail(res, 400, "INVALID_ARGUMENT", `Invalid value at 'uses' (TYPE_INT32), ${JSON.stringify(uses)}`);
    const now = Date.now();
    const expireAt = time(body.expireTime, now + DEFAULT_EXPIRE_S * 1000, "expire_time");
    const newSessionBy = time(body.newSessionExpireTime, now + DEFAULT_NEW_SESSION_S * 1000, "new_session_expire_time");
    if (typeof expireAt === "string") return fail(res, 400, "INVALID_ARGUMENT", expireAt);
    if (typeof newSessionBy === "string") return fail(res, 400, "INVALID_ARGUMENT", newSessionBy);
    sendJson(res, 200, issue({ uses, expireAt, newSessionBy, setup: body.bidiGenerateContentSetup ?? null }));
  };

  return {
    http: { [AUTH_TOKENS_PATH]: create },
    /**
     * The socket's credential: `?key=` (the API key) on BidiGenerateContent, `?access_token=`
     * (an ephemeral token, which this spends one use of) on BidiGenerateContentConstrained.
     * @param {URL} url @param {boolean} constrained
     * @returns {{ ok: true, setup: Record<string, unknown> | null } | { ok: false, reason: string }}
     */
    check(url, constrained) {
      const access = url.searchParams.get("access_token");
      const apiKey = url.searchParams.get("key");
      if (!key) return { ok: true, setup: null };
      if (constrained && access) {
        const t = tokens.get(access);
        if (!t) return { ok: false, reason: REFUSED.invalid };
        const now = Date.now();
        if (now >= t.expireAt || now >= t.newSessionBy) return { ok: false, reason: REFUSED.expired };
        if (t.usesLeft <= 0) return { ok: false, reason: REFUSED.spent };
        t.usesLeft--;
        return { ok: true, setup: t.setup };
      }
      if (apiKey !== null) return isKey(apiKey) ? { ok: true, setup: null } : { ok: false, reason: REFUSED.invalid };
      return { ok: false, reason: REFUSED.missing };
    },
    /** A token for the page's token function (GET /api/token?service=gemini-live). */
    forPage: () => {
      const now = Date.now();
      return { token: issue({ uses: 1, expireAt: now + DEFAULT_EXPIRE_S * 1000, newSessionBy: now + PAGE_S * 1000 }).name, expiresInS: PAGE_S };
    },
    /** For tests: a token whose new-session window has passed. */
    issue,
  };
}
