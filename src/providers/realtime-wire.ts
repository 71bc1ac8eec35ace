/**
 * The OpenAI Realtime (GA) wire, as pure functions: the server events this
 * client acts on, decoded and checked into a typed union (every other event
 * type is skipped), and the client events it sends, built as plain objects.
 * No socket, no clock: test/unit/realtime-wire.test.ts runs the docs' example
 * messages (test/fixtures/openai-realtime/) and a fuzz through it.
 *
 * Field names and shapes follow the reference pages:
 *   https://platform.openai.com/docs/api-reference/realtime-server-events
 *   https://platform.openai.com/docs/api-reference/realtime-client-events
 * Audio is PCM 16-bit, 24 kHz mono, base64 in `input_audio_buffer.append.audio`
 * and `response.output_audio.delta.delta`.
 *
 * Size limits: the socket refuses a frame over `maxMessageBytes` before it is
 * parsed (MessageSocket); here a transcript or argument text is capped at
 * MAX_TEXT_CHARS and an audio delta at MAX_AUDIO_DELTA_CHARS of base64, so no
 * single event can hold more than the player or the history should keep.
 */
import { base64Bytes } from "./pcm-base64.js";
import type { ToolDefinition } from "./types.js";
import { parseJsonFrame, protocolError, type WireContext } from "./wire.js";

export const REALTIME_RATE = 24000;
/** 10 s of 24 kHz s16 as base64: far more than one delta the service sends (~100 ms). */
export const MAX_AUDIO_DELTA_CHARS = Math.ceil((REALTIME_RATE * 2 * 10) / 3) * 4;
/** One transcript delta, transcript or tool-call argument text. */
export const MAX_TEXT_CHARS = 64 * 1024;
/** Default cap on one inbound frame: an audio delta at the limit plus its JSON envelope. */
export const DEFAULT_REALTIME_MAX_BYTES = MAX_AUDIO_DELTA_CHARS + 64 * 1024;

export type TurnDetection = "client" | "server_vad" | "semantic_vad";

/** A function call the model finished (`response.output_item.done` of a function_call item). */
export interface RealtimeFunctionCall {
  itemId: string;
  callId: string;
  name: string;
  arguments: string;
}

/** The server events the client acts on. */
export type RealtimeServerEvent =
  | { type: "session.created" | "session.updated" }
  | { type: "error"; message: string; code: string | null; errorType: string; clientEventId: string | null }
  | { type: "input_audio_buffer.committed"; itemId: string }
  | { type: "input_audio_buffer.speech_started"; itemId: string; audioStartMs: number }
  | { type: "input_audio_buffer.speech_stopped"; itemId: string; audioEndMs: number }
  | { type: "input_transcript"; itemId: string; transcript: string }
  | { type: "input_transcript_failed"; itemId: string; message: string }
  | { type: "response.created"; responseId: string }
  | { type: "response.output_audio_transcript.delta"; responseId: string; itemId: string; delta: string }
  /** `pcm`: the delta's s16 samples, as bytes (little-endian; a torn sample waits for the next delta). */
  | { type: "response.output_audio.delta"; responseId: string; itemId: string; pcm: Uint8Array }
  | { type: "function_call"; responseId: string; call: RealtimeFunctionCall }
  | { type: "response.done"; responseId: string; status: string; reason: string | null }
  | { type: "conversation.item.truncated"; itemId: string; audioEndMs: number };

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, ctx: WireContext, type: string, max = MAX_TEXT_CHARS): string {
  const v = o[key];
  if (typeof v !== "string") throw protocolError(ctx, `${type} has no string "${key}"`);
  if (v.length > max) throw protocolError(ctx, `${type}.${key} is ${v.length} characters, over the limit of ${max}`);
  return v;
}

function int(o: Obj, key: string, ctx: WireContext, type: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw protocolError(ctx, `${type} has no number "${key}" ≥ 0`);
  return v;
}

function obj(o: Obj, key: string, ctx: WireContext, type: string): Obj {
  const v = o[key];
  if (!isObj(v)) throw protocolError(ctx, `${type} has no object "${key}"`);
  return v;
}

const optStr = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * Decodes one text frame into the event the client acts on, or undefined for
 * an event it does not need. A frame that is not a JSON object with a string
 * `type`, or a needed event with a missing or wrong field, is a ProtocolError.
 */
export function decodeRealtimeEvent(data: ArrayBuffer | string, ctx: WireContext): RealtimeServerEvent | undefined {
  const m = parseJsonFrame(data, ctx);
  if (!isObj(m) || typeof m.type !== "string") throw protocolError(ctx, 'a message is not a JSON object with a string "type"');
  const type = m.type;
  switch (type) {
    case "session.created":
    case "session.updated":
      return { type };
    case "error": {
      const e = obj(m, "error", ctx, type);
      return { type, message: str(e, "message", ctx, "error.error"), code: optStr(e.code), errorType: optStr(e.type) ?? "error", clientEventId: optStr(e.event_id) };
    }
    case "input_audio_buffer.committed":
      return { type, itemId: str(m, "item_id", ctx, type) };
    case "input_audio_buffer.speech_started":
      return { type, itemId: str(m, "item_id", ctx, type), audioStartMs: int(m, "audio_start_ms", ctx, type) };
    case "input_audio_buffer.speech_stopped":
      return { type, itemId: str(m, "item_id", ctx, type), audioEndMs: int(m, "audio_end_ms", ctx, type) };
    case "conversation.item.input_audio_transcription.completed":
      return { type: "input_transcript", itemId: str(m, "item_id", ctx, type), transcript: str(m, "transcript", ctx, type) };
    case "conversation.item.input_audio_transcription.failed": {
      const e = isObj(m.error) ? m.error : {};
      return { type: "input_transcript_failed", itemId: str(m, "item_id", ctx, type), message: optStr(e.message) ?? "the transcription failed" };
    }
    case "response.created":
      return { type, responseId: str(obj(m, "response", ctx, type), "id", ctx, `${type}.response`) };
    case "response.output_audio_transcript.delta":
      return { type, responseId: str(m, "response_id", ctx, type), itemId: str(m, "item_id", ctx, type), delta: str(m, "delta", ctx, type) };
    case "response.output_audio.delta": {
      const delta = str(m, "delta", ctx, type, MAX_AUDIO_DELTA_CHARS);
      return { type, responseId: str(m, "response_id", ctx, type), itemId: str(m, "item_id", ctx, type), pcm: base64Bytes(delta, ctx, `${type}.delta`) };
    }
    case "response.output_item.done": {
      const item = obj(m, "item", ctx, type);
      if (item.type !== "function_call") return undefined;
      const call = {
        itemId: str(item, "id", ctx, `${type}.item`),
        callId: str(item, "call_id", ctx, `${type}.item`),
        name: str(item, "name", ctx, `${type}.item`),
        arguments: typeof item.arguments === "string" ? str(item, "arguments", ctx, `${type}.item`) : "",
      };
      return { type: "function_call", responseId: str(m, "response_id", ctx, type), call };
    }
    case "response.done": {
      const r = obj(m, "response", ctx, type);
      const details = isObj(r.status_details) ? r.status_details : {};
      return { type, responseId: str(r, "id", ctx, `${type}.response`), status: optStr(r.status) ?? "completed", reason: optStr(details.reason) };
    }
    case "conversation.item.truncated":
      return { type, itemId: str(m, "item_id", ctx, type), audioEndMs: int(m, "audio_end_ms", ctx, type) };
    default:
      return undefined;
  }
}

// ─── client events ──────────────────────────────────────────────────────────

export interface SessionConfig {
  instructions?: string;
  voice?: string;
  turnDetection: TurnDetection;
  /** The input transcription model; the history needs the user's words. */
  transcriptionModel: string;
  tools?: readonly ToolDefinition[];
}

/**
 * `session.update`. Client turn detection is `turn_detection: null` (the
 * reference: null turns it off). With server turn detection the server
 * commits the buffer, but responses and interruptions stay the client's
 * (create_response and interrupt_response false): bargein starts a reply when
 * its turn machine decides, and cuts one only with a truncate it computed.
 */
export function sessionUpdate(config: SessionConfig): Obj {
  const detection =
    config.turnDetection === "client" ? null : { type: config.turnDetection, create_response: false, interrupt_response: false };
  const session: Record<string, unknown> = {
    type: "realtime",
    output_modalities: ["audio"],
    audio: {
      input: { format: { type: "audio/pcm", rate: REALTIME_RATE }, turn_detection: detection, transcription: { model: config.transcriptionModel } },
      output: { format: { type: "audio/pcm", rate: REALTIME_RATE }, ...(config.voice ? { voice: config.voice } : {}) },
    },
  };
  if (config.instructions !== undefined) session.instructions = config.instructions;
  if (config.tools) session.tools = toolsOf(config.tools);
  return { type: "session.update", session };
}

export function toolsOf(tools: readonly ToolDefinition[]): unknown[] {
  return tools.map((t) => ({ type: "function", name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters }));
}

/** Little-endian s16 bytes of `pcm` (float in -1..1 clamped, or s16 as is), as base64. */
export function pcm16Base64(pcm: Float32Array | Int16Array): string {
  const bytes = new Uint8Array(pcm.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm instanceof Int16Array ? pcm[i]! : Math.round(Math.max(-1, Math.min(1, pcm[i]!)) * 32767);
    view.setInt16(i * 2, v, true);
  }
  let binary = "";
  // In slices: String.fromCharCode over a huge spread overflows the call stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const appendAudio = (pcm: Float32Array | Int16Array): Obj => ({ type: "input_audio_buffer.append", audio: pcm16Base64(pcm) });
export const commitInput = (eventId: string): Obj => ({ type: "input_audio_buffer.commit", event_id: eventId });
export const createResponse = (eventId: string): Obj => ({ type: "response.create", event_id: eventId });
export const cancelResponse = (responseId: string): Obj => ({ type: "response.cancel", response_id: responseId });
export const truncateItem = (itemId: string, audioEndMs: number): Obj => ({ type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: audioEndMs });
export const userText = (text: string): Obj => ({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text }] } });
/**
 * An earlier message put back into a new conversation (a reconnect, or the session's seeded
 * history), after `previousItemId` ("root": first). The GA content types: input_text for the
 * user, output_text for the assistant (https://platform.openai.com/docs/api-reference/realtime-client-events/conversation/item/create).
 */
export const historyItem = (id: string, role: "user" | "assistant", text: string, previousItemId: string): Obj => ({
  type: "conversation.item.create",
  previous_item_id: previousItemId,
  item: { id, type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text }] },
});
/**
 * What the user heard of a cut reply, for the model: a system message after `previousItemId` (the
 * truncated item). The truncate deletes the item's transcript
 * (https://platform.openai.com/docs/api-reference/realtime-client-events/conversation/item/truncate),
 * so the heard text is the client's to give; system messages take input_text.
 */
export const heardNoteItem = (text: string, previousItemId: string): Obj => ({
  type: "conversation.item.create",
  previous_item_id: previousItemId,
  item: { type: "message", role: "system", content: [{ type: "input_text", text }] },
});
export const functionCallOutput = (callId: string, output: string): Obj => ({ type: "conversation.item.create", item: { type: "function_call_output", call_id: callId, output } });
