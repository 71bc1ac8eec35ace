// The noise bench's plan and figures (bench/lib/noise-plan.mjs): every sound
// at two levels and never past the mic's clipping, the same seeded order for
// every variant, onset classes by the first word, and the figures
// over judged events only (a void event is left out; controls apart).
import { describe, expect, test } from "vitest";
// @ts-ignore: plain ESM bench code
import { CONTROLS, FAR_DB, loudestDb, noiseCorpus, onsetClass, planNoiseEvents, summariseVariant } from "../../bench/lib/noise-plan.mjs";

describe("the noise plan", () => {
  test("the corpus has at least 8 kinds of sound, each labelled with its level", () => {
    const corpus = noiseCorpus();
    expect(new Set(corpus.map((c: { kind: string }) => c.kind)).size).toBeGreaterThanOrEqual(8);
    for (const clip of corpus) {
      expect(clip.seconds).toBeGreaterThan(0.5);
      expect(clip.seconds).toBeLessThanOrEqual(4);
      expect(clip.loudestDbfs).toBeLessThan(clip.peakDbfs + 0.1);
    }
  });

  test("each sound plays near and far, FAR_DB apart unless the near one would clip, plus the quiet controls", () => {
    const corpus = [
      { name: "soft", kind: "knock", seconds: 1, onsetS: 0, loudestDbfs: -30, peakDbfs: -10 },
      { name: "loud", kind: "ring", seconds: 1, onsetS: 0, loudestDbfs: -10, peakDbfs: -3 },
    ];
    const events = planNoiseEvents(corpus, -16, 1);
    expect(events).toHaveLength(4 + CONTROLS);
    const of = (name: string, level: string) => events.find((e: { name: string; level: string }) => e.name === name && e.level === level);
    // The soft knock would need +14 dB, but its peak may rise only 9 (to −1 dBFS).
    expect(of("soft", "near").dbfs).toBe(-21);
    expect(of("soft", "far").dbfs).toBe(-16 - FAR_DB);
    expect(of("loud", "near").dbfs).toBe(-16);
    expect(of("loud", "near").gain).toBeCloseTo(10 ** (-6 / 20), 6);
    expect(events.filter((e: { level: string }) => e.level === "control")).toHaveLength(CONTROLS);
    expect(planNoiseEvents(corpus, -16, 1)).toEqual(events);
  });

  test("loudestDb is the RMS of the loudest 100 ms", () => {
    const samples = new Float32Array(16000);
    for (let i = 4000; i < 6000; i++) samples[i] = i % 2 ? 0.1 : -0.1;
    expect(loudestDb(samples)).toBeCloseTo(-20, 1);
  });

  test("fricatives and a breathy h are told from other onsets by the first word", () => {
    expect(onsetClass("four queen of clubs")).toBe("fricative");
    expect(onsetClass("he was not an ill disposed young man")).toBe("fricative");
    expect(onsetClass("seven of clubs")).toBe("fricative");
    expect(onsetClass("ten of clubs")).toBe("other");
    expect(onsetClass("unless to be rather cold")).toBe("other");
  });
});

describe("summariseVariant", () => {
  // A duck under every pause: one dip more than its pauses, 100 ms longer.
  const event = (name: string | null, pauses: number, silencedMs: number, extra = {}) => ({ name: name ?? "quiet", level: name ? "near" : "control", pauses, silencedMs, dips: pauses + 1, dippedMs: silencedMs + 100, interrupted: false, lostMs: 0, void: false, ...extra });
  // Ducked 20 ms before silent.
  const trial = (name: string, confirmed: boolean, onsetToSilentMs: number | null, extra = {}) => ({ name, confirmed, onsetToSilentMs, onsetToDuckedMs: onsetToSilentMs === null ? null : Math.max(0, onsetToSilentMs - 20), void: false, ...extra });

  test("noise figures are per judged sound event; controls and void events are apart", () => {
    const s = summariseVariant(
      {
        noise: [
          event("knock", 2, 500),
          event("typing", 0, 0),
          event("cough", 1, 3000, { interrupted: true, lostMs: 9000 }),
          event("music", 5, 900, { void: true }),
          event(null, 0, 0),
          event(null, 1, 12),
        ],
        speech: [trial("human/a", true, 0), trial("human/b", true, 80), trial("human/c", false, null), trial("human/d", true, 10, { void: true })],
      },
      [
        { name: "human/a", onset: "fricative" },
        { name: "human/b", onset: "other" },
        { name: "human/c", onset: "fricative" },
      ],
    );
    expect(s.noise.events).toBe(3);
    expect(s.noise.pausesPerNoiseEvent).toBe(1);
    expect(s.noise.silencedMsPerNoiseEvent.p50).toBe(500);
    expect(s.noise.falseInterruptions).toBe(1);
    expect(s.noise.lostMs).toBe(9000);
    expect(s.noise.eventsWithAPause).toBe(2);
    expect(s.noise.dipsPerNoiseEvent).toBe(2);
    expect(s.noise.dippedMsPerNoiseEvent.p50).toBe(600);
    expect(s.speech.onsetToDuckedMs.max).toBe(60);
    expect(s.quietRoom).toEqual({ windows: 2, pauses: 1, silencedMs: 12, falseInterruptions: 0 });
    expect(s.speech.trials).toBe(3);
    expect(s.speech.confirmRate).toBeCloseTo(2 / 3, 3);
    expect(s.speech.onsetToSilentMs.max).toBe(80);
    expect(s.speech.fricativeOnsets).toEqual({ trials: 2, onsetToSilentMs: { p50: 0, p95: 0, max: 0 }, onsetToDuckedMs: { p50: 0, p95: 0, max: 0 }, confirmRate: 0.5 });
    expect(s.voidEvents).toBe(2);
  });
});
