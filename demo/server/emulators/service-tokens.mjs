// The hosted services' short-lived tokens, as each service mints and checks them: the mint
// endpoint (the app's server calls it with the API key), the socket's credential check, and
// `forPage()`, the same mint for the backend's GET /api/token?service=… (what a real app's
// server does after checking the user's session; the page never sees the key). The backend's
// key stands for the API key. Tokens are JWTs from ../jwt.mjs (TokenMint), one audience per
// service, so one service's token opens no other service's socket.
//
// Built from the public docs:
//   Deepgram   https://developers.deepgram.com/reference/auth/tokens/grant
//              https://developers.deepgram.com/docs/token-based-authentication
//   AssemblyAI https://www.assemblyai.com/docs/api-reference/streaming-api/generate-streaming-token
//              https://www.assemblyai.com/docs/streaming/authenticate-with-a-temporary-token
//              https://www.assemblyai.com/docs/streaming/common-session-errors-and-closures
//              https://www.assemblyai.com/docs/api-reference (errors: 401 for a missing or wrong key)
//   ElevenLabs https://elevenlabs.io/docs/api-reference/tokens/create
//   Cartesia   https://docs.cartesia.ai/api-reference/auth/access-token
//              https://docs.cartesia.ai/get-started/authenticate-your-client-applications
//              https://docs.cartesia.ai/use-the-api/api-conventions, https://docs.cartesia.ai/use-the-api/api-errors
// The docs' example requests and responses are in test/fixtures/<service>/token.json.
import { randomUUID } from "node:crypto";
import { TokenMint } from "../jwt.mjs";
import { readJsonBody, sendJson } from "../http-json.mjs";

/**
 * @typedef {{ token: string, expiresInS: number }} PageToken
 * @typedef {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, url: URL) => unknown} HttpHandler
 * @typedef {{ stats: import("../stats.mjs").Stats, key: string | undefined }} TokenDeps
 */

/** @param {unknown} v @param {number} min @param {number} max */
const integerIn = (v, min, max) => Number.isInteger(v) && /** @type {number} */ (v) >= min && /** @type {number} */ (v) <= max;

// ─── Deepgram ───────────────────────────────────────────────────────────────

/**
 * POST /v1/auth/grant with `Authorization: Token <key>` and an optional JSON body
 * `{ ttl_seconds }` (1–3600, default 30) → `{ access_token, expires_in }`. The socket takes the
 * key (subprotocols ["token", key] or `Authorization: Token`) or a JWT (["bearer", jwt] or
 * `Authorization: Bearer`); the JWT stays valid until it expires.
 * @param {TokenDeps} deps
 */
export function deepgramTokens({ stats, key }) {
  const mint = new TokenMint(key, { audience: "deepgram" });
  const issue = (ttlS = 30) => ({ access_token: mint.mint(ttlS), expires_in: ttlS });
  /** @type {HttpHandler} */
  const grant = async (req, res) => {
    if (req.method !== "POST") return sendJson(res, 405, { err_code: "METHOD_NOT_ALLOWED", err_msg: "use POST" });
    if (!mint.isKey(keyAfter(req.headers.authorization, "Token "))) {
      stats.add("http", "unauthorized");
      return sendJson(res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials." });
    }
    /** @type {any} */
    let body;
    try {
      body = (await readJsonBody(req)) ?? {};
    } catch (err) {
      return sendJson(res, 400, { err_code: "Bad Request", err_msg: /** @type {Error} */ (err).message });
    }
    const ttl = body.ttl_seconds ?? 30;
    if (!(typeof ttl === "number" && ttl >= 1 && ttl <= 3600)) return sendJson(res, 400, { err_code: "Bad Request", err_msg: "ttl_seconds must be 1–3600" });
    sendJson(res, 200, issue(ttl));
  };
  return {
    http: { "/v1/auth/grant": grant },
    /** @param {import("node:http").IncomingMessage} req */
    authorize(req) {
      if (!key) return true;
      const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
      const header = String(req.headers.authorization ?? "");
      if ((offered[0] === "token" && mint.isKey(offered[1])) || mint.isKey(keyAfter(header, "Token "))) return true;
      const jwt = offered[0] === "bearer" ? offered[1] : keyAfter(header, "Bearer ");
      return mint.redeem(jwt).ok;
    },
    /** @returns {PageToken} */
    forPage() {
      const { access_token, expires_in } = issue();
      return { token: access_token, expiresInS: expires_in };
    },
  };
}

/** `header` without `prefix`, or undefined when it does not start with it. @param {unknown} header @param {string} prefix */
function keyAfter(header, prefix) {
  return typeof header === "string" && header.startsWith(prefix) ? header.slice(prefix.length) : undefined;
}

// ─── AssemblyAI ─────────────────────────────────────────────────────────────

/** The service's session limit and the token's bounds, from the token endpoint's reference. */
const AAI_SESSION_MAX_S = 3 * 3600;
const AAI_SESSION_MIN_S = 60;
const AAI_EXPIRES_MAX_S = 600;

/**
 * GET /v3/token?expires_in_seconds=N (1–600, required)&max_session_duration_seconds=M (60–10800,
 * default 10800) with the key in `Authorization` → `{ token, expires_in_seconds }`. A token opens
 * one session (one-time use) if opened within N seconds; the session then lasts at most M.
 * The socket (checkSocket) takes `?token=` or the key in the `Authorization` header; the service
 * upgrades first and closes a refused one with 1008 "Unauthorized Connection: <reason>".
 * @param {TokenDeps} deps
 */
export function assemblyaiTokens({ stats, key }) {
  const mint = new TokenMint(key, { audience: "assemblyai", singleUse: true });
  /** @param {number} expiresS @param {number} [maxSessionS] */
  const issue = (expiresS, maxSessionS = AAI_SESSION_MAX_S) => ({ token: mint.mint(expiresS, { max_session_s: maxSessionS }), expires_in_seconds: expiresS });
  /** @type {HttpHandler} */
  const token = (req, res, url) => {
    if (req.method !== "GET") return sendJson(res, 405, { error: "Method Not Allowed: use GET" });
    if (!mint.isKey(req.headers.authorization)) {
      stats.add("http", "unauthorized");
      return sendJson(res, 401, { error: "Authentication error, API token missing/invalid" });
    }
    const q = url.searchParams;
    const expires = Number(q.get("expires_in_seconds") ?? NaN);
    const session = q.has("max_session_duration_seconds") ? Number(q.get("max_session_duration_seconds")) : AAI_SESSION_MAX_S;
    if (!integerIn(expires, 1, AAI_EXPIRES_MAX_S)) return sendJson(res, 400, { error: `expires_in_seconds must be an integer from 1 to ${AAI_EXPIRES_MAX_S}` });
    if (!integerIn(session, AAI_SESSION_MIN_S, AAI_SESSION_MAX_S)) {
      return sendJson(res, 400, { error: `max_session_duration_seconds must be an integer from ${AAI_SESSION_MIN_S} to ${AAI_SESSION_MAX_S}` });
    }
    sendJson(res, 200, issue(expires, session));
  };
  return {
    http: { "/v3/token": token },
    /**
     * @param {URL} url @param {import("node:http").IncomingMessage | undefined} req
     * @returns {{ ok: true, maxSessionS: number } | { ok: false, reason: string }}
     */
    checkSocket(url, req) {
      const temporary = url.searchParams.get("token");
      if (temporary === null) {
        const header = req?.headers.authorization;
        return header !== undefined && mint.isKey(header) ? { ok: true, maxSessionS: AAI_SESSION_MAX_S } : { ok: false, reason: "Missing Authorization header" };
      }
      const redeemed = mint.redeem(temporary);
      if (redeemed.ok) return { ok: true, maxSessionS: Number(redeemed.claims.max_session_s) || AAI_SESSION_MAX_S };
      return { ok: false, reason: { invalid: "Invalid token", expired: "Token expired", spent: "Token already used" }[redeemed.refused] };
    },
    /** @returns {PageToken} */
    forPage() {
      const { token, expires_in_seconds } = issue(60);
      return { token, expiresInS: expires_in_seconds };
    },
  };
}

// ─── ElevenLabs ─────────────────────────────────────────────────────────────

/** "A time bound single use token that expires after 15 minutes. Will be consumed on use." */
const ELEVENLABS_TOKEN_S = 15 * 60;
const ELEVENLABS_TOKEN_TYPES = ["tts_websocket", "realtime_scribe"];

/**
 * POST /v1/single-use-token/{token_type} with `xi-api-key` → `{ token }`. The TTS socket takes
 * `?single_use_token=` (a tts_websocket token, once) or the key as `xi-api-key`. The docs do not
 * say how a spent or expired token is refused; it is refused as a wrong one is, at the handshake.
 * @param {TokenDeps} deps
 */
export function elevenlabsTokens({ stats, key }) {
  const mints = new Map(ELEVENLABS_TOKEN_TYPES.map((type) => [type, new TokenMint(key, { audience: `elevenlabs:${type}`, singleUse: true })]));
  const tts = /** @type {TokenMint} */ (mints.get("tts_websocket"));
  /** @type {HttpHandler} */
  const create = (req, res, url) => {
    if (req.method !== "POST") return sendJson(res, 405, { detail: "Method Not Allowed" });
    const type = decodeURIComponent(url.pathname.split("/")[3] ?? "");
    const mint = mints.get(type);
    if (!mint) {
      return sendJson(res, 422, { detail: [{ loc: ["path", "token_type"], msg: `token_type must be one of ${ELEVENLABS_TOKEN_TYPES.join(", ")}`, type: "enum" }] });
    }
    if (!mint.isKey(req.headers["xi-api-key"])) {
      stats.add("http", "unauthorized");
      return sendJson(res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
    }
    sendJson(res, 200, { token: mint.mint(ELEVENLABS_TOKEN_S) });
  };
  return {
    http: { "/v1/single-use-token/*": create },
    /** @param {import("node:http").IncomingMessage} req @param {URL} url */
    authorize(req, url) {
      if (!key) return true;
      const token = url.searchParams.get("single_use_token");
      if (token !== null) return tts.redeem(token).ok;
      return req.headers["xi-api-key"] !== undefined && tts.isKey(req.headers["xi-api-key"]);
    },
    /** @returns {PageToken} */
    forPage: () => ({ token: tts.mint(ELEVENLABS_TOKEN_S), expiresInS: ELEVENLABS_TOKEN_S }),
  };
}

// ─── Cartesia ───────────────────────────────────────────────────────────────

/** "The maximum is 1 hour (3600 seconds)"; the docs give no default, so it is the maximum here. */
const CARTESIA_MAX_S = 3600;
/** From this version on, errors are JSON objects; before it, plain text "Title: Message". */
const CARTESIA_JSON_ERRORS = "2026-03-01";

/**
 * POST /access-token with the key (`Authorization: Bearer` or `X-API-Key`), a `Cartesia-Version`
 * header and a JSON body `{ grants: { tts?, stt?, agent? }, expires_in? }` → `{ token }`. The TTS
 * socket takes `?access_token=` (valid, unexpired, with the tts grant; reusable until it
 * expires) or the key (`?api_key=`, `Authorization: Bearer`, `X-API-Key`).
 * @param {TokenDeps} deps
 */
export function cartesiaTokens({ stats, key }) {
  const mint = new TokenMint(key, { audience: "cartesia" });
  /** @param {Record<string, boolean>} grants @param {number} expiresS */
  const issue = (grants, expiresS) => ({ token: mint.mint(expiresS, { grants }) });
  /** @param {import("node:http").IncomingMessage} req */
  const givenKey = (req) => keyAfter(req.headers.authorization, "Bearer ") ?? req.headers["x-api-key"];
  /** @type {HttpHandler} */
  const accessToken = async (req, res) => {
    const version = String(req.headers["cartesia-version"] ?? "");
    const fail = (/** @type {number} */ status, /** @type {string} */ code, /** @type {string} */ title, /** @type {string} */ message) => {
      if (version >= CARTESIA_JSON_ERRORS) return sendJson(res, status, { error_code: code, title, message, request_id: randomUUID() });
      res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end(`${title}: ${message}`);
    };
    if (req.method !== "POST") return fail(405, "method_not_allowed", "Method not allowed", "use POST");
    if (!mint.isKey(givenKey(req))) {
      stats.add("http", "unauthorized");
      return fail(401, "unauthorized", "Unauthorized", "a valid API key is required (Authorization: Bearer <key> or X-API-Key)");
    }
    if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) return fail(400, "invalid_request", "Bad request", "the Cartesia-Version header (YYYY-MM-DD) is required");
    /** @type {any} */
    let body;
    try {
      body = await readJsonBody(req);
    } catch (err) {
      return fail(400, "invalid_request", "Bad request", /** @type {Error} */ (err).message);
    }
    const grants = body?.grants;
    if (typeof grants !== "object" || grants === null || Array.isArray(grants)) return fail(400, "invalid_request", "Bad request", "grants is required: { tts?, stt?, agent? }");
    const expires = body.expires_in ?? CARTESIA_MAX_S;
    if (!integerIn(expires, 1, CARTESIA_MAX_S)) return fail(400, "invalid_request", "Bad request", `expires_in must be an integer from 1 to ${CARTESIA_MAX_S}`);
    const granted = Object.fromEntries(["tts", "stt", "agent"].map((g) => [g, grants[g] === true]));
    sendJson(res, 200, issue(granted, expires));
  };
  return {
    http: { "/access-token": accessToken },
    /** @param {import("node:http").IncomingMessage} req @param {URL} url */
    authorize(req, url) {
      if (!key) return true;
      const token = url.searchParams.get("access_token");
      if (token !== null) {
        const redeemed = mint.redeem(token);
        return redeemed.ok && redeemed.claims.grants?.tts === true;
      }
      const apiKey = url.searchParams.get("api_key") ?? givenKey(req);
      return apiKey !== undefined && mint.isKey(apiKey);
    },
    /** @returns {PageToken} */
    forPage: () => ({ ...issue({ tts: true, stt: false, agent: false }, 300), expiresInS: 300 }),
  };
}
