/**
 * Base64 PCM, as the hosted TTS services send it inside JSON messages
 * (ElevenLabs `audio`, Cartesia `data`): decoded into fresh Float32Arrays
 * for the player. Browser-clean (atob, DataView); no Node Buffer.
 *
 * Each call allocates its result; nothing is kept between calls.
 */
import { protocolError, type WireContext } from "./wire.js";

/** The sample encodings the services offer as raw PCM, little-endian. */
export type PcmEncoding = "s16le" | "f32le";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes standard base64 into bytes; anything else is a ProtocolError naming `what`. */
export function base64Bytes(text: string, ctx: WireContext, what: string): Uint8Array {
  // atob accepts whitespace and missing padding; a service never sends either, so be strict.
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw protocolError(ctx, `${what} is not base64`);
  let binary: string;
  try {
    binary = atob(text);
  } catch (err) {
    throw protocolError(ctx, `${what} is not base64`, err);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Little-endian PCM bytes to float32 in -1..1 (s16 as v/32768), across
 * messages: a message may end inside a sample (the services' docs do not
 * promise whole samples per message; Cartesia's own example chunk is 17
 * bytes), so the bytes of a torn sample wait for the next message.
 * One instance per stream.
 */
export class PcmAssembler {
  readonly #encoding: PcmEncoding;
  readonly #width: number;
  /** The first bytes of a sample torn by the last message. */
  #carry = new Uint8Array(0);

  constructor(encoding: PcmEncoding) {
    this.#encoding = encoding;
    this.#width = encoding === "s16le" ? 2 : 4;
  }

  /** The whole samples that `bytes` completes, as a fresh array (possibly empty). */
  push(bytes: Uint8Array, ctx: WireContext, what: string): Float32Array {
    let data = bytes;
    if (this.#carry.byteLength > 0) {
      data = new Uint8Array(this.#carry.byteLength + bytes.byteLength);
      data.set(this.#carry);
      data.set(bytes, this.#carry.byteLength);
    }
    const whole = data.byteLength - (data.byteLength % this.#width);
    this.#carry = data.slice(whole);
    const view = new DataView(data.buffer, data.byteOffset, whole);
    const out = new Float32Array(whole / this.#width);
    if (this.#encoding === "s16le") {
      for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true) / 32768;
    } else {
      for (let i = 0; i < out.length; i++) {
        const v = view.getFloat32(i * 4, true);
        // A NaN or an infinity would poison the player's resampler and every sample after it.
        if (!Number.isFinite(v)) throw protocolError(ctx, `${what} holds a sample that is not a finite number`);
        out[i] = v;
      }
    }
    return out;
  }
}

/**
 * A context id for the services that multiplex generations on one socket.
 * randomUUID needs a secure context; getRandomValues works in any page.
 */
export function randomContextId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `bargein-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
