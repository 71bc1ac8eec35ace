// The committed speech fixtures are what their sidecars say: 16 kHz mono s16,
// silent before the stated onset, speech after it, small enough to commit.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { readWav } from "../../demo/server/wav.mjs";

const dir = new URL("../fixtures/speech/", import.meta.url);
const names = readdirSync(dir).filter((f) => f.endsWith(".wav")).map((f) => f.slice(0, -4));

const rms = (x: Int16Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length)) / 32768;

describe("speech fixtures", () => {
  test("include the weather question with about 0.5 s of leading silence, and 2–3 more", () => {
    expect(names).toContain("weather-question");
    expect(names.length).toBeGreaterThanOrEqual(3);
    const meta = JSON.parse(readFileSync(new URL("weather-question.json", dir), "utf8"));
    expect(meta.text).toBe("What is the weather like today?");
    expect(meta.onsetSamples / meta.sampleRate).toBeCloseTo(0.5, 1);
  });

  test.each(names)("%s: format, size, and silence before the onset", (name) => {
    const bytes = readFileSync(new URL(`${name}.wav`, dir));
    // 240 kB: the fake microphone's fixture has 5 s of silence before its question (7.2 s, 231 kB).
    expect(statSync(new URL(`${name}.wav`, dir)).size).toBeLessThan(240_000);
    const wav = readWav(bytes);
    const meta = JSON.parse(readFileSync(new URL(`${name}.json`, dir), "utf8"));
    expect(wav.sampleRate).toBe(16000);
    expect(wav.channels).toBe(1);
    expect(wav.samples.length).toBe(meta.samples);
    const onset = meta.onsetSamples;
    // Silent until 20 ms before the onset; clearly speech in the 300 ms after it.
    expect(rms(wav.samples.subarray(0, onset - 320))).toBeLessThan(0.002);
    expect(rms(wav.samples.subarray(onset, onset + 4800))).toBeGreaterThan(0.02);
    expect(meta.words.map((w: { text: string }) => w.text).join(" ")).toBe(meta.text);
  });
});
