// OpenAI Realtime (GA) sequences, written from the reference, replayed against the emulator
// (test/contract/openai.test.ts) and the live service (scripts/check-live.mjs):
//   https://platform.openai.com/docs/api-reference/realtime-server-events
//   https://platform.openai.com/docs/api-reference/realtime-client-events
import { ContractSocket, check, inOrder, typesOf } from "./socket.mjs";

const STORY = "tell me a long story";

/**
 * @typedef {object} RealtimeTarget
 * @property {string} url   the full wss URL, with ?model=
 * @property {{ protocols?: string[], headers?: Record<string, string> }} auth
 */

/** A session with the client's turn detection, and a user text turn asked to be answered. @param {RealtimeTarget} target */
async function storyResponse(target) {
  const s = new ContractSocket(target.url, target.auth);
  await s.opened;
  await s.until((m) => m.some((e) => e.type === "session.created"), "session.created");
  s.send({ type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null } } } });
  await s.until((m) => m.some((e) => e.type === "session.updated"), "session.updated");
  s.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: STORY }] } });
  s.send({ type: "response.create" });
  return s;
}

/** Milliseconds of output audio received (24 kHz s16). @param {Record<string, any>[]} messages */
const audioMs = (messages) =>
  messages.filter((m) => m.type === "response.output_audio.delta").reduce((ms, m) => ms + Buffer.from(m.delta, "base64").length / 48, 0);

export const openaiSequences = {
  /** "response.output_audio.done … is also emitted when a Response is interrupted, incomplete, or cancelled"; response.done is always emitted. */
  async "a cancel during a response"(/** @type {RealtimeTarget} */ target) {
    const s = await storyResponse(target);
    try {
      await s.until((m) => m.filter((e) => e.type === "response.output_audio.delta").length >= 2, "two audio deltas");
      s.send({ type: "response.cancel" });
      await s.until((m) => m.some((e) => e.type === "response.done"), "response.done");
      const types = typesOf(s.messages);
      const done = s.messages.find((e) => e.type === "response.done");
      const tail = types.slice(types.lastIndexOf("response.output_audio.delta") + 1);
      return {
        messages: s.messages,
        checks: [
          check("response.done has status cancelled", done?.response?.status === "cancelled", done?.response?.status),
          check(
            "output_audio.done, output_audio_transcript.done, content_part.done, output_item.done, then response.done",
            inOrder(types, ["response.output_audio.done", "response.output_audio_transcript.done", "response.content_part.done", "response.output_item.done", "response.done"]),
            tail,
          ),
          check("no audio delta after response.done", types.lastIndexOf("response.output_audio.delta") < types.indexOf("response.done"), tail),
        ],
      };
    } finally {
      s.close();
    }
  },

  /**
   * conversation.item.truncate: "Truncating audio will delete the server-side text transcript to ensure there is not
   * text in the context that hasn't been heard by the user"; conversation.item.retrieved "includes the audio data".
   */
  async "a truncate"(/** @type {RealtimeTarget} */ target) {
    const s = await storyResponse(target);
    try {
      await s.until((m) => audioMs(m) >= 600, "600 ms of output audio");
      s.send({ type: "response.cancel" });
      await s.until((m) => m.some((e) => e.type === "response.done"), "response.done");
      const itemId = s.messages.find((e) => e.type === "response.output_item.added")?.item?.id;
      s.send({ type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: 300 });
      await s.until((m) => m.some((e) => e.type === "conversation.item.truncated" || e.type === "error"), "conversation.item.truncated");
      const errorsBefore = s.messages.filter((e) => e.type === "error").length;
      s.send({ type: "conversation.item.retrieve", item_id: itemId });
      await s.until((m) => m.some((e) => e.type === "conversation.item.retrieved") || m.filter((e) => e.type === "error").length > errorsBefore, "conversation.item.retrieved");
      const truncated = s.messages.find((e) => e.type === "conversation.item.truncated");
      const part = s.messages.find((e) => e.type === "conversation.item.retrieved")?.item?.content?.[0] ?? {};
      const audioBytes = typeof part.audio === "string" ? Buffer.from(part.audio, "base64").length : 0;
      return {
        messages: s.messages,
        checks: [
          check("conversation.item.truncated echoes item_id, content_index 0 and audio_end_ms 300", truncated?.item_id === itemId && truncated?.content_index === 0 && truncated?.audio_end_ms === 300, truncated ?? s.messages.filter((e) => e.type === "error")),
          check("the truncated item's transcript is deleted", !part.transcript, part.transcript),
          check("conversation.item.retrieved carries the item's audio", audioBytes > 0, `${audioBytes} bytes`),
        ],
      };
    } finally {
      s.close();
    }
  },

  /** The error event: error{type, code, message, param, event_id}, event_id naming the client event that caused it. */
  async "an error"(/** @type {RealtimeTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    try {
      await s.until((m) => m.some((e) => e.type === "session.created"), "session.created");
      s.send({ type: "conversation.item.retrieve", event_id: "event_contract_1", item_id: "item_that_does_not_exist" });
      await s.until((m) => m.some((e) => e.type === "error"), "an error event");
      const error = s.messages.find((e) => e.type === "error")?.error ?? {};
      return {
        messages: s.messages,
        checks: [
          check("error has type, code, message, param and event_id", ["type", "code", "message", "param", "event_id"].every((k) => k in error), Object.keys(error)),
          check("error.event_id names the client event", error.event_id === "event_contract_1", error.event_id),
          check("error.type is invalid_request_error", error.type === "invalid_request_error", error.type),
        ],
      };
    } finally {
      s.close();
    }
  },

  /** The close handshake: the client's close 1000 is answered with 1000. */
  async "the close handshake"(/** @type {RealtimeTarget} */ target) {
    const s = new ContractSocket(target.url, target.auth);
    await s.opened;
    await s.until((m) => m.some((e) => e.type === "session.created"), "session.created");
    s.close();
    const info = await s.closed();
    return { messages: s.messages, checks: [check("the server answers the client's close with 1000", info.code === 1000, info)] };
  },
};
