/**
 * The shared level cell: a worklet's LevelWriter and the main thread's
 * LevelReader on one SharedArrayBuffer (as in Chromium on a crossOriginIsolated
 * page, where the browser tests read it through getLevels()).
 */
import { expect, test } from "vitest";
import { LevelWriter } from "../../src/audio/level-cell.js";
import { LevelReader, SILENT_DB } from "../../src/audio/level-meter.js";

const RATE = 48000;
const quantum = (amplitude: number, offset: number) => Float32Array.from({ length: 128 }, (_, i) => amplitude * Math.sin((2 * Math.PI * 440 * (offset + i)) / RATE));

test("a steady sine reads its RMS in dBFS within 0.1 dB; silence decays to the floor; no input is silence", () => {
  const cell = new SharedArrayBuffer(4);
  const writer = new LevelWriter(cell, RATE);
  const reader = new LevelReader(cell);
  expect(reader.db).toBe(SILENT_DB);
  // 0.5 s of a 0.5-amplitude sine: RMS 0.3536, -9.03 dBFS.
  for (let q = 0; q < 188; q++) writer.write(quantum(0.5, q * 128));
  expect(reader.db).toBeCloseTo(20 * Math.log10(0.5 / Math.SQRT2), 1);
  // 30 ms later (one time constant) of silence: about 4.3 dB down (a factor e in power).
  for (let q = 0; q < 11; q++) writer.write(new Float32Array(128));
  expect(reader.db).toBeGreaterThan(-9.03 - 6);
  expect(reader.db).toBeLessThan(-9.03 - 3);
  for (let q = 0; q < 375; q++) writer.write(undefined);
  expect(reader.db).toBe(SILENT_DB);
});
