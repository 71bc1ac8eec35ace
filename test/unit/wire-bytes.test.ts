/**
 * The cold-start bench's byte count (bench/lib/wire-bytes.mjs): what the server sent, by path,
 * and the share of a timed body that had arrived at a moment.
 */
import { describe, expect, test } from "vitest";
import { arrivedShare, bytesBefore, sentBetween, sentFor } from "../../bench/lib/wire-bytes.mjs";

const wasm = { path: "/dist/ort-wasm-simd-threaded.wasm", startAt: 1000, firstByteAt: 1100, endAt: 3100 };

describe("wire bytes", () => {
  test("a timed body arrives evenly between its first and last byte", () => {
    expect(arrivedShare(wasm, 1000)).toBe(0);
    expect(arrivedShare(wasm, 2100)).toBe(0.5);
    expect(arrivedShare(wasm, 5000)).toBe(1);
  });

  test("before a moment: untimed bodies whole (start() awaits them), timed ones by their share", () => {
    const sent = { "/dist/capture-worklet.js": 16_576, "/dist/vad-worker.js": 30_909, "/dist/ort-wasm-simd-threaded.wasm": 2_000_000 };
    expect(bytesBefore(sent, [wasm], 1100)).toBe(16_576 + 30_909);
    expect(bytesBefore(sent, [wasm], 1600)).toBe(16_576 + 30_909 + 500_000);
    expect(bytesBefore(sent, [wasm], 4000)).toBe(16_576 + 30_909 + 2_000_000);
  });

  test("what was sent between two reads of the server's counts, under /dist/ only; per suffix", () => {
    const before = { "/dist/bargein.js": 107_540, "/dist/silero_vad_v5.onnx": 1_830_410 };
    const after = { "/dist/bargein.js": 107_540, "/dist/silero_vad_v5.onnx": 3_660_820, "/dist/ort-wasm-simd-threaded.wasm": 2_687_754, "/test/fixtures/speech/x.wav": 87_276 };
    const sent = sentBetween(before, after);
    expect(sent).toEqual({ "/dist/silero_vad_v5.onnx": 1_830_410, "/dist/ort-wasm-simd-threaded.wasm": 2_687_754 });
    expect(sentFor(sent, { wasmBytes: ".wasm", modelBytes: ".onnx" })).toEqual({ wasmBytes: 2_687_754, modelBytes: 1_830_410 });
  });
});
