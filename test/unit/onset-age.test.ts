// onsetAgeS: how long ago the user's turn began, for the pre-roll a speech
// stream opens the turn with (Gemini Live's activityStart).
import { describe, expect, test } from "vitest";
import { onsetAgeS } from "../../src/session/onset-age.js";

const speaking = (speechStartAt: number, speechStartTime?: number) => ({ voice: { kind: "real" as const, startAt: speechStartAt, startTime: speechStartTime, realAt: speechStartAt } });

describe("onsetAgeS", () => {
  test("no utterance going on (push-to-talk, a typed start): 0", () => {
    expect(onsetAgeS({ voice: { kind: "quiet", startAt: 1000, startTime: 1, realAt: 1000 } }, 5000, 4)).toBe(0);
  });

  test("a main thread on time: both clocks agree, and the age is that", () => {
    // Onset at audio 10.0 s, its event at main 20,000 ms; 300 ms later both have moved 0.3 s.
    expect(onsetAgeS(speaking(20_000, 10.0), 20_300, 10.3)).toBeCloseTo(0.3, 6);
  });

  test("after a stall, the onset's event and 0.6 s of audio since it arrive together: the audio's clock says 0.6 s, not 0", () => {
    // The event was handled at main 25,000 ms (late), and by then the frames up to audio 10.6 s had come in the same burst.
    expect(onsetAgeS(speaking(25_000, 10.0), 25_000, 10.6)).toBeCloseTo(0.6, 6);
  });

  test("no audio time (a VAD or a capture that gives none, or no frame yet): the main thread's clock", () => {
    expect(onsetAgeS(speaking(20_000), 20_250, 10.6)).toBeCloseTo(0.25, 6);
    expect(onsetAgeS(speaking(20_000, 10.0), 20_250, undefined)).toBeCloseTo(0.25, 6);
  });

  test("an audio clock behind the onset (a frame from before it is the newest) never shortens the main thread's age", () => {
    expect(onsetAgeS(speaking(20_000, 10.0), 20_200, 9.9)).toBeCloseTo(0.2, 6);
  });
});
