// The pause token rules of src/audio/pause-token.ts, on a plain control block:
// no worklet, no timers. Each test is one ordering of the writers' commands
// that the real channels can produce; the last one tries many at random.
import { describe, expect, test } from "vitest";
import { clearPauses, isPauseToken, NO_PAUSE, pauseHolds, requestPause, requestResume } from "../../src/audio/pause-token.js";
import { duckPlayback, initPlaybackControl, pausePlayback, resumePlayback, unduckPlayback } from "../../src/audio/playback-control.js";
import { PlaybackSlot } from "../../src/protocol/audio-messages.js";
import { prng } from "../lib/prng.mjs";

const block = () => initPlaybackControl();

describe("playback pause tokens", () => {
  test("a new block has no pause standing, for any generation", () => {
    const c = block();
    expect(c[PlaybackSlot.PAUSED]).toBe(NO_PAUSE);
    for (const g of [0, 1, 7, 2 ** 31 - 1]) expect(pauseHolds(c, g)).toBe(false);
  });

  test("a pause holds the generation it names, and its own resume lifts it", () => {
    const c = block();
    expect(requestPause(c, 0)).toBe(true); // generation 0 is a real token
    expect(pauseHolds(c, 0)).toBe(true);
    expect(requestPause(c, 0)).toBe(true); // twice is once
    expect(requestResume(c, 0)).toBe(true);
    expect(pauseHolds(c, 0)).toBe(false);
    expect(requestResume(c, 0)).toBe(false); // nothing left to lift
  });

  test("a pause that arrives after a resume and a new generation is ignored by its token", () => {
    const c = block();
    const g = 4;
    requestPause(c, g);
    requestResume(c, g);
    // The worklet fences g + 1 (it only reads the slot; nothing is cleared).
    const late = requestPause(c, g);
    expect(late).toBe(true); // it is stored (nothing newer stands) …
    expect(pauseHolds(c, g + 1)).toBe(false); // … and holds nothing of g + 1
  });

  test("a fence to a newer generation voids an older pause without anyone clearing it", () => {
    const c = block();
    requestPause(c, 4);
    expect(pauseHolds(c, 4)).toBe(true);
    expect(pauseHolds(c, 5)).toBe(false);
  });

  test("a stale resume (token g) does not lift a pause of g + 1", () => {
    const c = block();
    requestPause(c, 5);
    expect(requestResume(c, 4)).toBe(false);
    expect(pauseHolds(c, 5)).toBe(true);
    expect(requestResume(c, 5)).toBe(true);
    expect(pauseHolds(c, 5)).toBe(false);
  });

  test("a stale pause cannot overwrite a newer one (so cannot lift it either)", () => {
    const c = block();
    requestPause(c, 5);
    expect(requestPause(c, 4)).toBe(false);
    expect(c[PlaybackSlot.PAUSED]).toBe(5);
    expect(pauseHolds(c, 5)).toBe(true);
  });

  test("a pause for a generation not fenced yet takes effect with its fence", () => {
    const c = block();
    requestPause(c, 6); // the writer saw fence 6; the worklet still renders 5
    expect(pauseHolds(c, 5)).toBe(false);
    expect(pauseHolds(c, 6)).toBe(true);
  });

  test("a flush clears the pause of the generations fenced so far, not one for a later fence", () => {
    const c = block();
    requestPause(c, 5);
    clearPauses(c, 5);
    expect(pauseHolds(c, 5)).toBe(false);
    requestPause(c, 4); // stale, stored since nothing stands
    clearPauses(c, 5);
    expect(c[PlaybackSlot.PAUSED]).toBe(NO_PAUSE);
    requestPause(c, 7);
    clearPauses(c, 5);
    expect(pauseHolds(c, 7)).toBe(true);
  });

  test("a command without a valid token changes nothing (Atomics would read undefined as 0)", () => {
    const c = block();
    requestPause(c, 0);
    for (const bad of [undefined, null, -1, 1.5, NaN, 2 ** 31, "0"] as unknown as number[]) {
      expect(isPauseToken(bad)).toBe(false);
      expect(requestResume(c, bad)).toBe(false);
      expect(requestPause(c, bad)).toBe(false);
    }
    expect(pauseHolds(c, 0)).toBe(true);
  });

  test("playback-control.ts applies the same rules (what another thread holding the block calls)", () => {
    const c = block();
    expect(pausePlayback(c, 5)).toBe(true);
    expect(pausePlayback(c, 4)).toBe(false);
    expect(resumePlayback(c, 4)).toBe(false);
    expect(pauseHolds(c, 5)).toBe(true);
    expect(resumePlayback(c, 5)).toBe(true);
    expect(pauseHolds(c, 5)).toBe(false);
  });

  test("random orderings: a stale command never holds the rendered generation nor lifts its pause", () => {
    // The worklet renders `fence`; writers send commands with the current token
    // or a stale one, in any order, and the fence moves on now and then. Model:
    // the current generation is paused iff its newest command was a pause (a
    // flush counts as a resume), whatever stale commands came in between.
    const random = prng(20261201);
    for (let run = 0; run < 200; run++) {
      const c = block();
      let fence = 0;
      let modelPaused = false;
      for (let step = 0; step < 200; step++) {
        const roll = random();
        if (roll < 0.1) {
          fence++;
          modelPaused = false; // the new generation starts unpaused …
        } else if (roll < 0.15) {
          clearPauses(c, fence);
          modelPaused = false;
        } else {
          const stale = random() < 0.5 && fence > 0;
          const token = stale ? Math.floor(random() * fence) : fence;
          const pause = random() < 0.5;
          if (pause) requestPause(c, token);
          else requestResume(c, token);
          if (!stale) modelPaused = pause;
        }
        expect(pauseHolds(c, fence), `run ${run}, step ${step}`).toBe(modelPaused);
      }
    }
  });

  test("a duck follows the pause's rules in its own slot, and neither lifts the other", () => {
    const c = block();
    expect(c[PlaybackSlot.DUCKED]).toBe(NO_PAUSE);
    expect(duckPlayback(c, 4, 12)).toBe(true);
    expect(c[PlaybackSlot.DUCK_DB]).toBe(12);
    expect(pauseHolds(c, 4, PlaybackSlot.DUCKED)).toBe(true);
    expect(pauseHolds(c, 4)).toBe(false); // a duck is no pause
    expect(pausePlayback(c, 4)).toBe(true);
    expect(resumePlayback(c, 4)).toBe(true);
    expect(pauseHolds(c, 4, PlaybackSlot.DUCKED)).toBe(true); // the resume left the duck
    expect(duckPlayback(c, 3, 12)).toBe(false); // a stale duck never replaces a newer one
    expect(unduckPlayback(c, 3)).toBe(false); // nor does a stale unduck lift it
    expect(pauseHolds(c, 5, PlaybackSlot.DUCKED)).toBe(false); // the next generation starts at full level
    clearPauses(c, 4, PlaybackSlot.DUCKED); // a flush
    expect(pauseHolds(c, 4, PlaybackSlot.DUCKED)).toBe(false);
  });
});
