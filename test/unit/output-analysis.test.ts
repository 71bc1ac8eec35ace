// The readings the browser tests judge a barge-in by (test/browser/pages/session/output-analysis.js),
// on made-up recordings: a gap between the bot's words before its pause is not the pause, and sound
// after a flush is counted wherever it comes.
import { describe, expect, it } from "vitest";
// @ts-ignore: a plain ESM module shared with the browser pages
import { afterFlush, notRendered, readCut, silentFrom, timeline } from "../browser/pages/session/output-analysis.js";

const RATE = 48000;
const ms = (n: number) => Math.round((n / 1000) * RATE);

/** A recording: `spans` of [startMs, endMs) at 0.1, silence elsewhere; `missed`: skipped quanta (frames). */
function recording(totalMs: number, spans: Array<[number, number]>, missed: number[] = []) {
  const samples = new Float32Array(ms(totalMs));
  for (const [a, b] of spans) samples.fill(0.1, ms(a), ms(b));
  return { samples, startFrame: 0, missed };
}

describe("silentFrom", () => {
  it("finds where the output fell silent for good, past a gap between the bot's words", () => {
    // Speech, a 30 ms gap between words at 100 ms, more speech, the pause at 200 ms.
    const rec = recording(600, [[0, 100], [130, 200]]);
    const line = timeline(rec, RATE);
    expect(silentFrom(rec.samples, line, ms(50), ms(500))).toBe(ms(200));
  });

  it("is `from` when nothing sounds after it, and ignores quanta the render thread skipped", () => {
    const rec = recording(300, [[0, 100]]);
    expect(silentFrom(rec.samples, timeline(rec, RATE), ms(150), ms(300))).toBe(ms(150));
    // A skipped quantum holds whatever was there: it proves nothing, so it is not the last sound.
    const skipped = recording(300, [[0, 100], [200, 200 + (128 / RATE) * 1000]], [ms(200)]);
    expect(silentFrom(skipped.samples, timeline(skipped, RATE), ms(50), ms(300))).toBe(ms(100));
  });
});

describe("afterFlush", () => {
  it("counts the samples that sound after the flush's quantum, and none of the fade inside it", () => {
    const flushAt = 128 * 100;
    const rec = recording(600, [[0, (flushAt + 64) / RATE * 1000]]);
    expect(afterFlush(rec.samples, 0, [{ frame: flushAt }], 0, ms(600))).toEqual({ at: flushAt, loud: 0 });
    // Stale audio 100 ms after the flush: every sample of it is counted.
    const stale = recording(600, [[0, (flushAt / RATE) * 1000], [400, 410]]);
    expect(afterFlush(stale.samples, 0, [{ frame: flushAt }], 0, ms(600))).toEqual({ at: flushAt, loud: ms(410) - ms(400) });
  });

  it("takes the first flush at or after `from`, in recording indices, and says when none came", () => {
    const rec = recording(600, [[0, 100]]);
    expect(afterFlush(rec.samples, 1000, [{ frame: 1000 + 10 }, { frame: 1000 + ms(200) }], ms(150), ms(600)).at).toBe(ms(200));
    expect(afterFlush(rec.samples, 0, [], 0, ms(600))).toEqual({ at: -1, loud: 0 });
  });
});

describe("notRendered", () => {
  it("counts an underrun from its frame to the quantum the player resumed in, past the audio's own zeros", () => {
    // Sound to 1280, dry at 1280, resumed at the quantum of 2560 with 300 zeros of the audio's own, then sound.
    const samples = new Float32Array(6400);
    samples.fill(0.1, 0, 1280);
    samples.fill(0.1, 2560 + 300, 6400);
    const line = timeline({ samples, startFrame: 0, missed: [] }, RATE);
    // Without the audio: its next sound (2860) is taken for the resume, in the quantum of 2816.
    expect(notRendered(samples, line, 0, 0, 6400, [1280])).toEqual({ skipped: 0, starved: 2816 - 1280 });
    // Knowing it had 300 zeros at the 1280th sample rendered: resumed in the quantum of 2560.
    const ahead = (rendered: number) => (rendered === 1280 ? 300 : 0);
    expect(notRendered(samples, line, 0, 0, 6400, [1280], ahead)).toEqual({ skipped: 0, starved: 2560 - 1280 });
  });

  it("counts a dry span once, however many underruns were reported inside it", () => {
    const samples = new Float32Array(6400);
    samples.fill(0.1, 0, 1280);
    samples.fill(0.1, 2560, 6400);
    const line = timeline({ samples, startFrame: 0, missed: [] }, RATE);
    expect(notRendered(samples, line, 0, 0, 6400, [1280, 1920])).toEqual({ skipped: 0, starved: 2560 - 1280 });
  });
});

describe("readCut", () => {
  it("reads a cut reply: silent for good after its pause, loud before the onset, its sound runs, and nothing after its flush", () => {
    // The bot speaks to 200 ms with a gap at 100–130 ms; the user's onset at 50 ms; flushed at the quantum of 9600.
    const rec = recording(600, [[0, 100], [130, 200]]);
    const line = timeline(rec, RATE);
    const cut = readCut(rec, line, [{ frame: 9600 }], RATE, ms(50), ms(500));
    expect(cut.silentAt).toBe(ms(200));
    expect(cut.silentAfterMs).toBeCloseTo(150, 6);
    expect(cut.audibleBefore).toBeCloseTo(0.1, 6);
    expect(cut.runs).toEqual([[0, 50], [80, 150]]);
    expect(cut.said).toBe("sound after the onset (ms): [[0,50],[80,150]]");
    expect(cut.flushed).toEqual({ at: 9600, loud: 0 });
  });
});
