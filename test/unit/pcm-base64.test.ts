// Base64 PCM of the hosted TTS services → float32 (src/providers/pcm-base64.ts).
import { describe, expect, test } from "vitest";
import { ProtocolError } from "../../src/errors.js";
import { PcmAssembler, base64Bytes, randomContextId } from "../../src/providers/pcm-base64.js";

const ctx = { service: "tts", url: "ws://x" };
const b64 = (bytes: number[]) => Buffer.from(bytes).toString("base64");

describe("base64 PCM", () => {
  test("s16le: little-endian, v/32768, the extremes included", () => {
    const pcm = new PcmAssembler("s16le").push(base64Bytes(b64([0x00, 0x80, 0xff, 0x7f, 0x00, 0x40, 0xff, 0xff]), ctx, "audio"), ctx, "audio");
    expect(Array.from(pcm)).toEqual([-1, 32767 / 32768, 0.5, -1 / 32768]);
  });

  test("f32le: the floats as sent", () => {
    const f = new Float32Array([0.25, -0.5, 1]);
    const pcm = new PcmAssembler("f32le").push(new Uint8Array(f.buffer), ctx, "data");
    expect(Array.from(pcm)).toEqual([0.25, -0.5, 1]);
  });

  test("a sample torn across messages waits for its other bytes: every sample once, in order", () => {
    const samples = Int16Array.from({ length: 101 }, (_, i) => (i * 331) % 65536 - 32768);
    const bytes = new Uint8Array(samples.buffer);
    const assembler = new PcmAssembler("s16le");
    const out: number[] = [];
    for (const [from, to] of [[0, 17], [17, 18], [18, 101], [101, 202]]) out.push(...assembler.push(bytes.slice(from, to), ctx, "audio"));
    expect(out).toEqual(Array.from(samples, (s) => s / 32768));
  });

  test("a float sample that is NaN or infinite is a ProtocolError (it would poison the player's resampler)", () => {
    const f = new Float32Array([0.1, NaN]);
    expect(() => new PcmAssembler("f32le").push(new Uint8Array(f.buffer), ctx, "data")).toThrow(ProtocolError);
  });

  test("text that is not strict base64 is a ProtocolError naming the field", () => {
    for (const bad of ["AAA", "AA=A", "AA AA", "!!!!", "AAAA\n"]) {
      expect(() => base64Bytes(bad, ctx, "chunk.data")).toThrow(/chunk\.data is not base64/);
    }
    expect(Array.from(base64Bytes("", ctx, "audio"))).toEqual([]);
  });

  test("context ids are unique and safe in JSON and URLs", () => {
    const ids = new Set(Array.from({ length: 1000 }, randomContextId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^bargein-[0-9a-f]{32}$/);
  });
});
