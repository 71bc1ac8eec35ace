/**
 * The Gemini Live wire (the Live API's BidiGenerateContent WebSocket), as
 * pure functions: each server message decoded and checked into the events
 * this client acts on (one message may carry several: a serverContent with
 * audio and turnComplete, say), and the client messages it sends, built as
 * plain objects. No socket, no clock: test/unit/gemini-wire.test.ts runs the
 * docs' example messages (test/fixtures/gemini-live/) and broken ones through it.
 *
 * Field names and shapes follow the reference and the guides:
 *   https://ai.google.dev/api/live  (BidiGenerateContentSetup, …ClientContent,
 *     …RealtimeInput, …ToolResponse, …ServerMessage: setupComplete,
 *     serverContent, toolCall, toolCallCancellation, goAway, usageMetadata)
 *   https://ai.google.dev/gemini-api/docs/live-guide  (audio: input 16-bit PCM
 *     at 16 kHz, `audio/pcm;rate=16000`; output 24 kHz; activity detection;
 *     transcriptions; interruptions)
 *   https://ai.google.dev/gemini-api/docs/live-tools
 * The service sends its JSON in text frames or in binary frames (UTF-8); both
 * are read. Size limits: the socket refuses a frame over `maxMessageBytes`
 * before it is parsed (MessageSocket); here a text field is capped at
 * MAX_TEXT_CHARS and one audio part at MAX_AUDIO_PART_CHARS of base64.
 */
import { ProtocolError } from "../errors.js";
import { base64Bytes } from "./pcm-base64.js";
import { pcm16Base64 } from "./realtime-wire.js";
import type { ToolDefinition } from "./types.js";
import { protocolError, type WireContext } from "./wire.js";

export const SERVICE = "gemini-live";
export const GEMINI_INPUT_RATE = 16000;
export const GEMINI_OUTPUT_RATE = 24000;
export const INPUT_MIME = `audio/pcm;rate=${GEMINI_INPUT_RATE}`;
/** 10 s of 24 kHz s16 as base64: far more than one part the service sends. */
export const MAX_AUDIO_PART_CHARS = Math.ceil((GEMINI_OUTPUT_RATE * 2 * 10) / 3) * 4;
export const MAX_TEXT_CHARS = 64 * 1024;
/** Default cap on one inbound frame: an audio part at the limit plus its envelope. */
export const DEFAULT_GEMINI_MAX_BYTES = MAX_AUDIO_PART_CHARS + 64 * 1024;

export type GeminiTurnDetection = "client" | "server";

export interface GeminiFunctionCall {
  id: string;
  name: string;
  /** The arguments as JSON text ("{}" when the call has none). */
  arguments: string;
}

/** What one server message says, in the order to act on it. */
export type GeminiEvent =
  | { type: "setupComplete" }
  | { type: "inputTranscription"; text: string }
  | { type: "outputTranscription"; text: string }
  /** `pcm`: s16 little-endian bytes of one inlineData part (a torn sample waits for the next). */
  | { type: "audio"; pcm: Uint8Array }
  | { type: "interrupted" }
  | { type: "generationComplete" }
  | { type: "turnComplete" }
  | { type: "toolCall"; calls: GeminiFunctionCall[] }
  | { type: "toolCallCancellation"; ids: string[] }
  | { type: "goAway"; timeLeft: string | null };

type Obj = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function text(v: unknown, ctx: WireContext, what: string, max = MAX_TEXT_CHARS): string {
  if (typeof v !== "string") throw protocolError(ctx, `${what} is not a string`);
  if (v.length > max) throw protocolError(ctx, `${what} is ${v.length} characters, over the limit of ${max}`);
  return v;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Parses one frame: JSON in a text frame, or UTF-8 JSON in a binary frame. */
function parseFrame(data: ArrayBuffer | string, ctx: WireContext): unknown {
  let json: string;
  try {
    json = typeof data === "string" ? data : decoder.decode(data);
  } catch (err) {
    throw protocolError(ctx, "a binary message is not UTF-8 JSON", err);
  }
  try {
    return JSON.parse(json);
  } catch (err) {
    throw protocolError(ctx, "a message is not valid JSON", err);
  }
}

/**
 * Decodes one frame into the events it carries (possibly none: usageMetadata
 * alone, sessionResumptionUpdate and other messages this client does not
 * need). A frame that is not a JSON object, or a needed field of the wrong
 * type, is a ProtocolError.
 */
export function decodeGeminiMessage(data: ArrayBuffer | string, ctx: WireContext): GeminiEvent[] {
  const m = parseFrame(data, ctx);
  if (!isObj(m)) throw protocolError(ctx, "a message is not a JSON object");
  const events: GeminiEvent[] = [];
  if (m.setupComplete !== undefined) events.push({ type: "setupComplete" });
  if (m.serverContent !== undefined) {
    const c = m.serverContent;
    if (!isObj(c)) throw protocolError(ctx, "serverContent is not an object");
    if (c.inputTranscription !== undefined) {
      const t = isObj(c.inputTranscription) ? c.inputTranscription.text : undefined;
      if (t !== undefined) events.push({ type: "inputTranscription", text: text(t, ctx, "serverContent.inputTranscription.text") });
    }
    if (c.interrupted === true) events.push({ type: "interrupted" });
    if (c.modelTurn !== undefined) {
      if (!isObj(c.modelTurn)) throw protocolError(ctx, "serverContent.modelTurn is not an object");
      const parts = c.modelTurn.parts ?? [];
      if (!Array.isArray(parts)) throw protocolError(ctx, "serverContent.modelTurn.parts is not an array");
      for (const part of parts) {
        if (!isObj(part) || part.inlineData === undefined) continue; // text or thought parts: the transcription carries the words
        const inline = part.inlineData;
        if (!isObj(inline)) throw protocolError(ctx, "a modelTurn part's inlineData is not an object");
        const mime = typeof inline.mimeType === "string" ? inline.mimeType : "";
        if (!mime.startsWith("audio/pcm")) continue;
        const rate = /rate=(\d+)/.exec(mime)?.[1];
        if (rate !== undefined && Number(rate) !== GEMINI_OUTPUT_RATE) throw protocolError(ctx, `the model's audio is ${mime}; this client plays audio/pcm;rate=${GEMINI_OUTPUT_RATE}`);
        const data64 = text(inline.data, ctx, "inlineData.data", MAX_AUDIO_PART_CHARS);
        events.push({ type: "audio", pcm: base64Bytes(data64, ctx, "inlineData.data") });
      }
    }
    if (c.outputTranscription !== undefined) {
      const t = isObj(c.outputTranscription) ? c.outputTranscription.text : undefined;
      if (t !== undefined) events.push({ type: "outputTranscription", text: text(t, ctx, "serverContent.outputTranscription.text") });
    }
    if (c.generationComplete === true) events.push({ type: "generationComplete" });
    if (c.turnComplete === true) events.push({ type: "turnComplete" });
  }
  if (m.toolCall !== undefined) {
    const calls = isObj(m.toolCall) ? m.toolCall.functionCalls : undefined;
    if (!Array.isArray(calls)) throw protocolError(ctx, "toolCall.functionCalls is not an array");
    events.push({
      type: "toolCall",
      calls: calls.map((c, i) => {
        if (!isObj(c)) throw protocolError(ctx, `toolCall.functionCalls[${i}] is not an object`);
        const args = c.args === undefined ? {} : c.args;
        if (!isObj(args)) throw protocolError(ctx, `toolCall.functionCalls[${i}].args is not an object`);
        const json = JSON.stringify(args);
        if (json.length > MAX_TEXT_CHARS) throw protocolError(ctx, `toolCall.functionCalls[${i}].args is ${json.length} characters, over the limit of ${MAX_TEXT_CHARS}`);
        return { id: text(c.id, ctx, `toolCall.functionCalls[${i}].id`), name: text(c.name, ctx, `toolCall.functionCalls[${i}].name`), arguments: json };
      }),
    });
  }
  if (m.toolCallCancellation !== undefined) {
    const ids = isObj(m.toolCallCancellation) ? m.toolCallCancellation.ids : undefined;
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === "string")) throw protocolError(ctx, "toolCallCancellation.ids is not an array of strings");
    events.push({ type: "toolCallCancellation", ids: ids as string[] });
  }
  if (m.goAway !== undefined) {
    const left = isObj(m.goAway) && typeof m.goAway.timeLeft === "string" ? m.goAway.timeLeft : null;
    events.push({ type: "goAway", timeLeft: left });
  }
  return events;
}

// ─── client messages ────────────────────────────────────────────────────────

export interface GeminiSetupConfig {
  /** "models/…"; a bare model name gets the prefix. */
  model: string;
  instructions?: string;
  voice?: string;
  turnDetection: GeminiTurnDetection;
  tools?: readonly ToolDefinition[];
}

/**
 * `setup`, the first message. Client turn detection disables automatic
 * activity detection (the client sends activityStart / activityEnd) and keeps
 * START_OF_ACTIVITY_INTERRUPTS, the default: this client sends activityStart
 * only when a user turn really begins (gemini-live.ts). Server detection
 * keeps the service's VAD but with NO_INTERRUPTION: the service ends turns,
 * bargein decides interruptions (its clientContent note interrupts the model).
 * Both transcriptions are on: the history needs the words.
 */
export function setupMessage(config: GeminiSetupConfig): Obj {
  const setup: Record<string, unknown> = {
    model: config.model.startsWith("models/") ? config.model : `models/${config.model}`,
    generationConfig: {
      responseModalities: ["AUDIO"],
      ...(config.voice ? { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: config.voice } } } } : {}),
    },
    realtimeInputConfig:
      config.turnDetection === "client"
        ? { automaticActivityDetection: { disabled: true }, activityHandling: "START_OF_ACTIVITY_INTERRUPTS" }
        : { automaticActivityDetection: { disabled: false }, activityHandling: "NO_INTERRUPTION" },
    inputAudioTranscription: {},
    outputAudioTranscription: {},
  };
  if (config.instructions !== undefined) setup.systemInstruction = { parts: [{ text: config.instructions }] };
  if (config.tools?.length) setup.tools = [{ functionDeclarations: functionDeclarations(config.tools) }];
  return { setup };
}

export function functionDeclarations(tools: readonly ToolDefinition[]): unknown[] {
  return tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters }));
}

export const audioInput = (pcm: Float32Array | Int16Array): Obj => ({ realtimeInput: { audio: { data: pcm16Base64(pcm), mimeType: INPUT_MIME } } });
export const activityStart = (): Obj => ({ realtimeInput: { activityStart: {} } });
export const activityEnd = (): Obj => ({ realtimeInput: { activityEnd: {} } });
export const userTurn = (text: string, turnComplete: boolean): Obj => ({ clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete } });

/**
 * The conversation so far, for a new socket's empty context: one clientContent with the turns in
 * order and no reply asked for, as the Live API guide restores a session's context
 * (https://ai.google.dev/gemini-api/docs/live-session, "incremental content updates").
 */
export const contextTurns = (turns: ReadonlyArray<{ role: "user" | "model"; text: string }>): Obj => ({
  clientContent: { turns: turns.map((t) => ({ role: t.role, parts: [{ text: t.text }] })), turnComplete: false },
});

/** The app's tool results; a result that is not a JSON object is wrapped as { output } (FunctionResponse.response is an object). */
export function toolResponse(results: ReadonlyArray<{ id: string; name: string; output: string }>): Obj {
  return {
    toolResponse: {
      functionResponses: results.map((r) => {
        let response: unknown;
        try {
          response = JSON.parse(r.output);
        } catch {
          response = undefined;
        }
        return { id: r.id, name: r.name, response: isObj(response) ? response : { output: r.output } };
      }),
    },
  };
}

/**
 * The note that tells the model what the user heard of its interrupted turn
 * (heard-note.ts). The Live API keeps what was sent to the client and has no
 * truncate; a clientContent turn is the only way the docs give to add to the context.
 */
export { heardNote } from "./heard-note.js";

/** The reason of a close that refused us, as an error; undefined for an ordinary drop. */
export function closeError(info: { code: number; reason: string }, ctx: WireContext, when: string): ProtocolError | undefined {
  if (!info.reason || (info.code !== 1007 && info.code !== 1008 && info.code !== 1009)) return undefined;
  const hint = /key|token/i.test(info.reason) ? "; check that the token function returns a fresh ephemeral token (auth_tokens/…, one use each)" : "";
  return new ProtocolError(`${SERVICE} at ${ctx.url}: the service closed the session${when ? ` ${when}` : ""}: "${info.reason}" (close ${info.code})${hint}`, { service: SERVICE, url: ctx.url });
}
