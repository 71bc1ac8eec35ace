// The onset cue on synthetic frames: a sudden rise of the level over the
// room's floor pauses; quiet (or the hold's end) with no speech start
// releases; the bot's own echo and a speech already under way never cue.
import { describe, expect, it } from "vitest";
import { OnsetCue, ONSET_MIN_DBFS, ONSET_RISE_DB, loudestWindowDb } from "../../src/vad/onset-cue.js";
import { resolveOnsetPause } from "../../src/vad/onset-options.js";
import type { FrameEcho } from "../../src/protocol/frames.js";
import type { OnsetCueSettings } from "../../src/protocol/vad-messages.js";
import { DEFAULTS } from "../../src/defaults.js";

const FRAME = 512;
/** A frame of noise at `db` dBFS RMS (seeded), optionally only in its last 8 ms window. */
function frame(db: number, { lastWindowOnly = false, seed = 1 } = {}): Float32Array {
  const out = new Float32Array(FRAME);
  const amp = Math.pow(10, db / 20) * Math.sqrt(3);
  let x = seed * 9301 + 49297;
  for (let i = lastWindowOnly ? FRAME - 128 : 0; i < FRAME; i++) {
    x = (x * 9301 + 49297) % 233280;
    out[i] = amp * ((x / 233280) * 2 - 1);
  }
  return out;
}

function feed(cue: OnsetCue, frames: Float32Array[], { echo = "clear" as FrameEcho, armed = true, speaking = false, probability = 0 } = {}) {
  return frames.map((f) => cue.push(f, echo, armed, speaking, false, probability));
}
/** Frames with Silero's probability each: [dBFS, probability]. */
function feedP(cue: OnsetCue, frames: [number, number][]) {
  return frames.map(([db, p], i) => cue.push(frame(db, { seed: i + 2 }), "clear", true, false, false, p));
}
const DUCK: OnsetCueSettings = { action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseFrames: 3, voicing: 0, resetModel: false };
const times = <T>(n: number, f: () => T) => Array.from({ length: n }, f);

describe("OnsetCue", () => {
  it("measures a frame by its loudest 8 ms window", () => {
    expect(loudestWindowDb(frame(-30))).toBeCloseTo(-30, 0);
    expect(loudestWindowDb(frame(-30, { lastWindowOnly: true }))).toBeCloseTo(-30, 0);
    expect(loudestWindowDb(new Float32Array(FRAME))).toBe(-Infinity);
  });

  it("pauses on a rise of ONSET_RISE_DB over a room's floor, and releases after two quiet frames with no speech start", () => {
    const cue = new OnsetCue();
    // The floor comes down at once and rises 0.2 dB a frame: 60 frames of a −60 dBFS room set it.
    expect(feed(cue, times(60, () => frame(-60)))).toEqual(times(60, () => null));
    // 12 dB over the floor is not enough; a rise past it, late in the frame, is.
    expect(feed(cue, [frame(-60 + ONSET_RISE_DB - 3)])).toEqual([null]);
    expect(feed(cue, [frame(-60 + ONSET_RISE_DB + 10, { lastWindowOnly: true })])).toEqual(["pause"]);
    expect(cue.holding).toBe(true);
    // A click: the level falls back at once; two quiet frames later the bot plays on.
    expect(feed(cue, [frame(-60), frame(-60)])).toEqual([null, "release"]);
    expect(cue.holding).toBe(false);
  });

  it("holds while the level stays up, at most 480 ms, and a speech start takes the pause over", () => {
    const cue = new OnsetCue();
    feed(cue, times(30, () => frame(-65)));
    expect(feed(cue, [frame(-35)])).toEqual(["pause"]);
    expect(feed(cue, times(14, () => frame(-35)))).toEqual([...times(13, () => null), "release"]);
    // The room got louder and stayed so: that level is the floor now, and it does not cue again.
    expect(feed(cue, times(20, () => frame(-35)))).toEqual(times(20, () => null));
    // Another rise: Silero's speech start hands the pause over; no release comes.
    feed(cue, times(80, () => frame(-65)));
    expect(feed(cue, [frame(-30)])).toEqual(["pause"]);
    cue.handOver();
    expect(feed(cue, times(20, () => frame(-65)), { speaking: true })).toEqual(times(20, () => null));
  });

  it("never cues on the bot's own echo, under ONSET_MIN_DBFS, disarmed, or during speech", () => {
    const cue = new OnsetCue();
    feed(cue, times(10, () => new Float32Array(FRAME)));
    expect(feed(cue, [frame(-20)], { echo: "echo" })).toEqual([null]);
    expect(feed(cue, [frame(ONSET_MIN_DBFS - 2)])).toEqual([null]);
    expect(feed(cue, [frame(-20)], { armed: false })).toEqual([null]);
    expect(feed(cue, [frame(-20)], { speaking: true })).toEqual([null]);
    // Over a learned echo path (open speakers) the level is the echo's residual as much as the user: no cue, trusted or not.
    expect(cue.push(frame(-20), "unconfirmed", true, false, true)).toBe(null);
    expect(cue.push(frame(-20), "doubleTalk", true, false, true)).toBe(null);
    // With headphones (no echo path) the same frame cues.
    expect(cue.push(frame(-20), "unconfirmed", true, false, false)).toBe("pause");
    // The floor follows a room that got louder: a steady level stops cueing.
    const room = new OnsetCue();
    const steady = feed(room, times(200, () => frame(-40)), { armed: false });
    expect(steady.every((a) => a === null)).toBe(true);
    expect(feed(room, [frame(-40)])).toEqual([null]);
  });

  it("ducks at a rise, and silences the bot only on a frame Silero finds speech-like", () => {
    const cue = new OnsetCue(DUCK);
    feed(cue, times(60, () => frame(-60)));
    // A voice: the rise ducks; the next frame at 0.15 or more silences; the pause then holds as a pause does.
    expect(feedP(cue, [[-25, 0.02], [-22, 0.4]])).toEqual(["duck", "pause"]);
    expect(cue.holding).toBe(true);
    expect(feedP(cue, [[-22, 0.9], [-22, 0.9], [-22, 0.9]])).toEqual([null, null, null]);
    cue.handOver(); // Silero's speech start
    expect(cue.holding).toBe(false);
    // A rise already speech-like on its own frame pauses at once.
    const loud = new OnsetCue(DUCK);
    feed(loud, times(60, () => frame(-60)));
    expect(feedP(loud, [[-25, 0.5]])).toEqual(["pause"]);
  });

  it("lets the bot play on after quickReleaseFrames with no speech-like frame, though the sound goes on", () => {
    const cue = new OnsetCue(DUCK);
    feed(cue, times(60, () => frame(-60)));
    // Music or a ringing tail: loud all along, Silero low: released on the cue's third frame, not at the 480 ms cap.
    expect(feedP(cue, [[-25, 0.01], [-26, 0.05], [-27, 0.03]])).toEqual(["duck", null, "release"]);
    expect(cue.holding).toBe(false);
    // The floor took the hold's quietest frame: the same sound does not duck again at once.
    expect(feedP(cue, [[-26, 0.02], [-25, 0.02]])).toEqual([null, null]);
    // One speech-like frame in the hold rules the quick release out (a fricative before its vowel).
    const voice = new OnsetCue({ ...DUCK, action: "pause" });
    feed(voice, times(60, () => frame(-60)));
    expect(feedP(voice, [[-30, 0.02], [-30, 0.2], [-30, 0.05], [-30, 0.05]])).toEqual(["pause", null, null, null]);
    expect(voice.holding).toBe(true);
  });

  it("with no quick release (the rule before issue #40) holds a loud sound to the cap", () => {
    const cue = new OnsetCue();
    feed(cue, times(60, () => frame(-60)));
    expect(feedP(cue, times(15, () => [-25, 0.01] as [number, number]))).toEqual(["pause", ...times(13, () => null), "release"]);
  });
});

describe("OnsetCue with voicing", () => {
  it("silences a duck on a voiced frame before Silero says speech, and never judges voicing with it off", () => {
    const vowelLike = (db: number) => {
      // A 150 Hz pulse train at about `db` dBFS.
      const out = new Float32Array(FRAME);
      for (let i = 0; i < FRAME; i += Math.round(16000 / 150)) out[i] = 1;
      const rms = Math.sqrt(out.reduce((a, x) => a + x * x, 0) / FRAME);
      return out.map((x) => (x / rms) * Math.pow(10, db / 20));
    };
    const voiced = new OnsetCue({ ...DUCK, voicing: 0.7 });
    const plain = new OnsetCue(DUCK);
    for (const cue of [voiced, plain]) feed(cue, times(60, () => frame(-60)));
    // A noise rise ducks both; a voiced frame next silences only the one that judges voicing.
    expect(voiced.push(frame(-25), "clear", true, false, false, 0.01)).toBe("duck");
    expect(plain.push(frame(-25), "clear", true, false, false, 0.01)).toBe("duck");
    expect(voiced.push(vowelLike(-25), "clear", true, false, false, 0.01)).toBe("pause");
    expect(plain.push(vowelLike(-25), "clear", true, false, false, 0.01)).toBe(null);
  });
});

describe("resolveOnsetPause", () => {
  it("takes the defaults for true, merges an object over them, and is off for false", () => {
    const d = DEFAULTS.vad.onsetPause;
    expect(resolveOnsetPause(true)).toEqual({ action: d.action, duckDb: d.duckDb, silenceProbability: d.silenceProbability, quickReleaseFrames: Math.round(d.quickReleaseMs / 32), voicing: d.voicing, resetModel: d.resetModel });
    expect(resolveOnsetPause(undefined)).toEqual(resolveOnsetPause(true));
    expect(resolveOnsetPause({ action: "pause", quickReleaseMs: 0 })).toMatchObject({ action: "pause", quickReleaseFrames: 0 });
    expect(resolveOnsetPause({ quickReleaseMs: 10 })?.quickReleaseFrames).toBe(1);
    expect(resolveOnsetPause(false)).toBe(null);
    expect(resolveOnsetPause({ enabled: false } as object)).toBe(null);
  });

  it("names a bad value", () => {
    expect(() => resolveOnsetPause("yes")).toThrow(/onsetPause` must be true, false or an object/);
    expect(() => resolveOnsetPause({ action: "mute" } as object)).toThrow(/onsetPause.action` must be "duck" or "pause"/);
    expect(() => resolveOnsetPause({ duckDb: 0 })).toThrow(/onsetPause.duckDb` must be a number of dB from 1 to 60/);
    expect(() => resolveOnsetPause({ silenceProbability: 2 })).toThrow(/silenceProbability/);
    expect(() => resolveOnsetPause({ quickReleaseMs: -1 })).toThrow(/quickReleaseMs/);
    expect(() => resolveOnsetPause({ voicing: 1.5 })).toThrow(/onsetPause.voicing` must be a number from 0 to 1/);
    expect(() => resolveOnsetPause({ resetModel: "yes" } as object)).toThrow(/onsetPause.resetModel` must be true or false/);
  });
});
