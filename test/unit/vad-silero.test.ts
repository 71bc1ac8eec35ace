// Our Silero runner against @ricky0123/vad-web's Silero wrapper (the reference:
// it follows silero-vad's OnnxWrapper, 64-sample context included), both on
// the same onnxruntime-web wasm and the same frames of a fixture. Equal
// probabilities frame by frame show the context and state handling are right.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as ort from "onnxruntime-web/wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { configureOrt, createSilero } from "../../src/vad/worker/silero.js";

const require = createRequire(import.meta.url);
const { Silero: ReferenceSilero } = require("@ricky0123/vad-web/dist/models/silero.js");

const MODEL = "node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx";
const WASM = "node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm";

function fixtureFrames(name: string): Float32Array[] {
  const wav = readFileSync(`test/fixtures/vad/${name}.wav`);
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength));
  const frames: Float32Array[] = [];
  for (let i = 0; i + 512 <= pcm.length; i += 512) frames.push(Float32Array.from(pcm.subarray(i, i + 512), (s) => s / 32768));
  return frames;
}

const toArrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

describe("Silero v5 runner", () => {
  beforeAll(() => configureOrt(toArrayBuffer(readFileSync(WASM))));

  it("gives vad-web's probabilities on every frame, and again after reset()", async () => {
    const frames = fixtureFrames("speech-two");
    const ours = await createSilero("v5", toArrayBuffer(readFileSync(MODEL)));
    const reference = await ReferenceSilero.new(ort, async () => toArrayBuffer(readFileSync(MODEL)));
    const oursP: number[] = [];
    const refP: number[] = [];
    for (const frame of frames) {
      oursP.push(await ours.probability(frame));
      refP.push((await reference.process(frame)).isSpeech);
    }
    expect(oursP).toHaveLength(231);
    oursP.forEach((p, i) => expect(p, `frame ${i}`).toBeCloseTo(refP[i], 5));
    // The fixture has speech in it, so equality is not two flat lines.
    expect(Math.max(...oursP)).toBeGreaterThan(0.9);
    expect(Math.min(...oursP)).toBeLessThan(0.05);
    ours.reset();
    for (let i = 0; i < 40; i++) expect(await ours.probability(frames[i])).toBeCloseTo(refP[i], 5);
    await ours.release();
    await reference.release();
  }, 60_000);
});
