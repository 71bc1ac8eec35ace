// The capture worklet's processor in Node, under a stand-in for the
// AudioWorkletGlobalScope (registerProcessor, AudioWorkletProcessor with a
// port, currentFrame, currentTime, sampleRate). It is the real processor code;
// only the scope around it is faked, because Node has no audio rendering.
import { loadProcessor, scope, type Posted } from "./worklet-scope.js";
import { beforeAll, expect, test } from "vitest";

const QUANTUM = 128;
const RATE = 48000;

let Processor: any;
/** The resampler's delay, in 24 kHz output samples. */
let delay = 0;

beforeAll(async () => {
  Processor = await loadProcessor("bargein-capture", "capture-worklet.ts", RATE);
  const { Resampler } = await import("../../src/audio/resampler.js");
  delay = new Resampler(RATE, 24000).delayInputSamples * (24000 / RATE);
});

/** Runs quanta of a signal with clicks through a fresh processor, skipping the quanta in `skipped`. */
function capture(clicks: number[], quanta: number, skipped: Set<number>) {
  const processor = new Processor({
    processorOptions: { vad: false, uplink: { sampleRate: 24000, frameSamples: 1920, format: "f32" }, meterIntervalMs: 50 },
  });
  const start = 1000 * QUANTUM; // the node starts well after the context
  for (let q = 0; q < quanta; q++) {
    if (skipped.has(q)) continue; // the browser did not call process() for this quantum
    const block = new Float32Array(QUANTUM);
    for (const c of clicks) if (c >= q * QUANTUM && c < (q + 1) * QUANTUM) block[c - q * QUANTUM] = 0.8;
    scope.currentFrame = start + q * QUANTUM;
    scope.currentTime = scope.currentFrame / RATE;
    processor.process([[block]]);
  }
  const posted: Posted[] = processor.posted;
  const samples = posted.filter((m) => m.kind === "uplink-frame").flatMap((m) => Array.from(m.samples as Float32Array));
  const peaks = clicks.map((c) => {
    // The loudest output sample near where the click should land (delay included).
    const expected = (c * 24000) / RATE + delay;
    let best = Math.round(expected) - 40;
    for (let i = best; i < Math.round(expected) + 40; i++) if (Math.abs(samples[i] ?? 0) > Math.abs(samples[best] ?? 0)) best = i;
    return { expected, peak: best, height: Math.abs(samples[best] ?? 0) };
  });
  return { posted, peaks };
}

test("quanta the browser skipped count as silence: clicks after them still land at their context frames, and the gap is reported", async () => {
  const clicks = [10 * QUANTUM + 37, 60 * QUANTUM + 5, 120 * QUANTUM + 90];
  const skipped = new Set([30, 31, 90]);
  const { posted, peaks } = capture(clicks, 160, skipped);
  for (const p of peaks) {
    expect(p.height).toBeGreaterThan(0.1);
    expect(Math.abs(p.peak - p.expected)).toBeLessThanOrEqual(1);
  }
  const gaps = posted.filter((m) => m.kind === "capture-gap");
  expect(gaps.map((g) => g.frames)).toEqual([2 * QUANTUM, QUANTUM]);
  expect(gaps[0].contextTime).toBeCloseTo((1000 + 32) * QUANTUM / RATE, 9);
  // Without skips the same clicks land at the same places, and nothing is reported.
  const clean = capture(clicks, 160, new Set());
  expect(clean.peaks.map((p) => p.peak)).toEqual(peaks.map((p) => p.peak));
  expect(clean.posted.filter((m) => m.kind === "capture-gap")).toEqual([]);
});
