// Short-lived tokens for the emulators whose services hand browsers one: Deepgram's
// /v1/auth/grant, AssemblyAI's /v3/token, ElevenLabs' single-use token, Cartesia's
// /access-token. Each is a JWT signed HS256 with the backend's key, so a token is checked
// without any state on the server, except the spent ones of a single-use kind.
// The per-service endpoints and socket checks built on this are in emulators/service-tokens.mjs.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";

/** @param {string} key @param {string} data */
const sign = (key, data) => createHmac("sha256", key).update(data).digest("base64url");

/**
 * A token valid for `ttlS` seconds.
 * @param {string} key @param {number} ttlS @param {Record<string, unknown>} [claims]
 */
export function mintJwt(key, ttlS, claims = {}) {
  const head = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");
  const body = Buffer.from(JSON.stringify({ ...claims, sub: randomUUID(), exp: Math.floor(Date.now() / 1000) + ttlS })).toString("base64url");
  return `${head}.${body}.${sign(key, `${head}.${body}`)}`;
}

/**
 * The claims of `jwt` when it was signed with `key`, or why it is refused. `exp` is compared
 * in milliseconds, so a 1 s token is refused once that second has passed.
 * @param {string} key @param {string} jwt
 * @returns {{ claims: Record<string, any> } | { refused: "invalid" | "expired" }}
 */
export function readJwt(key, jwt) {
  const [head, body, signature, extra] = String(jwt).split(".");
  if (!head || !body || !signature || extra !== undefined) return { refused: "invalid" };
  const expected = Buffer.from(sign(key, `${head}.${body}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { refused: "invalid" };
  /** @type {Record<string, any>} */
  let claims;
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return { refused: "invalid" };
  }
  if (!(Number(claims?.exp) * 1000 > Date.now())) return { refused: "expired" };
  return { claims };
}

/**
 * True when `jwt` was signed with `key` and has not expired.
 * @param {string} key @param {string} jwt
 */
export function verifyJwt(key, jwt) {
  return "claims" in readJwt(key, jwt);
}

/**
 * @typedef {{ ok: true, claims: Record<string, any> } | { ok: false, refused: "invalid" | "expired" | "spent" }} Redeemed
 */

/**
 * One service's tokens: minted for that service only (`aud`), checked, and for a single-use
 * kind remembered once spent (until they expire, when the signature check refuses them anyway).
 * With no key configured every token is accepted, as the rest of the backend accepts every
 * request then; minting still works (signed with an empty key), so a page's token function
 * runs the same code either way.
 */
export class TokenMint {
  /**
   * @param {string | undefined} key  the backend's key: the service's API key here
   * @param {{ audience: string, singleUse?: boolean }} kind
   */
  constructor(key, { audience, singleUse = false }) {
    this.key = key;
    this.audience = audience;
    this.singleUse = singleUse;
    /** Spent tokens' `sub` → their `exp` (seconds). @type {Map<string, number>} */
    this.spent = new Map();
  }

  /** True when `given` is the API key (or no key is configured). @param {unknown} given */
  isKey(given) {
    if (!this.key) return true;
    if (typeof given !== "string") return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.key);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** @param {number} ttlS @param {Record<string, unknown>} [claims] */
  mint(ttlS, claims = {}) {
    return mintJwt(this.key ?? "", ttlS, { ...claims, aud: this.audience });
  }

  /**
   * Checks a token and, for a single-use kind, spends it.
   * @param {unknown} token @returns {Redeemed}
   */
  redeem(token) {
    if (!this.key) return { ok: true, claims: {} };
    if (typeof token !== "string" || token === "") return { ok: false, refused: "invalid" };
    const read = readJwt(this.key, token);
    if ("refused" in read) return { ok: false, refused: read.refused };
    if (read.claims.aud !== this.audience) return { ok: false, refused: "invalid" };
    if (!this.singleUse) return { ok: true, claims: read.claims };
    this.forgetExpired();
    if (this.spent.has(read.claims.sub)) return { ok: false, refused: "spent" };
    this.spent.set(read.claims.sub, read.claims.exp);
    return { ok: true, claims: read.claims };
  }

  forgetExpired() {
    const nowS = Date.now() / 1000;
    for (const [sub, exp] of this.spent) if (exp <= nowS) this.spent.delete(sub);
  }
}
