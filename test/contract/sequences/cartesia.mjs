// Cartesia TTS WebSocket sequences, written from the docs, replayed against the emulator
// (test/contract/cartesia.test.ts) and the live service (scripts/check-live.mjs):
//   https://docs.cartesia.ai/api-reference/tts/websocket
//   https://docs.cartesia.ai/use-the-api/api-errors (with Cartesia-Version 2026-03-01 and newer, a WebSocket
//     error is {type:"error", done:true, status_code, error_code (nullable), title, message, request_id,
//     doc_url?, context_id?})
import { ContractSocket, check } from "./socket.mjs";

/** @typedef {{ url: (version: string) => string, auth: { protocols?: string[], headers?: Record<string, string> } }} CartesiaTarget */

const request = (/** @type {Record<string, unknown>} */ more = {}) => ({
  model_id: "sonic-3",
  transcript: "Hello, world!",
  voice: { mode: "id", id: "a0e99841-438c-4a64-b679-ae501e7d6091" },
  language: "en",
  context_id: "contract_ctx",
  output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
  continue: false,
  ...more,
});

/** Sends `message` on a socket of API version `version` and waits for its error. @param {CartesiaTarget} target @param {string} version @param {Record<string, unknown>} message */
async function refused(target, version, message) {
  const s = new ContractSocket(target.url(version), target.auth);
  await s.opened;
  try {
    s.send(message);
    await s.until((m) => m.some((x) => x.type === "error" || x.type === "done"), "an error (or done)");
    return { messages: s.messages, error: s.messages.find((x) => x.type === "error") };
  } finally {
    s.close();
  }
}

export const cartesiaSequences = {
  /** A request without model_id is refused; with 2026-03-01 the error has the documented fields. */
  async "an error, 2026-03-01 shape"(/** @type {CartesiaTarget} */ target) {
    const { model_id: _none, ...noModel } = request();
    const { messages, error } = await refused(target, "2026-03-01", noModel);
    const e = error ?? {};
    return {
      messages,
      checks: [
        check("a request without model_id is refused with an error", error !== undefined, messages.map((m) => m.type)),
        check("the error has type, done, status_code, error_code, title, message and request_id", ["type", "done", "status_code", "error_code", "title", "message", "request_id"].every((k) => k in e), Object.keys(e)),
        check("title, message and request_id are strings; error_code a string or null", typeof e.title === "string" && typeof e.message === "string" && typeof e.request_id === "string" && (e.error_code === null || typeof e.error_code === "string"), e),
        check("done is true and status_code is 4xx", e.done === true && e.status_code >= 400 && e.status_code < 500, { done: e.done, status_code: e.status_code }),
      ],
    };
  },

  /** Before 2026-03-01 the error may keep the older shape; it is still an error event, done. */
  async "an error, older version"(/** @type {CartesiaTarget} */ target) {
    const { messages, error } = await refused(target, "2025-04-16", request({ output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 12345 } }));
    return {
      messages,
      checks: [
        check("a bad output_format is refused with an error event", error !== undefined, messages.map((m) => m.type)),
        check("the error says what failed (error or message is a string)", typeof error?.error === "string" || typeof error?.message === "string", error),
      ],
    };
  },

  /** continue:true with flush, then continue:false: chunks, flush_done, then done. */
  async "a flush then done"(/** @type {CartesiaTarget} */ target) {
    const s = new ContractSocket(target.url("2026-03-01"), target.auth);
    await s.opened;
    try {
      s.send(request({ transcript: "Hello there. ", continue: true, flush: true }));
      s.send(request({ transcript: "", continue: false }));
      await s.until((m) => m.some((x) => x.type === "done" || x.type === "error"), "done");
      const types = s.messages.map((m) => m.type);
      return {
        messages: s.messages,
        checks: [
          check("chunks, then flush_done, then done", types.includes("chunk") && types.indexOf("chunk") < types.indexOf("flush_done") && types.indexOf("flush_done") < types.indexOf("done"), types.filter((t, i) => t !== types[i - 1])),
          check("no error", !types.includes("error"), s.messages.find((m) => m.type === "error")),
        ],
      };
    } finally {
      s.close();
    }
  },

  /** The close handshake: the client's close 1000 is answered with 1000. */
  async "the close handshake"(/** @type {CartesiaTarget} */ target) {
    const s = new ContractSocket(target.url("2026-03-01"), target.auth);
    await s.opened;
    s.close();
    const info = await s.closed();
    return { messages: s.messages, checks: [check("the server answers the client's close with 1000", info.code === 1000, info)] };
  },
};
