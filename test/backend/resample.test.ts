// The backend's resampler: 24 kHz → 16 kHz for the STT, 16 kHz → 24 kHz for the TTS.
import { describe, expect, test } from "vitest";
import { RationalResampler, downsampler24to16, upsampler16to24 } from "../../demo/server/resample.mjs";

const tone = (freq: number, rate: number, seconds: number) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.sin((2 * Math.PI * freq * i) / rate));

/** Amplitude of the steady part (skipping the filter's start-up). */
function amplitude(x: Float32Array) {
  const steady = x.subarray(200);
  let sum = 0;
  for (const v of steady) sum += v * v;
  return Math.sqrt(sum / steady.length) * Math.SQRT2;
}

function runChunked(r: RationalResampler, x: Float32Array, chunk: number) {
  const parts: Float32Array[] = [];
  for (let i = 0; i < x.length; i += chunk) parts.push(r.process(x.subarray(i, i + chunk)));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("RationalResampler", () => {
  test("24→16 kHz keeps speech-band tones and removes what would alias", () => {
    for (const freq of [200, 1000, 3000, 6000]) {
      expect(amplitude(downsampler24to16().process(tone(freq, 24000, 0.5)))).toBeCloseTo(1, 1);
    }
    // 10 kHz cannot exist at 16 kHz; without a filter it would fold to 6 kHz at full level.
    expect(amplitude(downsampler24to16().process(tone(10000, 24000, 0.5)))).toBeLessThan(0.01);
  });

  test("16→24 kHz keeps tones and leaves no image above 8 kHz", () => {
    const out = upsampler16to24().process(tone(1000, 16000, 0.5));
    expect(out.length).toBe(12000);
    expect(amplitude(out)).toBeCloseTo(1, 1);
    // The zero-stuffing image of 1 kHz sits at 15 kHz; correlate against it.
    let re = 0;
    let im = 0;
    for (let i = 200; i < out.length; i++) {
      re += out[i] * Math.cos((2 * Math.PI * 15000 * i) / 24000);
      im += out[i] * Math.sin((2 * Math.PI * 15000 * i) / 24000);
    }
    expect((2 * Math.hypot(re, im)) / (out.length - 200)).toBeLessThan(0.01);
  });

  test("chunk size does not change the output (state carries across calls)", () => {
    const x = tone(440, 24000, 0.3).map((v, i) => v * 0.5 + 0.3 * Math.sin(i / 3));
    const whole = downsampler24to16().process(x);
    for (const chunk of [1, 7, 480, 1920]) {
      const chunked = runChunked(downsampler24to16(), x, chunk);
      expect(chunked.length).toBe(whole.length);
      let maxDiff = 0;
      for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole[i] - chunked[i]));
      expect(maxDiff).toBeLessThan(1e-6);
    }
  });
});
