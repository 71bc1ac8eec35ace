/**
 * Deepgram's live-transcription messages, read into typed values: the pure part of
 * `deepgramStt`, so it can be fuzzed on its own. Every message is a JSON text frame
 * tagged by `type`; a field that does not have the documented shape is a ProtocolError
 * naming the message and the field. Unknown types are returned as `other` (a newer
 * server may add some), never an error.
 *
 * Shapes from https://developers.deepgram.com/reference/speech-to-text/listen-streaming
 * (v1 Results, SpeechStarted, UtteranceEnd, Metadata), docs/finalize (`from_finalize`),
 * docs/speech-started and docs/flux/state (v2 Connected, TurnInfo and its events).
 */
import { numberField, protocolError, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** A recognised word with its span in the stream's audio, in seconds (Flux words may have no span). */
export interface DeepgramWord {
  text: string;
  startS?: number;
  endS?: number;
}

export type NovaMessage =
  | { type: "Results"; isFinal: boolean; speechFinal: boolean; fromFinalize: boolean; startS: number; durationS: number; words: DeepgramWord[] }
  | { type: "SpeechStarted"; timestampS: number }
  | { type: "UtteranceEnd"; lastWordEndS: number }
  | { type: "other"; name: string };

export const FLUX_EVENTS = ["StartOfTurn", "Update", "EagerEndOfTurn", "TurnResumed", "EndOfTurn"] as const;
export type FluxEventName = (typeof FLUX_EVENTS)[number];

export type FluxMessage =
  | { type: "Connected" }
  | {
      type: "TurnInfo";
      event: FluxEventName;
      turnIndex: number;
      windowStartS: number;
      windowEndS: number;
      words: DeepgramWord[];
      endOfTurnConfidence: number;
    }
  | { type: "Error"; code: string; description: string }
  | { type: "other"; name: string };

/** Reads one v1 (/v1/listen) message. */
export function parseNovaMessage(msg: TaggedMessage, ctx: WireContext): NovaMessage {
  switch (msg.type) {
    case "Results": {
      const channel = objectField(msg, "channel", ctx);
      const alternatives = channel.alternatives;
      if (!Array.isArray(alternatives)) throw protocolError(ctx, "Results.channel.alternatives should be an array");
      // The first alternative is the best one; with none there is nothing to read.
      const best = alternatives[0] as unknown;
      const words = best === undefined ? [] : novaWords(asObject(best, "Results.channel.alternatives[0]", ctx), ctx);
      return {
        type: "Results",
        isFinal: booleanField(msg, "is_final", ctx),
        speechFinal: booleanField(msg, "speech_final", ctx),
        fromFinalize: booleanField(msg, "from_finalize", ctx),
        startS: numberField(msg, "start", ctx),
        durationS: numberField(msg, "duration", ctx),
        words,
      };
    }
    case "SpeechStarted":
      return { type: "SpeechStarted", timestampS: numberField(msg, "timestamp", ctx) };
    case "UtteranceEnd":
      return { type: "UtteranceEnd", lastWordEndS: numberField(msg, "last_word_end", ctx) };
    default:
      return { type: "other", name: msg.type };
  }
}

/** Reads one v2 (/v2/listen, Flux) message. */
export function parseFluxMessage(msg: TaggedMessage, ctx: WireContext): FluxMessage {
  switch (msg.type) {
    case "Connected":
      return { type: "Connected" };
    case "TurnInfo": {
      const event = stringField(msg, "event", ctx);
      if (!(FLUX_EVENTS as readonly string[]).includes(event)) throw protocolError(ctx, `TurnInfo.event ${JSON.stringify(event)} is not a Flux event`);
      const words = msg.words;
      if (!Array.isArray(words)) throw protocolError(ctx, "TurnInfo.words should be an array");
      return {
        type: "TurnInfo",
        event: event as FluxEventName,
        turnIndex: numberField(msg, "turn_index", ctx),
        windowStartS: numberField(msg, "audio_window_start", ctx),
        windowEndS: numberField(msg, "audio_window_end", ctx),
        words: words.map((w, i) => fluxWord(asObject(w, `TurnInfo.words[${i}]`, ctx), i, ctx)),
        endOfTurnConfidence: numberField(msg, "end_of_turn_confidence", ctx),
      };
    }
    case "Error": {
      const code = msg.code;
      const description = msg.description ?? msg.message;
      return { type: "Error", code: typeof code === "string" || typeof code === "number" ? String(code) : "", description: typeof description === "string" ? description : "" };
    }
    default:
      return { type: "other", name: msg.type };
  }
}

function novaWords(alternative: Record<string, unknown>, ctx: WireContext): DeepgramWord[] {
  const words = alternative.words;
  if (!Array.isArray(words)) throw protocolError(ctx, "Results.channel.alternatives[0].words should be an array");
  return words.map((raw, i) => {
    const w = asObject(raw, `Results words[${i}]`, ctx);
    const text = typeof w.punctuated_word === "string" && w.punctuated_word !== "" ? w.punctuated_word : w.word;
    if (typeof text !== "string") throw protocolError(ctx, `Results words[${i}].word should be a string`);
    return { text, startS: finite(w.start, `Results words[${i}].start`, ctx), endS: finite(w.end, `Results words[${i}].end`, ctx) };
  });
}

function fluxWord(w: Record<string, unknown>, i: number, ctx: WireContext): DeepgramWord {
  if (typeof w.word !== "string") throw protocolError(ctx, `TurnInfo.words[${i}].word should be a string`);
  const word: DeepgramWord = { text: w.word };
  if (w.start !== undefined) word.startS = finite(w.start, `TurnInfo.words[${i}].start`, ctx);
  if (w.end !== undefined) word.endS = finite(w.end, `TurnInfo.words[${i}].end`, ctx);
  return word;
}

function finite(v: unknown, what: string, ctx: WireContext): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw protocolError(ctx, `${what} should be a number`);
  return v;
}

function asObject(v: unknown, what: string, ctx: WireContext): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw protocolError(ctx, `${what} should be an object`);
  return v as Record<string, unknown>;
}

function objectField(msg: TaggedMessage, key: string, ctx: WireContext): Record<string, unknown> {
  return asObject(msg[key], `${msg.type}.${key}`, ctx);
}

/** A documented boolean; absent reads as false (older servers leave `from_finalize` out). */
function booleanField(msg: TaggedMessage, key: string, ctx: WireContext): boolean {
  const v = msg[key];
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw protocolError(ctx, `${msg.type}.${key} should be a boolean`);
  return v;
}
