// The page's audio session type (src/audio/audio-session.ts) on a stand-in navigator.
import { expect, test } from "vitest";
import { applyAudioSessionType } from "../../src/audio/audio-session.js";

test("play-and-record is set where the browser has an audio session left at auto; a type the page chose is kept; auto and no audio session change nothing", () => {
  const fresh = { audioSession: { type: "auto" } };
  expect(applyAudioSessionType("play-and-record", fresh)).toBe("play-and-record");
  expect(fresh.audioSession.type).toBe("play-and-record");
  const chosen = { audioSession: { type: "playback" } };
  expect(applyAudioSessionType("play-and-record", chosen)).toBe("playback");
  const left = { audioSession: { type: "auto" } };
  expect(applyAudioSessionType("auto", left)).toBe("auto");
  expect(applyAudioSessionType("play-and-record", {})).toBeUndefined();
  expect(applyAudioSessionType("play-and-record", undefined)).toBeUndefined();
});
