import { describe, expect, test } from "vitest";
import { SpeechReplay } from "../../src/session/speech-replay.js";

const RATE = 1000; // 1 sample per ms keeps the arithmetic readable
/** A 100 ms frame whose samples all equal `id`, so a test can see which frames came back. */
const frame = (id: number) => new Float32Array(100).fill(id);
const ids = (frames: Array<Float32Array | Int16Array>) => frames.map((f) => f[0]);

function recorded(count: number, maxSeconds = 10) {
  const replay = new SpeechReplay(RATE, maxSeconds);
  for (let i = 0; i < count; i++) replay.record(frame(i));
  return replay;
}

describe("SpeechReplay", () => {
  test("with no words confirmed, everything recorded comes back, in order", () => {
    const replay = recorded(5);
    expect(replay.seconds).toBeCloseTo(0.5);
    expect(ids(replay.rebase().frames)).toEqual([0, 1, 2, 3, 4]);
  });

  test("audio before the end of the last finished word is let go; the frame holding the end stays", () => {
    const replay = recorded(8);
    replay.word(0.1);
    replay.wordEnd(0.35); // inside frame 3 (300–400 ms)
    expect(ids(replay.rebase().frames)).toEqual([3, 4, 5, 6, 7]);
  });

  test("a word whose end never came is replayed from its start, and rebase says it is reopened", () => {
    const replay = recorded(8);
    replay.word(0.1);
    replay.wordEnd(0.3);
    replay.word(0.52);
    const { frames, reopened } = replay.rebase();
    expect(ids(frames)).toEqual([5, 6, 7]);
    expect(reopened).toBe(true);
  });

  test("a finished word is not reopened", () => {
    const replay = recorded(4);
    replay.word(0.1);
    replay.wordEnd(0.2);
    expect(replay.rebase().reopened).toBe(false);
  });

  test("after giveUp only what is recorded later comes back; a late word of the given-up audio reopens nothing", () => {
    const replay = recorded(5);
    replay.word(0.1);
    replay.giveUp();
    expect(replay.seconds).toBe(0);
    replay.word(0.42); // the old stream's last word, of audio it was sent before the end
    for (let i = 5; i < 8; i++) replay.record(frame(i));
    const { frames, reopened } = replay.rebase();
    expect(ids(frames)).toEqual([5, 6, 7]);
    expect(reopened).toBe(false);
  });

  test("at most maxSeconds is held: the oldest frames fall out", () => {
    const replay = recorded(30, 1);
    expect(replay.seconds).toBeCloseTo(1);
    expect(ids(replay.rebase().frames)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  });

  test("an open word whose start fell out of the bound is not reported reopened (the caller keeps it)", () => {
    const replay = new SpeechReplay(RATE, 0.3);
    replay.record(frame(0));
    replay.word(0.05);
    for (let i = 1; i < 6; i++) replay.record(frame(i));
    const { frames, reopened } = replay.rebase();
    expect(ids(frames)).toEqual([3, 4, 5]);
    expect(reopened).toBe(false);
  });

  test("sound the bound dropped before any word confirmed it is reported lost at rebase; dropped silence is not", () => {
    const replay = new SpeechReplay(RATE, 0.3);
    for (let i = 0; i < 6; i++) replay.record(frame(i)); // frame 0 is silent, 1–5 are sound
    const { frames, lostSeconds } = replay.rebase();
    expect(ids(frames)).toEqual([3, 4, 5]);
    expect(lostSeconds).toBeCloseTo(0.2); // frames 1 and 2
    expect(replay.rebase().lostSeconds).toBe(0); // said once
  });

  test("nothing is lost when a word end came past the dropped sound (the old stream heard it), or after giveUp", () => {
    const heard = new SpeechReplay(RATE, 0.3);
    for (let i = 1; i < 7; i++) heard.record(frame(i));
    heard.wordEnd(0.45);
    expect(heard.rebase().lostSeconds).toBe(0);
    const givenUp = new SpeechReplay(RATE, 0.3);
    for (let i = 1; i < 7; i++) givenUp.record(frame(i));
    givenUp.giveUp();
    expect(givenUp.rebase().lostSeconds).toBe(0);
  });

  test("after rebase the replayed audio is the new stream's timeline: its word ends count from 0", () => {
    const replay = recorded(10);
    replay.wordEnd(0.6); // old stream: frames 0–5 transcribed
    expect(ids(replay.rebase().frames)).toEqual([6, 7, 8, 9]);
    replay.record(frame(10));
    replay.wordEnd(0.2); // new stream: its first 200 ms are frames 6 and 7
    expect(ids(replay.rebase().frames)).toEqual([8, 9, 10]);
  });

  test("spokenAtMs: when the audio at a stream time was captured, from its frame's capture time, across a rebase; kept after its frames are transcribed", () => {
    const replay = new SpeechReplay(RATE, 10);
    // Frame i ends at capture time 10_000 + 100 (i + 1) ms.
    for (let i = 0; i < 6; i++) replay.record(frame(i), 10_000 + 100 * (i + 1));
    expect(replay.spokenAtMs(0.25)).toBe(10_250);
    expect(replay.spokenAtMs(0.6)).toBeUndefined(); // not sent yet
    replay.wordEnd(0.3); // frames 0–2 transcribed and let go: their capture times stay
    expect(replay.spokenAtMs(0.1)).toBe(10_100);
    replay.rebase(); // frames 3–5 start the new stream's timeline
    expect(replay.spokenAtMs(0.05)).toBe(10_350);
  });

  test("spokenAtMs survives a word end past the audio sent (a service's bad stop time), and forgets audio older than 20 s", () => {
    const replay = new SpeechReplay(RATE, 3);
    for (let i = 0; i < 6; i++) replay.record(frame(i), 10_000 + 100 * (i + 1));
    replay.wordEnd(12.83); // seen from the reference STT under load: 12 s ahead of the 0.6 s sent
    expect(replay.seconds).toBe(0); // what was sent counts as transcribed…
    expect(replay.spokenAtMs(0.45)).toBe(10_450); // …but a late word still finds when it was spoken
    replay.record(frame(6), 10_700);
    expect(replay.seconds).toBeCloseTo(0.1); // and the audio after it is not taken for transcribed too
    for (let i = 7; i < 100; i++) replay.record(frame(i), 10_000 + 100 * (i + 1));
    expect(replay.spokenAtMs(0.45)).toBe(10_450); // 9.5 s of audio later: a starved STT's lag
    for (let i = 100; i < 210; i++) replay.record(frame(i), 10_000 + 100 * (i + 1));
    expect(replay.spokenAtMs(0.45)).toBeUndefined(); // 20.5 s of audio later
    expect(replay.spokenAtMs(20.95)).toBe(30_950);
  });

  test("pad(): a flush's silence padding moves the timeline on, so the words after it map to the audio where they were spoken", () => {
    const replay = new SpeechReplay(RATE, 10);
    for (let i = 0; i < 3; i++) replay.record(frame(i), 10_000 + 100 * (i + 1));
    replay.pad(500); // Kyutai's 0.5 s of padding after the marker: stream time 0.3–0.8 s is silence
    for (let i = 3; i < 5; i++) replay.record(frame(i), 20_000 + 100 * (i - 2));
    // A word 0.85 s into the service's stream is 50 ms into frame 3, captured at 20_000 + 50.
    expect(replay.spokenAtMs(0.85)).toBe(20_050);
    // In the padding: no audio of the user's, no capture time.
    expect(replay.spokenAtMs(0.5)).toBeUndefined();
    expect(replay.spokenAtMs(0.25)).toBe(10_250);
    // The replay after a reconnect holds only microphone audio.
    replay.wordEnd(0.9);
    expect(ids(replay.rebase().frames)).toEqual([4]);
  });

  test("clear() forgets everything", () => {
    const replay = recorded(3);
    replay.clear();
    expect(replay.seconds).toBe(0);
    expect(replay.rebase().frames).toEqual([]);
  });
});
