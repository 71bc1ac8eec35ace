// msgpack framing shared by the Kyutai emulators (STT and TTS).
import { Encoder } from "@msgpack/msgpack";

// float32 for fractional numbers: about 5 bytes per PCM sample, as moshi-server sends.
const encoder = new Encoder({ forceFloat32: true });

/** @param {Record<string, unknown>} message */
export function encodeMessage(message) {
  return encoder.encode(message);
}

/**
 * What `malformed=` sends: "notype" is valid msgpack without a `type`; anything
 * else is bytes that are not msgpack at all (0xc1 is never used by msgpack).
 * @param {string} kind
 */
export function malformedBytes(kind) {
  if (kind === "notype") return encodeMessage({ text: "this map has no type" });
  return new Uint8Array([0xc1, 0xc1, 0xff, 0x00]);
}

/**
 * The moshi-server answer when every channel is busy: an Error, then a close
 * (1013, "try again later").
 * @param {import("ws").WebSocket} ws
 */
export function rejectAtCapacity(ws) {
  ws.send(encodeMessage({ type: "Error", message: "no free channels" }));
  ws.close(1013, "no free channels");
}
