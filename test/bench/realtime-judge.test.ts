// The realtime bench's judge (bench/pages/realtime/judge.js) follows an item through the recorded
// output as the player renders it: a quantum the render thread skipped and a stretch where the
// player ran dry keep the item's place; the client's fade is where it stops. On a loaded machine
// an earlier judge, comparing at one fixed offset, called most trials "misaligned".
import { describe, expect, test } from "vitest";
// @ts-ignore: a plain ES module of the bench's page
import { followItem, judgeBargeIn, loudMoment } from "../../bench/pages/realtime/judge.js";

const RATE = 24000;
/** An item of speech-like samples, never exactly zero. */
const item = Int16Array.from({ length: 24000 }, (_, i) => Math.round(8000 * Math.sin(i / 7)) || 1);

/** The output as the player renders `item` from recording index `at`, with holes as given, cut by a fade at item sample `cutAt`. */
function render({ at, skipped = [], starved = [], cutAt = item.length }: { at: number; skipped?: number[]; starved?: [number, number][]; cutAt?: number }) {
  const samples = new Float32Array(at + item.length + 24000);
  const known = new Uint8Array(samples.length / 128).fill(1);
  let i = at;
  let j = 0;
  while (j < cutAt && i < samples.length) {
    const q = Math.floor(i / 128);
    if (skipped.includes(q)) {
      known[q] = 0;
      i = (q + 1) * 128;
      continue;
    }
    const hole = starved.find(([from]) => from === j);
    if (hole) {
      starved.splice(starved.indexOf(hole), 1);
      i += hole[1];
      continue;
    }
    samples[i++] = item[j++] / 32768;
  }
  // The client's 5 ms fade from where it cut.
  for (let k = 0; k < 120 && j + k < item.length; k++) samples[i + k] = (item[j + k] / 32768) * (1 - (k + 1) / 120);
  return { startFrame: 0, samples, known };
}

describe("realtime bench judge", () => {
  test("an item laid end to end and cut: rendered up to the cut, aligned at an onset before it", () => {
    const rec = render({ at: 1000, cutAt: 12000 });
    // After the cut's fade the output is silence to the end: the item's place held, nothing else played.
    expect(followItem(rec, item, 1000, 0)).toEqual({ rendered: 12000, divergedAt: rec.samples.length });
    const judged = judgeBargeIn(rec, item, { onset: 12500 / RATE, speechEnd: 20000 / RATE });
    expect(judged.aligned).toBe(true);
    expect(judged.renderedMs).toBeCloseTo(500, 5);
  });

  test("skipped quanta and a starved stretch keep the item's place: still aligned, rendered counts only the item's samples", () => {
    const rec = render({ at: 1000, skipped: [20, 21, 40], starved: [[6000, 2400]], cutAt: 12000 });
    const { rendered, divergedAt } = followItem(rec, item, 1000, 0);
    expect(rendered).toBe(12000);
    expect(divergedAt).toBe(rec.samples.length);
    const judged = judgeBargeIn(rec, item, { onset: (divergedAt - 300) / RATE, speechEnd: (divergedAt + 5000) / RATE });
    expect(judged.aligned).toBe(true);
    expect(judged.renderedMs).toBeCloseTo(500, 5);
  });

  test("a fade and a hold before the onset (the onset cue's pause, lapsed) and the player going on: aligned, rendered to the cut", () => {
    // The item up to 6000 at full gain, a 5 ms fade out, 2400 samples paused, a 5 ms fade in, then on to the cut at 12000.
    const samples = new Float32Array(1000 + item.length + 24000);
    let i = 1000;
    for (let j = 0; j < 12000; j++) {
      if (j === 6120) i += 2400;
      const gain = j >= 6000 && j < 6120 ? 1 - (j - 6000 + 1) / 120 : j >= 6120 && j < 6240 ? (j - 6120 + 1) / 120 : 1;
      samples[i++] = (item[j] / 32768) * gain;
    }
    const rec = { startFrame: 0, samples, known: new Uint8Array(samples.length / 128).fill(1) };
    const { rendered, divergedAt } = followItem(rec, item, 1000, 0);
    expect(rendered).toBe(12000);
    expect(divergedAt).toBe(samples.length);
    const judged = judgeBargeIn(rec, item, { onset: (1000 + 12000 + 2400 - 300) / RATE, speechEnd: (1000 + 20000) / RATE });
    expect(judged.aligned).toBe(true);
    expect(judged.renderedMs).toBeCloseTo(500, 5);
  });

  test("another item playing at the onset is not aligned", () => {
    const rec = render({ at: 1000, cutAt: 12000 });
    const other = Int16Array.from(item, (v) => -v || 1);
    expect(judgeBargeIn(rec, other, { onset: 12500 / RATE, speechEnd: 20000 / RATE }).aligned).toBe(false);
  });
});

describe("loudMoment: the trial's onset moved on to where the reply is loud", () => {
  // 0.1 s of silence, 1 s of voice, 0.5 s of pause, 1 s of voice.
  const voice = (n: number) => Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin(i / 7)) || 1);
  const pcm = Int16Array.from([...new Array(2400).fill(0), ...voice(24000), ...new Array(12000).fill(0), ...voice(24000)]);

  test("a moment in the voice stays where it was planned", () => {
    expect(loudMoment(pcm, 0.5)).toBeCloseTo(0.5, 5);
  });

  test("a moment in a pause moves to 10 ms into the next voice (the 200 ms before the onset hold it)", () => {
    // The pause is 1.0–1.5 s after the first audible sample: 200 ms of it still hold the voice before it,
    // so a planned 1.3 s moves on to 1.51 s.
    expect(loudMoment(pcm, 1.1)).toBeCloseTo(1.1, 5);
    expect(loudMoment(pcm, 1.3)).toBeCloseTo(1.51, 5);
  });

  test("no moment when the audio received so far has none", () => {
    expect(loudMoment(pcm.subarray(0, 2400 + 24000 + 6000), 1.3)).toBeUndefined();
  });
});
