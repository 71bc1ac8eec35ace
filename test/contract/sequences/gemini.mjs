// Gemini Live sequences, written from the Live API reference, replayed against the emulator
// (test/contract/gemini.test.ts) and the live service (scripts/check-live.mjs):
//   https://ai.google.dev/api/live (setup first, answered with setupComplete; a bad message closes the socket with a reason)
import { ContractSocket, check } from "./socket.mjs";

/** @typedef {{ url: string, auth: { protocols?: string[], headers?: Record<string, string> }, model: string }} GeminiTarget */

export const geminiSequences = {
  /** setup first: answered with setupComplete. */
  async "the setup"(/** @type {GeminiTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    try {
      s.send({ setup: { model: target.model, generationConfig: { responseModalities: ["AUDIO"] } } });
      await s.until((m) => m.some((x) => "setupComplete" in x), "setupComplete");
      return { messages: s.messages, checks: [check("setup is answered with setupComplete", true, Object.keys(s.messages[0] ?? {}))] };
    } finally {
      s.close();
    }
  },

  /** A message with an unknown field is refused: the socket closes with 1007 and a reason. */
  async "an error"(/** @type {GeminiTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    s.send({ setup: { model: target.model }, notAField: true });
    const info = await s.closed();
    return {
      messages: s.messages,
      checks: [
        check("the socket closes with 1007", info.code === 1007, info),
        check("the close has a reason", info.reason.length > 0, info.reason),
      ],
    };
  },

  /** The close handshake: the client's close 1000 is answered with 1000. */
  async "the close handshake"(/** @type {GeminiTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    s.send({ setup: { model: target.model } });
    await s.until((m) => m.some((x) => "setupComplete" in x), "setupComplete");
    s.close();
    const info = await s.closed();
    return { messages: s.messages, checks: [check("the server answers the client's close with 1000", info.code === 1000, info)] };
  },
};
