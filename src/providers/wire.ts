/**
 * Decoding of inbound messages, shared by the providers: msgpack or JSON maps
 * tagged by `type`, and typed field reads. Anything that does not follow the
 * protocol becomes a ProtocolError naming the service and the (secret-free) URL.
 */
import { Decoder } from "@msgpack/msgpack";
import { ProtocolError } from "../errors.js";

/** Where a message came from, for error messages. `url` never holds a secret. */
export interface WireContext {
  service: string;
  url: string;
}

/** A decoded message: a map whose `type` says which message it is. */
export type TaggedMessage = { readonly type: string } & Readonly<Record<string, unknown>>;

export function protocolError(ctx: WireContext, what: string, cause?: unknown): ProtocolError {
  return new ProtocolError(`${ctx.service} at ${ctx.url}: ${what}`, {
    service: ctx.service,
    url: ctx.url,
    cause,
  });
}

function asTagged(value: unknown, ctx: WireContext, format: string): TaggedMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw protocolError(ctx, `expected a ${format} map tagged by "type", got ${describe(value)}`);
  }
  const type = (value as Record<string, unknown>).type;
  if (typeof type !== "string") {
    throw protocolError(ctx, `a ${format} message has no string "type" field`);
  }
  return value as TaggedMessage;
}

// One decoder per module: Decoder is reusable and not re-entrant, and decoding is synchronous.
const msgpackDecoder = new Decoder();

/** Decodes a binary msgpack frame into a tagged map. Text frames are a protocol error. */
export function decodeMsgpack(data: ArrayBuffer | string, ctx: WireContext): TaggedMessage {
  if (typeof data === "string") throw protocolError(ctx, "expected a binary msgpack frame, got a text frame");
  let value: unknown;
  try {
    value = msgpackDecoder.decode(new Uint8Array(data));
  } catch (err) {
    throw protocolError(ctx, "a message is not valid msgpack", err);
  }
  return asTagged(value, ctx, "msgpack");
}

/** Parses a JSON text frame. Binary frames and invalid JSON are protocol errors. */
export function parseJsonFrame(data: ArrayBuffer | string, ctx: WireContext): unknown {
  if (typeof data !== "string") throw protocolError(ctx, "expected a JSON text frame, got a binary frame");
  try {
    return JSON.parse(data);
  } catch (err) {
    throw protocolError(ctx, "a message is not valid JSON", err);
  }
}

/** Decodes a JSON text frame into a tagged map. Binary frames are a protocol error. */
export function decodeJson(data: ArrayBuffer | string, ctx: WireContext): TaggedMessage {
  return asTagged(parseJsonFrame(data, ctx), ctx, "JSON");
}

/** Reads a required finite number field. */
export function numberField(msg: TaggedMessage, key: string, ctx: WireContext): number {
  const v = msg[key];
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw protocolError(ctx, `${msg.type}.${key} should be a number, got ${describe(v)}`);
  }
  return v;
}

/** Reads a required string field. */
export function stringField(msg: TaggedMessage, key: string, ctx: WireContext): string {
  const v = msg[key];
  if (typeof v !== "string") throw protocolError(ctx, `${msg.type}.${key} should be a string, got ${describe(v)}`);
  return v;
}

/**
 * Reads a float32 PCM field into a fresh Float32Array. Accepts a msgpack array
 * of numbers (what moshi-server sends) or a bin of little-endian float32.
 */
export function pcmField(msg: TaggedMessage, key: string, ctx: WireContext): Float32Array {
  const v = msg[key];
  if (Array.isArray(v)) {
    const out = new Float32Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const s = v[i];
      if (typeof s !== "number") throw protocolError(ctx, `${msg.type}.${key}[${i}] should be a number`);
      out[i] = s;
    }
    return out;
  }
  if (v instanceof Uint8Array && v.byteLength % 4 === 0) {
    // Copy: the bin may be unaligned inside the frame, and the caller owns the result.
    const out = new Float32Array(v.byteLength / 4);
    new Uint8Array(out.buffer).set(v);
    return out;
  }
  throw protocolError(ctx, `${msg.type}.${key} should be an array of float32 samples, got ${describe(v)}`);
}

/** Reads a required array of numbers. */
export function numberArrayField(msg: TaggedMessage, key: string, ctx: WireContext): number[] {
  const v = msg[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "number")) {
    throw protocolError(ctx, `${msg.type}.${key} should be an array of numbers, got ${describe(v)}`);
  }
  return v as number[];
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Uint8Array) return `${v.byteLength} bytes`;
  return typeof v;
}
