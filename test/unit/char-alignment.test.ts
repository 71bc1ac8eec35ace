// ElevenLabs' character alignment → words on the stream's timeline (src/providers/char-alignment.ts).
import { describe, expect, test } from "vitest";
import { alignWords, flushWord, type AlignedWord, type CharAlignment } from "../../src/providers/char-alignment.js";
import server from "../fixtures/elevenlabs/server-messages.json" with { type: "json" };

/** A chunk whose characters each last `ms`, back to back from `fromMs`. */
function chunk(text: string, ms = 50, fromMs = 0): CharAlignment {
  const chars = [...text];
  return { chars, charStartTimesMs: chars.map((_, i) => fromMs + i * ms), charDurationsMs: chars.map(() => ms) };
}

/** Runs chunks through the pure steps, each chunk `chunkS` seconds of audio after the last. */
function run(chunks: CharAlignment[], offsets: number[]): AlignedWord[] {
  let open: AlignedWord | undefined;
  const out: AlignedWord[] = [];
  chunks.forEach((c, i) => {
    const step = alignWords(open, c, offsets[i]);
    out.push(...step.words);
    open = step.open;
  });
  return [...out, ...flushWord(open)];
}

/** Words equal to `expected`, times within a nanosecond (they are sums of ms / 1000). */
function expectWords(words: AlignedWord[], expected: AlignedWord[]): void {
  expect(words.map((w) => w.text)).toEqual(expected.map((w) => w.text));
  words.forEach((w, i) => {
    expect(w.startS).toBeCloseTo(expected[i].startS, 9);
    expect(w.stopS).toBeCloseTo(expected[i].stopS, 9);
  });
}

describe("alignWords", () => {
  test("one chunk: each word spans its first character's start to its last character's end", () => {
    const words = run([chunk("Hi there ", 100)], [0]);
    expectWords(words, [
      { text: "Hi", startS: 0, stopS: 0.2 },
      { text: "there", startS: 0.3, stopS: 0.8 },
    ]);
  });

  test("a chunk offset moves the words onto the stream's timeline", () => {
    const words = run([chunk("go ", 100)], [1.5]);
    expectWords(words, [{ text: "go", startS: 1.5, stopS: 1.7 }]);
  });

  test("a word split mid-word across two chunks is one word, from the first part's start to the second part's end", () => {
    // "Hello wor" | "ld again": the second chunk's times restart at 0, 0.45 s of audio later.
    const words = run([chunk("Hello wor", 50), chunk("ld again", 50)], [0, 0.45]);
    expect(words.map((w) => w.text)).toEqual(["Hello", "world", "again"]);
    expect(words[1].startS).toBeCloseTo(0.3, 9); // "w" at 6 × 50 ms
    expect(words[1].stopS).toBeCloseTo(0.45 + 0.1, 9); // "d" ends at 2 × 50 ms into chunk 2
    expect(words[2].startS).toBeCloseTo(0.45 + 0.15, 9);
  });

  test("punctuation stays on its word, so the words match the reply's whitespace tokens", () => {
    const text = "Well, it's 3 p.m. — isn't it?";
    const words = run([chunk(text + " ", 40)], [0]);
    expect(words.map((w) => w.text)).toEqual(text.split(/\s+/));
  });

  test("several chunks, split at spaces and inside words, give the same words as one chunk", () => {
    const text = "The quick brown fox jumps over the lazy dog. ";
    const whole = run([chunk(text, 30)], [0]);
    // Cut after characters 3, 11, 12, 30: inside "quick"... "brown", right after a space, mid-"lazy".
    const cuts = [0, 3, 11, 12, 30, text.length];
    const parts = cuts.slice(1).map((end, i) => chunk(text.slice(cuts[i], end), 30));
    const offsets = cuts.slice(0, -1).map((at) => (at * 30) / 1000);
    const split = run(parts, offsets);
    expect(whole).toHaveLength(9);
    expectWords(split, whole);
  });

  test("leading and repeated spaces make no empty words; the last word waits for the end of the context", () => {
    const step = alignWords(undefined, chunk("  two  words"), 0);
    expect(step.words.map((w) => w.text)).toEqual(["two"]);
    expect(step.open?.text).toBe("words");
    expect(flushWord(step.open).map((w) => w.text)).toEqual(["words"]);
    expect(flushWord(undefined)).toEqual([]);
  });

  test("the docs' example chunk (\"Hell\", no space yet) is one open word from 0 to 15 ms", () => {
    const step = alignWords(undefined, server.audioOutput.alignment, 0);
    expect(step.words).toEqual([]);
    expectWords(flushWord(step.open), [{ text: "Hell", startS: 0, stopS: 0.015 }]);
  });

  test("the open word given in is not changed (pure)", () => {
    const open = { text: "wor", startS: 1, stopS: 1.1 };
    alignWords(open, chunk("ld "), 2);
    expect(open).toEqual({ text: "wor", startS: 1, stopS: 1.1 });
  });
});
