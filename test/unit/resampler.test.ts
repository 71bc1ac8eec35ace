// The resampler's promises, measured on real signals: unit gain in the
// passband, the stated delay to the sample, aliases suppressed by ≥ 60 dB,
// and the same output whatever the chunking of the stream.
import { describe, expect, test } from "vitest";
import { Resampler } from "../../src/audio/resampler.js";

const sine = (rate: number, hz: number, n: number, phase = 0) =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(2 * Math.PI * hz * (i / rate) + phase));

const rms = (x: Float32Array, from = 0, to = x.length) => {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i] * x[i];
  return Math.sqrt(s / (to - from));
};

const RATES: Array<[number, number]> = [
  [48000, 16000],
  [44100, 16000],
  [48000, 24000],
  [44100, 24000],
  [24000, 48000],
  [16000, 44100],
  [16000, 48000],
];

describe("Resampler", () => {
  for (const [from, to] of RATES) {
    test(`${from} → ${to}: a 1 kHz tone keeps its amplitude and arrives exactly delaySeconds late`, () => {
      const r = new Resampler(from, to);
      const input = sine(from, 1000, from); // 1 s
      const out = r.resampleAll(input);
      expect(Math.abs(out.length - to)).toBeLessThanOrEqual(1);
      // Ideal: the same sine, delayed by the stated delay, sampled at `to`.
      let worst = 0;
      const settle = Math.ceil(r.delaySeconds * to * 2) + 2;
      for (let n = settle; n < out.length - 10; n++) {
        const t = n / to - r.delaySeconds;
        worst = Math.max(worst, Math.abs(out[n] - Math.sin(2 * Math.PI * 1000 * t)));
      }
      expect(worst).toBeLessThan(2e-3);
    });
  }

  test("48 kHz → 16 kHz suppresses a 10 kHz tone (it would alias to 6 kHz) by at least 60 dB", () => {
    const r = new Resampler(48000, 16000);
    const out = r.resampleAll(sine(48000, 10000, 48000));
    const level = rms(out, 400, out.length - 10) / Math.SQRT1_2;
    expect(20 * Math.log10(level)).toBeLessThan(-60);
  });

  test("44.1 kHz → 16 kHz keeps 6.5 kHz within 0.1 dB and kills 9 kHz by 60 dB", () => {
    const pass = new Resampler(44100, 16000).resampleAll(sine(44100, 6500, 44100));
    const stop = new Resampler(44100, 16000).resampleAll(sine(44100, 9000, 44100));
    const passDb = 20 * Math.log10(rms(pass, 400, pass.length - 10) / Math.SQRT1_2);
    expect(Math.abs(passDb)).toBeLessThan(0.1);
    expect(20 * Math.log10(rms(stop, 400, stop.length - 10) / Math.SQRT1_2)).toBeLessThan(-60);
  });

  test("DC passes with unit gain", () => {
    const out = new Resampler(44100, 24000).resampleAll(new Float32Array(4410).fill(0.25));
    for (let i = 200; i < out.length; i++) expect(out[i]).toBeCloseTo(0.25, 6);
  });

  test("chunking does not change the stream: 128-sample quanta and random chunks match one call", () => {
    const input = sine(48000, 440, 48000 * 0.5, 0.3);
    const whole = new Resampler(48000, 16000).resampleAll(input);
    const r = new Resampler(48000, 16000);
    const out = new Float32Array(whole.length + 64);
    const scratch = new Float32Array(r.maxOutput(5000));
    let produced = 0;
    let seed = 9;
    for (let offset = 0; offset < input.length; ) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const len = Math.min(input.length - offset, 1 + (seed % 5000));
      const n = r.process(input, offset, len, scratch, 0);
      out.set(scratch.subarray(0, n), produced);
      produced += n;
      offset += len;
    }
    expect(produced).toBe(whole.length);
    expect(Array.from(out.subarray(0, produced))).toEqual(Array.from(whole));
  });

  test("an impulse comes out centred at the stated delay", () => {
    const r = new Resampler(48000, 16000);
    const input = new Float32Array(4800);
    input[1200] = 1; // at 25 ms
    const out = r.resampleAll(input);
    let peak = 0;
    for (let i = 1; i < out.length; i++) if (out[i] > out[peak]) peak = i;
    expect(peak).toBe(Math.round((1200 + r.delayInputSamples) / 3));
  });

  test("reset restarts the stream from zero history", () => {
    const r = new Resampler(16000, 48000);
    const input = sine(16000, 300, 1600);
    const a = r.resampleAll(input);
    r.reset();
    expect(Array.from(r.resampleAll(input))).toEqual(Array.from(a));
  });
});
