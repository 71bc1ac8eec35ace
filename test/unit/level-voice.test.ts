/**
 * The VAD worker's level fallback (src/vad/level-voice.ts), alone and feeding the worker's one
 * SpeechDetector: the model takes over between two frames, inside an utterance, and that
 * utterance starts once and ends once. The worker itself runs it in Chromium
 * (test/browser/cold-start.spec.ts).
 */
import { describe, expect, test } from "vitest";
import { HANGOVER_FRAMES, LevelVoice, rmsDb } from "../../src/vad/level-voice.js";
import { SpeechDetector, type SpeechEvent } from "../../src/vad/speech-detector.js";
import { VAD_FRAME_SAMPLES } from "../../src/protocol/frames.js";

/** A 32 ms frame of a 220 Hz tone at `db` dBFS (RMS); -Infinity: digital silence. */
function frame(db: number, phase = 0): Float32Array {
  const out = new Float32Array(VAD_FRAME_SAMPLES);
  if (db === -Infinity) return out;
  const amplitude = Math.SQRT2 * 10 ** (db / 20);
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * 220 * (phase * VAD_FRAME_SAMPLES + i)) / 16000);
  return out;
}

/** Levels (dBFS) frame by frame → the fallback's answers. */
function run(levels: number[], voice = new LevelVoice()): number[] {
  return levels.map((db, i) => voice.probability(frame(db, i)));
}

const repeat = (db: number, frames: number) => Array<number>(frames).fill(db);

describe("LevelVoice", () => {
  test("a frame's level is its RMS in dBFS", () => {
    expect(rmsDb(frame(-20))).toBeCloseTo(-20, 1);
    expect(rmsDb(frame(-Infinity))).toBe(-Infinity);
  });

  test("a quiet room is no voice; a voice 30 dB over it is, from its first frame", () => {
    const p = run([...repeat(-60, 30), ...repeat(-30, 10)]);
    expect(p.slice(0, 30).every((v) => v === 0)).toBe(true);
    expect(p.slice(30)).toEqual(repeat(1, 10));
  });

  test("under -50 dBFS is never a voice, even over digital silence", () => {
    expect(run([...repeat(-Infinity, 10), ...repeat(-55, 20)]).every((v) => v === 0)).toBe(true);
  });

  test("a dip between words (down to 6 dB over the floor, or a 96 ms drop) keeps the voice; a longer quiet ends it", () => {
    const voice = new LevelVoice();
    run(repeat(-60, 30), voice);
    expect(run([...repeat(-25, 5), ...repeat(-50, 6), -25], voice)).toEqual(repeat(1, 12)); // -50 is 10 dB over the floor
    const afterDrop = run([...repeat(-25, 5), ...repeat(-60, HANGOVER_FRAMES + 3)], voice);
    expect(afterDrop.slice(0, 5 + HANGOVER_FRAMES)).toEqual(repeat(1, 5 + HANGOVER_FRAMES));
    expect(afterDrop.slice(5 + HANGOVER_FRAMES)).toEqual([0, 0, 0]);
  });

  test("a room that gets louder (a fan at -40 dBFS) becomes the floor within seconds, and is no voice then", () => {
    const voice = new LevelVoice();
    run(repeat(-65, 30), voice);
    const fan = run(repeat(-40, 200), voice); // 6.4 s
    expect(fan[0]).toBe(1);
    const lastVoiced = fan.lastIndexOf(1);
    expect(lastVoiced).toBeLessThan(150); // under 5 s
    expect(fan.slice(lastVoiced + 1).every((v) => v === 0)).toBe(true);
    // And a voice over the fan is heard again.
    expect(run(repeat(-20, 3), voice)).toEqual([1, 1, 1]);
  });

  test("the bot's echo (the guard's `echo`), and anything not `clear` over a learned echo path (open speakers), is quiet", () => {
    const voice = new LevelVoice();
    run(repeat(-60, 30), voice);
    expect(voice.probability(frame(-20), "echo")).toBe(0);
    expect(voice.probability(frame(-20), "doubleTalk", true)).toBe(0);
    expect(voice.probability(frame(-20), "unconfirmed", true)).toBe(0);
    // With headphones (no echo path) the guard's verdicts stand, and the SpeechDetector applies them.
    expect(voice.probability(frame(-20), "doubleTalk", false)).toBe(1);
    expect(voice.probability(frame(-20), "clear", true)).toBe(1);
  });
});

describe("the hand-over in the worker's one SpeechDetector", () => {
  const options = {
    positiveSpeechThreshold: 0.3,
    negativeSpeechThreshold: 0.25,
    redemptionMs: 300,
    minSpeechMs: 200,
    preSpeechPadMs: 800,
    submitUserSpeechOnPause: false,
    msPerFrame: 32,
    keepAudio: false,
  };

  /**
   * Frames at `levels`, judged by the fallback until frame `readyAt`, then by a "model" that
   * scores loud frames 0.9 and quiet ones 0.05 (Silero starts each stream from its own state).
   */
  function judge(levels: number[], readyAt: number): SpeechEvent[] {
    const detector = new SpeechDetector(options);
    const level = new LevelVoice();
    const events: SpeechEvent[] = [];
    levels.forEach((db, i) => {
      const f = frame(db, i);
      const p = i < readyAt ? level.probability(f) : db > -40 ? 0.9 : 0.05;
      events.push(...detector.push(f, p, { sampleIndex: i * VAD_FRAME_SAMPLES, contextTime: i * 0.032 }));
    });
    return events;
  }

  // 1 s of room, 1.6 s of voice with two short dips, 0.6 s of room.
  const utterance = [...repeat(-60, 31), ...repeat(-25, 20), ...repeat(-60, 3), ...repeat(-25, 15), ...repeat(-60, 4), ...repeat(-25, 12), ...repeat(-60, 19)];

  for (const [where, readyAt] of [["before it", 10], ["at its second frame", 32], ["in a dip", 52], ["near its end", 80], ["after it", utterance.length]] as const) {
    test(`the model ready ${where}: one speech start, one real start, one end`, () => {
      const kinds = judge(utterance, readyAt).map((e) => e.kind);
      expect(kinds).toEqual(["speechStart", "speechRealStart", "speechEnd"]);
    });
  }
});
