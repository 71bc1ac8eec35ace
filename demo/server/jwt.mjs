// Short-lived tokens for the emulators whose services hand browsers one (Deepgram's
// /v1/auth/grant; AssemblyAI's and Cartesia's token endpoints work the same way): a JWT signed
// HS256 with the backend's key, so a token is checked without any state on the server.
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
 * True when `jwt` was signed with `key` and has not expired.
 * @param {string} key @param {string} jwt
 */
export function verifyJwt(key, jwt) {
  const [head, body, signature] = jwt.split(".");
  if (!head || !body || !signature) return false;
  const expected = Buffer.from(sign(key, `${head}.${body}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8")).exp * 1000 > Date.now();
  } catch {
    return false;
  }
}
