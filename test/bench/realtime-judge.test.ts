// The realtime bench's judge (bench/pages/realtime/judge.js) follows an item through the recorded
// output as the player renders it: a quantum the render thread skipped and a stretch where the
// player ran dry keep the item's place; the client's fade is where it stops. On a loaded machine
// an earlier judge, comparing at one fixed offset, called most trials "misaligned".
import { describe, expect, test } from "vitest";
// @ts-ignore: a plain ES module of the bench's page
import { OutputTracker, followItem, judgeBargeIn, loudMoment, loudOnsetOnOutput } from "../../bench/pages/realtime/judge.js";

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

/**
 * A reply as flite speaks it: voiced phrases (a 120 Hz voice with three harmonics under a syllable
 * envelope, a little seeded noise) with pauses between. `seed` makes another reply.
 */
function reply(phrases: [voicedS: number, pauseS: number][], seed: number): Int16Array {
  let state = seed;
  const noise = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 60;
  const out: number[] = new Array(Math.round(0.05 * RATE)).fill(0);
  const f0 = 110 + 10 * seed;
  for (const [voiced, pause] of phrases) {
    const n = Math.round(voiced * RATE);
    for (let i = 0; i < n; i++) {
      const syllable = Math.sin((Math.PI * ((i / RATE) % 0.2)) / 0.2);
      const t = i / RATE;
      const v = 9000 * syllable * (Math.sin(2 * Math.PI * f0 * t) + 0.5 * Math.sin(4 * Math.PI * f0 * t) + 0.3 * Math.sin(6 * Math.PI * f0 * t)) / 1.8;
      out.push(Math.round(v + noise()));
    }
    for (let i = 0; i < Math.round(pause * RATE); i++) out.push(0);
  }
  return Int16Array.from(out);
}

/** Lays items out in a recording as a queue player plays them: `plan` is [item, from sample, count][] at unity gain, `gapsAt` zeros. */
function play(length: number, plan: [Int16Array, number, number, number][]) {
  const samples = new Float32Array(length);
  for (const [pcm, at, from, n] of plan) for (let k = 0; k < n && from + k < pcm.length; k++) samples[at + k] = pcm[from + k] / 32768;
  return { startFrame: 0, samples, known: new Uint8Array(Math.ceil(length / 128)).fill(1) };
}

const tracked = (rec: { startFrame: number; samples: Float32Array; known: Uint8Array }, items: Int16Array[], arrived: number[] = items.map(() => 0)) =>
  new OutputTracker(() => items.map((pcm, k) => ({ pcm, arrivedFrame: arrived[k] }))).advance(rec);

describe("verdicts: every trial judged, or unjudged with the reason", () => {
  const older = reply([[1.2, 0.3], [1.5, 0.2]], 1);
  const own = reply([[0.9, 0.4], [1.4, 0.2]], 2);

  test("an older reply's audio at the onset (the peer's queue playing an older turn): judged, stale, with how much played", () => {
    // The older item plays from 0.5 s into it for 3 s of the window, never stopped; the trial's item is queued behind it.
    const olderLeft = older.length - 12000;
    const rec = play(6 * RATE, [
      [older, 0, 12000, olderLeft],
      [own, olderLeft, 0, own.length],
    ]);
    const onset = 1.0; // s into the window: the older item's second phrase
    const judged = judgeBargeIn(rec, own, { onset, speechEnd: onset + 0.95 }, { tracker: tracked(rec, [older, own]), index: 1 });
    expect(judged.playingAtOnset).toBe("older");
    expect(judged.judged).toBe(true);
    expect(judged.unjudged).toBeNull();
    expect(judged.aligned).toBe(false);
    // Older audio to the end of the window (speech end + 0.3 s = 2.25 s), less its quiet quanta (a 0.3 s pause in it).
    expect(judged.staleAudioMs).toBeGreaterThan(1700);
    expect(judged.staleAudioMs).toBeLessThanOrEqual(2250);
    expect(judged.staleAfterOnsetMs).toBeGreaterThan(900);
    // Never silent to the speech's end + 0.3 s: the peer did not stop.
    expect(judged.onsetToSilentMs).toBeCloseTo(1250, 0);
  });

  test("replies that repeat one another sample for sample: the tracker follows the older one on, not the trial's", () => {
    const same = Int16Array.from(older);
    // Item 0 plays from its start; item 1, identical, arrived at 1.5 s and waits in the queue behind it.
    const rec = play(5 * RATE, [[older, 0, 0, older.length]]);
    const tracker = tracked(rec, [older, same], [0, 1.5 * RATE]);
    const judged = judgeBargeIn(rec, same, { onset: 2.0, speechEnd: 2.9 }, { tracker, index: 1 });
    expect(judged.playingAtOnset).toBe("older");
    expect(judged.judged).toBe(true);
    // Stale from item 1's arrival (1.5 s) to the speech's end + 0.3 s (3.2 s), less the older item's 0.2 s pause there.
    expect(judged.staleAudioMs).toBeGreaterThan(1400);
    expect(judged.staleAudioMs).toBeLessThan(1700);
  });

  /**
   * A fade that leaves the item just before the labelled onset, as in openai.bargein's trial 23 under two
   * CPU burners (722 ms into the item): the output (s16) there as that recording held it, small values
   * where the item's are larger. Here the item's samples at the divergence are of the other sign, so that
   * the output is not the item at any gain from `cutAt` on.
   */
  function fadedAt(cutAt: number, at: number) {
    const item = Int16Array.from(own);
    const heard = [3, 4, 3, 1, 1, 0, 1, 4];
    item.set([10, 6, -4, -6, -3, -5, -7, -2], cutAt - 2);
    const rec = play(at + item.length + RATE, [[item, at, 0, cutAt - 2]]);
    // The fade's first 10 samples before the divergence, then what the recording held there, then silence.
    for (let k = 12; k > 2; k--) rec.samples[at + cutAt - k] = (item[cutAt - k] / 32768) * (k / 12);
    heard.forEach((v, k) => (rec.samples[at + cutAt - 2 + k] = v / 32768));
    return { item, rec };
  }

  test("bargein's cue fade beginning before the labelled onset (the fixture's level can cue 43 ms early): aligned when the cue could act there", () => {
    const at = 1000;
    const cutAt = 17328; // 722 ms into the item
    const { item, rec } = fadedAt(cutAt, at);
    const onset = (at + cutAt + 240) / RATE; // the labelled onset, 10 ms after the divergence
    const t = { onset, speechEnd: onset + 0.95 };
    const strict = judgeBargeIn(rec, item, t);
    expect(strict.judged).toBe(false);
    expect(strict.unjudged).toMatch(/^misaligned: the output left the item at 722\.0 ms of it, 10\.0 ms before the onset could pause it/);
    const judged = judgeBargeIn(rec, item, { ...t, cueAt: onset - 0.043 });
    expect(judged.aligned).toBe(true);
    expect(judged.judged).toBe(true);
    expect(judged.atDivergence.output).toEqual([3, 4, 3, 1, 1, 0, 1, 4]);
  });

  test("a fade beginning before the earliest cue is still misaligned", () => {
    const at = 1000;
    const cutAt = 17328;
    const { item, rec } = fadedAt(cutAt, at);
    const onset = (at + cutAt + 0.1 * RATE) / RATE;
    const judged = judgeBargeIn(rec, item, { onset, cueAt: onset - 0.043, speechEnd: onset + 0.95 });
    expect(judged.judged).toBe(false);
    expect(judged.unjudged).toMatch(/^misaligned: .* 57\.0 ms before the onset could pause it, and was no item known at the onset$/);
  });

  test("the output quiet in the 300 ms before the onset: unjudged, saying so with the peak", () => {
    // The onset 0.35 s into the item's 0.4 s pause (its first phrase ends 0.95 s in).
    const rec = play(own.length + RATE, [[own, 0, 0, own.length]]);
    const onset = (0.05 + 0.9 + 0.35) ;
    const judged = judgeBargeIn(rec, own, { onset, speechEnd: onset + 0.95 });
    expect(judged.botAudibleAtOnset).toBe(false);
    expect(judged.judged).toBe(false);
    expect(judged.unjudged).toMatch(/^inaudible onset: the output peaked at 0\.00\d\d in the 300 ms before it$/);
  });

  test("a new reply that repeats the one just cut, sample for sample: its own, not the older one going on", () => {
    const same = Int16Array.from(own);
    // Item 0 cut 0.8 s in (bargein's barge-in), 0.5 s of silence, then item 1, identical, from its start.
    const cut = Math.round(0.8 * RATE);
    const rec = play(5 * RATE, [
      [own, 0, 0, cut],
      [same, cut + RATE / 2, 0, same.length],
    ]);
    const tracker = tracked(rec, [own, same], [0, cut]);
    const judged = judgeBargeIn(rec, same, { onset: (cut + RATE / 2) / RATE + 0.5, speechEnd: (cut + RATE / 2) / RATE + 1.45 }, { tracker, index: 1 });
    expect(judged.playingAtOnset).toBe("item");
    expect(judged.staleAudioMs).toBe(0);
  });

  test("a barge-in the client never stopped, over its own reply: judged (not stopped is a finding), no stale audio", () => {
    const rec = play(own.length + RATE, [[own, 0, 0, own.length]]);
    const judged = judgeBargeIn(rec, own, { onset: 0.5, speechEnd: 1.45 }, { tracker: tracked(rec, [older, own]), index: 1 });
    expect(judged.judged).toBe(true);
    expect(judged.playingAtOnset).toBe("item");
    expect(judged.staleSamples).toBeNull();
    expect(judged.staleAudioMs).toBe(0);
    expect(judged.onsetToSilentMs).toBeCloseTo(1250, 0);
  });
});

describe("loudOnsetOnOutput: the onset planned on the output as rendered", () => {
  const own = reply([[0.9, 0.4], [1.4, 0.2]], 3);

  test("an output lagging the item by a starved stretch: the onset moves past the pause the output will be in", () => {
    // 0.3 s of the item, then the player ran dry for 0.25 s, then on: the output lags the item by 0.25 s.
    const lag = Math.round(0.25 * RATE);
    const rec = play(Math.round(0.7 * RATE), [
      [own, 0, 0, Math.round(0.3 * RATE)],
      [own, Math.round(0.3 * RATE) + lag, Math.round(0.3 * RATE), RATE],
    ]);
    const tracker = tracked(rec, [own]);
    // The item: 50 ms of silence, a phrase to 0.95 s, a pause to 1.35 s. On the output, 0.25 s behind, a
    // moment at 1.25 s is 1.0 s of the item: 50 ms into its pause, the phrase loud in the 200 ms before.
    expect(loudOnsetOnOutput(tracker, [own], 1.25)?.onset).toBeCloseTo(1.25, 2);
    // 1.45 s on the output is 1.2 s of the item, 0.25 s into its pause: moved on into the next phrase, which
    // plays from 1.6 s (its syllable rises from zero: loud 20 ms in). On the item's own timeline 1.45 s
    // stays where it is (the phrase loud before it), and the output there is 0.25 s into the pause.
    expect(loudOnsetOnOutput(tracker, [own], 1.45)?.onset).toBeCloseTo(1.62, 2);
    expect(loudMoment(own, 1.45 - 0.05)).toBeCloseTo(1.4, 2);
  });

  test("past the playing item's end, the queue's next item: the onset falls on it", () => {
    const next = reply([[1.0, 0.1]], 4);
    const rec = play(RATE, [[own, 0, Math.round(2.5 * RATE), Math.round(0.4 * RATE)]]);
    const tracker = tracked(rec, [own, next]);
    const found = loudOnsetOnOutput(tracker, [own, next], 1.0);
    expect(found?.item).toBe(1);
  });

  test("nothing recognised yet: undefined", () => {
    const rec = { startFrame: 0, samples: new Float32Array(RATE), known: new Uint8Array(RATE / 128 + 1).fill(1) };
    expect(loudOnsetOnOutput(tracked(rec, [own]), [own], 0.5)).toBeUndefined();
  });
});
