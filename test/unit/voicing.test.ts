// The onset cue's speech-likeness check: periodic at a voice's pitch, on
// synthetic 16 kHz frames (a vowel-like pulse train, a tone above a voice's
// range, noise, a click).
import { describe, expect, it } from "vitest";
import { isVoiced } from "../../src/vad/voicing.js";

const N = 512;
const RATE = 16000;
/** A glottal-like pulse train at `f0` Hz through a 2-pole resonance at 700 Hz: a crude vowel. */
function vowel(f0: number): Float32Array {
  const out = new Float32Array(N);
  const r = 0.97;
  const w = (2 * Math.PI * 700) / RATE;
  let y1 = 0;
  let y2 = 0;
  for (let i = 0; i < N; i++) {
    const pulse = i % Math.round(RATE / f0) === 0 ? 1 : 0;
    const y = pulse + 2 * r * Math.cos(w) * y1 - r * r * y2;
    y2 = y1;
    y1 = y;
    out[i] = 0.05 * y;
  }
  return out;
}
const tone = (hz: number) => Float32Array.from({ length: N }, (_, i) => 0.3 * Math.sin((2 * Math.PI * hz * i) / RATE));
function noise(seed = 3): Float32Array {
  let x = seed;
  return Float32Array.from({ length: N }, () => {
    x = (x * 16807) % 2147483647;
    return 0.2 * ((x / 2147483647) * 2 - 1);
  });
}

describe("isVoiced", () => {
  it("calls a vowel at a man's, a woman's and a child's pitch voiced", () => {
    for (const f0 of [100, 180, 300]) expect(isVoiced(vowel(f0), 0.7), `${f0} Hz`).toBe(true);
  });

  it("does not call a tone above a voice's range voiced, though it repeats at lags in that range", () => {
    expect(isVoiced(tone(1000), 0.7)).toBe(false);
    expect(isVoiced(tone(800), 0.7)).toBe(false);
  });

  it("does not call noise, a click or silence voiced", () => {
    expect(isVoiced(noise(), 0.7)).toBe(false);
    const click = new Float32Array(N);
    click[100] = 0.9;
    click[101] = -0.5;
    expect(isVoiced(click, 0.7)).toBe(false);
    expect(isVoiced(new Float32Array(N), 0.7)).toBe(false);
  });

  it("is stricter the higher the threshold: a vowel half buried in noise passes 0.5, not 0.9", () => {
    const v = vowel(150);
    const n = noise(9);
    const mixed = Float32Array.from(v, (x, i) => x + 0.15 * n[i]!);
    expect(isVoiced(mixed, 0.3)).toBe(true);
    expect(isVoiced(mixed, 0.99)).toBe(false);
  });
});
