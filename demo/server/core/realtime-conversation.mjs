// The conversation of one OpenAI Realtime socket, as pure data: an ordered list of items
// (user audio or text messages, assistant audio messages, function calls and their
// outputs), and the operations the protocol has on it: add, delete and truncate. No I/O
// and no clock; the emulator (emulators/openai-realtime.mjs) sends what these return.
// Shapes follow the GA reference's item object (realtime.item with type message |
// function_call | function_call_output) and the conversation guide:
//   https://platform.openai.com/docs/api-reference/realtime-server-events/conversation/item/added
//   https://platform.openai.com/docs/api-reference/realtime-client-events/conversation/item/truncate
// Truncation cuts the item's audio and deletes its transcript: "Truncating audio will delete the
// server-side text transcript to ensure there is not text in the context that hasn't been heard by
// the user" (the truncate reference below). The emulator's model reads text, not audio, so a
// truncated reply reads as nothing to it: what it knows of the heard part is what the client tells
// it. The words whose midpoint lies inside the kept audio (the rule of the SDK's history,
// src/session/history.ts splitHeard) are still logged as `heard`, for tests and benches.
// conversation.item.retrieved "includes the audio data": wireItem(item, { audio: true }).
//   https://platform.openai.com/docs/api-reference/realtime-server-events/conversation/item/retrieved
// Error wordings: "Audio content of {X}ms is already shorter than {Y}ms" (invalid_request_error,
// invalid_value; pipecat-ai/pipecat#2106, #925) and "Only model output audio messages can be
// truncated" (livekit/agents#1016, #6249) are the service's as users quote them; the others
// (unknown item, bad content_index, duplicate id) are this emulator's own, in the same style.

/**
 * An assistant item's speech, as the emulator produced it.
 * @typedef {object} AssistantAudio
 * @property {{ text: string, start: number, stop: number }[]} words  seconds from the item's first sample
 * @property {number} sentMs     audio sent to the client so far
 * @property {number} totalMs    audio synthesised for the item
 * @property {number | null} truncatedMs  where a truncate cut it, or null
 * @property {Float32Array} [pcm]  the item's audio at 24 kHz, for conversation.item.retrieved
 */

/**
 * @typedef {object} Item
 * @property {string} id
 * @property {"message" | "function_call" | "function_call_output"} type
 * @property {"user" | "assistant" | "system"} [role]
 * @property {"in_progress" | "completed" | "incomplete"} status
 * @property {Record<string, unknown>[]} [content]
 * @property {string} [call_id]
 * @property {string} [name]
 * @property {string} [arguments]
 * @property {string} [output]
 * @property {AssistantAudio} [audio]   assistant messages only; not on the wire
 * @property {string} [heard]   user audio messages: what the recogniser heard, which the "model"
 *   reads whether or not input transcription is on; not on the wire
 * @property {Buffer} [inputAudio]   user audio messages: the committed s16 24 kHz bytes; on the wire
 *   only in conversation.item.retrieved
 */

/** @typedef {{ type: string, code: string | null, message: string, param: string | null }} RealtimeErrorBody */

/** @param {string} message @param {string | null} code @param {string | null} [param] @returns {RealtimeErrorBody} */
const invalid = (message, code, param = null) => ({ type: "invalid_request_error", code, message, param });

/**
 * The item as the wire shows it (no bookkeeping). With `audio`, as conversation.item.retrieved
 * shows it: an audio content part carries its audio, base64 s16 at 24 kHz (an assistant's up to
 * what was sent or kept by a truncate).
 * @param {Item} item @param {{ audio?: boolean }} [options]
 */
export function wireItem(item, options = {}) {
  const { audio, heard: _heard, inputAudio, ...rest } = item;
  if (!options.audio) return { object: "realtime.item", ...rest };
  let bytes = inputAudio;
  if (audio?.pcm) {
    const kept = Math.min(audio.pcm.length, Math.floor(((audio.truncatedMs ?? audio.sentMs) / 1000) * 24000));
    bytes = Buffer.alloc(kept * 2);
    for (let i = 0; i < kept; i++) bytes.writeInt16LE(Math.round(Math.max(-1, Math.min(1, audio.pcm[i])) * 32767), i * 2);
  }
  const content = (rest.content ?? []).map((part, i) => (i === 0 && bytes ? { ...part, audio: bytes.toString("base64") } : part));
  return { object: "realtime.item", ...rest, content };
}

/** @param {Item[]} items @param {string} id */
export function findItem(items, id) {
  return items.find((i) => i.id === id);
}

/**
 * Appends `item`, or inserts it after `previousId` when given ("root" puts it first).
 * @param {Item[]} items @param {Item} item @param {string | null | undefined} previousId
 * @returns {{ items: Item[], previousId: string | null } | { error: RealtimeErrorBody }}
 */
export function addItem(items, item, previousId) {
  if (findItem(items, item.id)) return { error: invalid(`Item with id '${item.id}' already exists.`, "item_id_already_exists", "item.id") };
  if (previousId === undefined || previousId === null) return { items: [...items, item], previousId: items.at(-1)?.id ?? null };
  if (previousId === "root") return { items: [item, ...items], previousId: null };
  const at = items.findIndex((i) => i.id === previousId);
  if (at < 0) return { error: invalid(`Item with id '${previousId}' not found.`, "item_not_found", "previous_item_id") };
  return { items: [...items.slice(0, at + 1), item, ...items.slice(at + 1)], previousId };
}

/** @param {Item[]} items @param {string} id @returns {{ items: Item[] } | { error: RealtimeErrorBody }} */
export function deleteItem(items, id) {
  if (!findItem(items, id)) return { error: invalid(`Error deleting item: the item with id '${id}' does not exist.`, "item_not_found", "item_id") };
  return { items: items.filter((i) => i.id !== id) };
}

/**
 * The words of `audio` heard up to `endMs`: those whose midpoint is at or before it.
 * @param {AssistantAudio} audio @param {number} endMs
 */
export function heardWords(audio, endMs) {
  return audio.words.filter((w) => ((w.start + w.stop) / 2) * 1000 <= endMs).map((w) => w.text);
}

/**
 * `conversation.item.truncate`: cuts an assistant message's audio to `audioEndMs` and its
 * transcript to the heard words. Refused (and nothing changes) for an unknown item, an item
 * that is not the model's audio, a content index other than the audio part's, and a cut past
 * the audio sent. (One trace, ReviewStage/luke#564, shows the service clamping and truncating
 * anyway after that last refusal; the docs say only that it errors, so nothing is cut here.)
 * @param {Item[]} items
 * @param {{ item_id?: unknown, content_index?: unknown, audio_end_ms?: unknown }} request
 * @returns {{ items: Item[], item: Item, audioEndMs: number, heard: string } | { error: RealtimeErrorBody, audioSentMs?: number }}
 */
export function truncateItem(items, { item_id, content_index, audio_end_ms }) {
  if (typeof item_id !== "string") return { error: invalid("Missing required parameter: 'item_id'.", "missing_required_parameter", "item_id") };
  if (!Number.isInteger(audio_end_ms) || /** @type {number} */ (audio_end_ms) < 0) {
    return { error: invalid(`Invalid 'audio_end_ms': integer below minimum value. Expected a value >= 0, but got ${JSON.stringify(audio_end_ms)} instead.`, "integer_below_min_value", "audio_end_ms") };
  }
  const endMs = /** @type {number} */ (audio_end_ms);
  const item = findItem(items, item_id);
  if (!item) return { error: invalid(`Conversation item with id '${item_id}' not found.`, "item_not_found", "item_id") };
  const audio = item.audio;
  if (item.type !== "message" || item.role !== "assistant" || !audio) return { error: invalid("Only model output audio messages can be truncated", "invalid_value", "item_id") };
  if (content_index !== 0) return { error: invalid(`Invalid 'content_index': the item has no audio content at index ${JSON.stringify(content_index)}.`, "invalid_value", "content_index") };
  const audioSentMs = Math.floor(audio.truncatedMs ?? audio.sentMs);
  if (endMs > audioSentMs) return { error: invalid(`Audio content of ${audioSentMs}ms is already shorter than ${endMs}ms`, "invalid_value"), audioSentMs };
  const heard = heardWords(audio, endMs).join(" ");
  const cut = {
    ...item,
    status: /** @type {const} */ ("incomplete"),
    content: (item.content ?? []).map((part, i) => (i === 0 ? { ...part, transcript: "" } : part)),
    audio: { ...audio, truncatedMs: endMs },
  };
  return { items: items.map((i) => (i.id === item_id ? cut : i)), item: cut, audioEndMs: endMs, heard };
}

/**
 * What the "model" (ELIZA) reads for the next response: one line per item, in order, with
 * each message's text or transcript as it now stands (a truncated reply reads its heard part).
 * @param {Item[]} items
 * @returns {{ role: string, text: string }[]}
 */
export function modelInput(items) {
  return items.map((item) => {
    if (item.type === "function_call") return { role: "function_call", text: `${item.name}(${item.arguments ?? ""})` };
    if (item.type === "function_call_output") return { role: "function_call_output", text: item.output ?? "" };
    const text = item.heard ?? (item.content ?? []).map((p) => String(p.text ?? p.transcript ?? "")).join(" ").trim();
    return { role: item.role ?? "user", text };
  });
}
