// ElevenLabs multi-context TTS sequences, written from the docs, replayed against the emulator
// (test/contract/elevenlabs.test.ts) and the live service (scripts/check-live.mjs):
//   https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input
//   https://elevenlabs.io/docs/eleven-api/guides/how-to/websockets/multi-context-web-socket
// A context's messages are only ordered against that context's; a later context that finishes
// (a sentinel) marks where a sequence has seen all it will see, with no clock.
import { ContractSocket, check } from "./socket.mjs";

/** @typedef {{ url: string, auth: { protocols?: string[], headers?: Record<string, string> } }} ElevenlabsTarget */

/** @param {Record<string, any>} m */
const contextOf = (m) => m.contextId ?? m.context_id;
/** @param {Record<string, any>} m */
const isFinal = (m) => m.isFinal === true || m.is_final === true;
/** @param {Record<string, any>} m */
const hasAudio = (m) => typeof m.audio === "string" && m.audio.length > 0;

/** Opens a context, sends `text` with flush and close_context, and waits for its isFinal. @param {ContractSocket} s @param {string} id */
async function sentinel(s, id) {
  s.send({ text: " ", context_id: id });
  s.send({ text: "Done. ", context_id: id });
  s.send({ context_id: id, flush: true });
  s.send({ context_id: id, close_context: true });
  await s.until((m) => m.some((x) => contextOf(x) === id && isFinal(x)), `isFinal of the sentinel context ${id}`);
}

export const elevenlabsSequences = {
  /** flush and close_context together (what the provider's end() sends): the context's audio, then one isFinal, once. */
  async "a flush then close"(/** @type {ElevenlabsTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    try {
      s.send({ text: " ", context_id: "ctx_a" });
      s.send({ text: "Hello there, this is the first context. ", context_id: "ctx_a" });
      s.send({ context_id: "ctx_a", flush: true });
      s.send({ context_id: "ctx_a", close_context: true });
      await s.until((m) => m.some((x) => contextOf(x) === "ctx_a" && isFinal(x)), "isFinal of ctx_a");
      await sentinel(s, "ctx_b");
      const mine = s.messages.filter((m) => contextOf(m) === "ctx_a");
      const finals = mine.filter(isFinal).length;
      const afterFinal = mine.slice(mine.findIndex(isFinal) + 1).filter(hasAudio).length;
      return {
        messages: s.messages,
        checks: [
          check("the flushed text is spoken", mine.some(hasAudio), `${mine.filter(hasAudio).length} audio messages`),
          check("exactly one isFinal for the context", finals === 1, `${finals} isFinal`),
          check("no audio after the context's isFinal", afterFinal === 0, `${afterFinal} audio messages after it`),
        ],
      };
    } finally {
      s.close();
    }
  },

  /** close_context without flush: text still buffered is not spoken ("no further audio" for a closed context). */
  async "a close without flush"(/** @type {ElevenlabsTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    try {
      s.send({ text: " ", context_id: "ctx_c" });
      s.send({ text: "some words never flushed", context_id: "ctx_c" });
      s.send({ context_id: "ctx_c", close_context: true });
      await sentinel(s, "ctx_d");
      const audio = s.messages.filter((m) => contextOf(m) === "ctx_c" && hasAudio(m)).length;
      return { messages: s.messages, checks: [check("no audio for the unflushed text of a closed context", audio === 0, `${audio} audio messages`)] };
    } finally {
      s.close();
    }
  },

  /** close_socket ends every context and the connection: the server closes with 1000. */
  async "the close handshake"(/** @type {ElevenlabsTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    s.send({ close_socket: true });
    const info = await s.closed();
    return { messages: s.messages, checks: [check("close_socket is answered with a close 1000", info.code === 1000, info)] };
  },
};
