// One Realtime response: the "model" (ELIZA, ../eliza.mjs) reads the conversation as it
// stands (core/realtime-conversation.mjs modelInput), then either speaks a reply (flite at
// 24 kHz, paced as the other TTS emulators) or calls a function tool. Events, in the order the
// server-events reference lists them for an audio reply:
//   response.created, response.output_item.added, conversation.item.added,
//   response.content_part.added, (response.output_audio_transcript.delta, response.output_audio.delta…)
//   per phrase, response.output_audio.done, response.output_audio_transcript.done,
//   response.content_part.done, response.output_item.done, conversation.item.done, response.done.
// A function call: …output_item.added, conversation.item.added, response.function_call_arguments
// .delta/.done, response.output_item.done, conversation.item.done, response.done.
// cancel() drops every message not yet sent (the paced sender asks `wanted` just before each
// send) and sends at once, for an audio reply, response.output_audio.done ("also emitted when a
// Response is interrupted, incomplete, or cancelled"), response.output_audio_transcript.done and
// response.content_part.done with the transcript sent so far, then response.output_item.done
// (incomplete) and response.done (cancelled), so no delta follows response.done.
//   https://platform.openai.com/docs/api-reference/realtime-server-events/response/output_audio/done
//   https://platform.openai.com/docs/api-reference/realtime-server-events (each event's fields; the
//   order of the events is the emulator's reading of them, not a documented sequence)
import { randomUUID } from "node:crypto";
import { planReply as planScripted } from "../core/scripted-model.mjs";
import { modelInput, wireItem } from "../core/realtime-conversation.mjs";
import { SpokenContext, base64Pcm, fliteVoice } from "./flite-speech.mjs";

const RATE = 24000;
/** Audio per response.output_audio.delta. */
const DELTA_S = 0.1;

/** @param {string} prefix */
export const newId = (prefix) => `${prefix}_${randomUUID().replace(/-/g, "").slice(0, 22)}`;

/**
 * What the scripted model does next (core/scripted-model.mjs), with the session's function tools.
 * @param {{ role: string, text: string }[]} input @param {{ type?: string, name?: string }[]} tools
 */
export const planReply = (input, tools) => planScripted(input, tools.filter((t) => t.type === "function" && typeof t.name === "string").map((t) => String(t.name)));

/**
 * @typedef {object} ResponseHost what a response needs from its socket
 * @property {(event: Record<string, unknown>) => void} sendNow              sends at once
 * @property {(event: Record<string, unknown>, seconds?: number, wanted?: () => boolean, onSent?: () => void) => Promise<void>} sendPaced
 * @property {() => import("../core/realtime-conversation.mjs").Item[]} items
 * @property {(item: import("../core/realtime-conversation.mjs").Item) => string | null} addItem  appends; returns previous_item_id
 * @property {(item: import("../core/realtime-conversation.mjs").Item) => void} replaceItem
 * @property {(entry: Record<string, unknown>) => void} log
 * @property {Record<string, any>} session
 */

export class RealtimeResponse {
  /** @param {ResponseHost} host @param {string} conversationId */
  constructor(host, conversationId) {
    this.host = host;
    this.id = newId("resp");
    this.conversationId = conversationId;
    /** @type {"in_progress" | "completed" | "cancelled"} */
    this.status = "in_progress";
    /** False once response.done is sent: nothing of this response goes out after it. */
    this.open = true;
    /** @type {import("../core/realtime-conversation.mjs").Item | null} */
    this.item = null;
    this.sentTranscript = "";
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
  }

  /** @param {"in_progress" | "completed" | "cancelled"} status @param {unknown[]} output @param {string} [reason] */
  resource(status, output, reason) {
    const voice = this.host.session.audio.output.voice;
    return {
      object: "realtime.response",
      id: this.id,
      status,
      status_details: reason ? { type: "cancelled", reason } : null,
      output,
      conversation_id: this.conversationId,
      output_modalities: ["audio"],
      max_output_tokens: "inf",
      audio: { output: { format: { type: "audio/pcm", rate: RATE }, voice } },
      usage: status === "in_progress" ? null : { total_tokens: 0, input_tokens: 0, output_tokens: 0 },
      metadata: null,
    };
  }

  start() {
    const input = modelInput(this.host.items());
    const plan = planReply(input, this.host.session.tools ?? []);
    this.host.log({ response_id: this.id, input, plan });
    this.host.sendNow({ type: "response.created", response: this.resource("in_progress", []) });
    const run = plan.kind === "message" ? this.speak(plan.text) : this.callFunction(plan.name, plan.arguments);
    run.then(() => this.resolveFinished?.(undefined));
  }

  /** @param {Record<string, unknown>} event @param {number} [seconds] @param {() => void} [onSent] */
  paced(event, seconds = 0, onSent) {
    return this.host.sendPaced(event, seconds, () => this.open, onSent);
  }

  /** @param {string} text */
  async speak(text) {
    const speech = new SpokenContext({ voice: fliteVoice(this.host.session.audio.output.voice), rate: RATE });
    speech.push(text);
    const phrases = speech.takePhrases(true);
    const tail = speech.finish();
    const totalSamples = phrases.reduce((n, p) => n + p.pcm.length, 0) + tail.length;
    const words = phrases.flatMap((p) => p.words);
    /** @type {import("../core/realtime-conversation.mjs").Item} */
    const item = {
      id: newId("item"),
      type: "message",
      role: "assistant",
      status: "in_progress",
      content: [{ type: "output_audio", transcript: text }],
      audio: { words, sentMs: 0, totalMs: (totalSamples / RATE) * 1000, truncatedMs: null, pcm: concat(phrases.reduce((all, p) => concat(all, p.pcm), new Float32Array(0)), tail) },
    };
    this.item = item;
    // The item's words with their times in its audio (s): what a bench needs to know which words a cut kept.
    this.host.log({ response_id: this.id, item_id: item.id, words: words.map((w) => ({ text: w.text, start: w.start, stop: w.stop })) });
    const previous = this.host.addItem(item);
    const ids = { response_id: this.id, item_id: item.id, output_index: 0, content_index: 0 };
    const shown = { ...wireItem(item), content: [] };
    this.host.sendNow({ type: "response.output_item.added", response_id: this.id, output_index: 0, item: shown });
    this.host.sendNow({ type: "conversation.item.added", previous_item_id: previous, item: shown });
    this.host.sendNow({ type: "response.content_part.added", ...ids, part: { type: "audio", transcript: "" } });
    const audio = /** @type {import("../core/realtime-conversation.mjs").AssistantAudio} */ (item.audio);
    const pieces = phrases.map((p, i) => ({ text: p.words.map((w) => w.text).join(" "), pcm: i === phrases.length - 1 ? concat(p.pcm, tail) : p.pcm }));
    // Spaces between phrases are decided as they are queued: sentTranscript grows only as each is sent.
    for (const [k, piece] of pieces.entries()) {
      const delta = (k > 0 ? " " : "") + piece.text;
      void this.paced({ type: "response.output_audio_transcript.delta", ...ids, delta }, 0, () => (this.sentTranscript += delta));
      const step = Math.round(DELTA_S * RATE);
      for (let at = 0; at < piece.pcm.length; at += step) {
        const chunk = piece.pcm.subarray(at, at + step);
        void this.paced({ type: "response.output_audio.delta", ...ids, delta: base64Pcm(chunk, "pcm_s16le") }, chunk.length / RATE, () => {
          audio.sentMs += (chunk.length / RATE) * 1000;
        });
      }
    }
    await this.paced({ type: "response.output_audio.done", ...ids });
    if (!this.open) return;
    const done = { ...this.current(), status: /** @type {const} */ ("completed") };
    this.host.replaceItem(done);
    this.finish("completed", [
      { type: "response.output_audio_transcript.done", ...ids, transcript: transcriptOf(done) },
      { type: "response.content_part.done", ...ids, part: { type: "audio", transcript: transcriptOf(done) } },
      { type: "response.output_item.done", response_id: this.id, output_index: 0, item: wireItem(done) },
      { type: "conversation.item.done", previous_item_id: previous, item: wireItem(done) },
    ], [wireItem(done)]);
  }

  /** The item as the conversation now holds it (a truncate may have replaced it). */
  current() {
    const item = /** @type {import("../core/realtime-conversation.mjs").Item} */ (this.item);
    return this.host.items().find((i) => i.id === item.id) ?? item;
  }

  /** @param {string} name @param {string} args */
  async callFunction(name, args) {
    /** @type {import("../core/realtime-conversation.mjs").Item} */
    const item = { id: newId("item"), type: "function_call", status: "in_progress", call_id: newId("call"), name, arguments: "" };
    this.item = item;
    const previous = this.host.addItem(item);
    const ids = { response_id: this.id, item_id: item.id, output_index: 0, call_id: /** @type {string} */ (item.call_id) };
    this.host.sendNow({ type: "response.output_item.added", response_id: this.id, output_index: 0, item: wireItem(item) });
    this.host.sendNow({ type: "conversation.item.added", previous_item_id: previous, item: wireItem(item) });
    await this.paced({ type: "response.function_call_arguments.delta", ...ids, delta: args });
    if (!this.open) return;
    const done = { ...item, status: /** @type {const} */ ("completed"), arguments: args };
    this.host.replaceItem(done);
    this.finish("completed", [
      { type: "response.function_call_arguments.done", ...ids, name, arguments: args },
      { type: "response.output_item.done", response_id: this.id, output_index: 0, item: wireItem(done) },
      { type: "conversation.item.done", previous_item_id: previous, item: wireItem(done) },
    ], [wireItem(done)]);
  }

  /**
   * Stops the response: nothing queued is sent after this. The reply keeps the transcript it
   * had sent; its audio stays what was sent (truncatable within that).
   * @param {"client_cancelled" | "turn_detected"} reason
   */
  cancel(reason) {
    if (!this.open) return false;
    const events = [];
    /** @type {unknown[]} */
    let output = [];
    if (this.item) {
      const now = this.current();
      const cut = { ...now, status: /** @type {const} */ ("incomplete"), ...(now.type === "message" ? { content: [{ type: "output_audio", transcript: this.sentTranscript }] } : {}) };
      this.host.replaceItem(cut);
      output = [wireItem(cut)];
      if (now.type === "message") {
        const ids = { response_id: this.id, item_id: now.id, output_index: 0, content_index: 0 };
        events.push(
          { type: "response.output_audio.done", ...ids },
          { type: "response.output_audio_transcript.done", ...ids, transcript: this.sentTranscript },
          { type: "response.content_part.done", ...ids, part: { type: "audio", transcript: this.sentTranscript } },
        );
      }
      events.push({ type: "response.output_item.done", response_id: this.id, output_index: 0, item: wireItem(cut) });
    }
    this.finish("cancelled", events, output, reason);
    this.resolveFinished?.(undefined);
    return true;
  }

  /** @param {"completed" | "cancelled"} status @param {Record<string, unknown>[]} events @param {unknown[]} output @param {string} [reason] */
  finish(status, events, output, reason) {
    if (!this.open) return;
    this.open = false;
    this.status = status;
    for (const event of events) this.host.sendNow(event);
    this.host.sendNow({ type: "response.done", response: this.resource(status, output, reason) });
    this.host.log({ response_id: this.id, status, reason: reason ?? null, sentTranscript: this.sentTranscript, audioSentMs: this.item?.audio?.sentMs ?? 0 });
  }
}

/** @param {import("../core/realtime-conversation.mjs").Item} item */
const transcriptOf = (item) => String(item.content?.[0]?.transcript ?? "");

/** @param {Float32Array} a @param {Float32Array} b */
function concat(a, b) {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
