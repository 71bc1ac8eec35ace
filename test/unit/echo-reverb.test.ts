// Issue #40, part 2: in a reverberant room the user's barge-in over the bot's
// first reply was never confirmed (`npm run bench -- echo`, row
// minus6dB_rt60_0.8s), while the echo alone never interrupted the bot. This is
// that row in Node, from the worklet on: the bench's room (the rig's impulse
// response, RT60 0.8 s, seed 9; its loudspeaker, tanh 1.5x; −6 dB; the 78 ms
// the bench's guard finds), the bot's voice (slt fixtures) rendered at 48 kHz
// quantum by quantum through the echo tap into CaptureEcho (both resamplers,
// the EchoGuard, each VAD frame's verdict), then Silero v5 and the speech
// detector with the session's barge-in settings. The user says "can you help
// me" at the fixture's own level, its onset 1.8–2.8 s into the reply, as the
// bench's trials do; each trial is a fresh guard, as each bench trial is a
// fresh session. A barge-in is confirmed when `speechRealStart` fires.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, test } from "vitest";
import { CaptureEcho } from "../../worklets/capture-echo.js";
import { echoTap, writeTap } from "../../worklets/echo-tap.js";
import { Resampler } from "../../src/audio/resampler.js";
import { SpeechDetector } from "../../src/vad/speech-detector.js";
import { configureOrt, createSilero, type SileroModel } from "../../src/vad/worker/silero.js";
import { DEFAULTS } from "../../src/defaults.js";
import { RATE, botTurn, echoOf, readWav } from "../lib/echo-room.js";

const CONTEXT_RATE = 48000;
const QUANTUM = 128;
const LEAD_S = 0.5;
const SECONDS = 6;
const ROOM = { rt60: 0.8, delayMs: 78, gainDb: -6, seed: 9, drive: 1.5, rig: true };
/** The user's fixture: its speech starts 0.3 s in and ends at 1.317 s. */
const USER = readWav("test/fixtures/speech/help-me.wav");
const USER_ONSET_S = 0.3;
const USER_OFFSET_S = 1.317;

const bytes = (path: string) => {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
};

const ref16 = new Float32Array(SECONDS * RATE);
ref16.set(botTurn(SECONDS - LEAD_S), LEAD_S * RATE);
const echo16 = echoOf(ref16, ROOM);
const upsample = (x: ArrayLike<number>) => new Resampler(RATE, CONTEXT_RATE).resampleAll(Float32Array.from(x));

interface Trial {
  /** Seconds into the reply: the user's speech onset, and where the barge-in was confirmed (null: never). */
  onsetS: number | null;
  confirmedS: number | null;
  /** VAD frames the guard called trusted double talk. */
  doubleTalkFrames: number;
  events: string[];
}

let silero: SileroModel;

/** One fresh session's first reply; the user's fixture starts `userAtS` into it (null: the echo alone). */
async function trial(userAtS: number | null): Promise<Trial> {
  const mic16 = Float32Array.from(echo16);
  const start = userAtS === null ? -1 : Math.round((LEAD_S + userAtS) * RATE);
  if (start >= 0) USER.forEach((v, i) => start + i < mic16.length && (mic16[start + i] += v));
  const mic = upsample(mic16);
  const ref = upsample(ref16);
  const tap = `reverb-${Math.random()}`;
  const capture = new CaptureEcho(CONTEXT_RATE, { tap, tailMs: DEFAULTS.echoGuard.tailMs });
  const { bargeIn, vad } = DEFAULTS;
  const detector = new SpeechDetector({ ...vad, minSpeechMs: bargeIn.minSpeechMs, msPerFrame: 32, keepAudio: false });
  silero.reset();
  const frame = new Float32Array(512);
  let fill = 0;
  let frames = 0;
  const result: Trial = { onsetS: start < 0 ? null : userAtS! + USER_ONSET_S, confirmedS: null, doubleTalkFrames: 0, events: [] };
  for (let q = 0; (q + 1) * QUANTUM <= mic.length; q++) {
    const at = q * QUANTUM;
    writeTap(echoTap(tap), at, ref.subarray(at, at + QUANTUM));
    const n = capture.process(mic.subarray(at, at + QUANTUM), at);
    for (let i = 0; i < n; i++) {
      frame[fill++] = capture.out[i];
      if (fill < frame.length) continue;
      fill = 0;
      const verdict = capture.takeVerdict();
      const probability = await silero.probability(frame);
      const timing = { sampleIndex: frames * 512, contextTime: (frames * 512) / RATE };
      frames++;
      const s = (frames * 512) / RATE - LEAD_S;
      if (verdict === "doubleTalk") result.doubleTalkFrames++;
      for (const e of detector.push(frame, probability, timing, verdict)) {
        result.events.push(`${e.kind} ${s.toFixed(2)}`);
        if (e.kind === "speechRealStart" && result.confirmedS === null) result.confirmedS = s;
      }
    }
  }
  return result;
}

describe("EchoGuard in a reverberant room (RT60 0.8 s), the first reply", () => {
  const moments = [1.5, 1.7, 1.9, 2.1, 2.3, 2.5];
  let alone: Trial;
  let talks: Trial[] = [];
  beforeAll(async () => {
    configureOrt(bytes("node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm"));
    silero = await createSilero("v5", bytes("node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx"));
    alone = await trial(null);
    talks = [];
    for (const m of moments) talks.push(await trial(m));
    console.log(`echo alone: ${alone.doubleTalkFrames} double-talk frames; events: ${alone.events.join(", ") || "none"}`);
    for (const t of talks) {
      const took = t.confirmedS === null ? "never confirmed" : `confirmed ${Math.round((t.confirmedS - t.onsetS!) * 1000)} ms after his onset`;
      console.log(`user at ${t.onsetS!.toFixed(2)} s into the reply: ${took}; ${t.doubleTalkFrames} double-talk frames; events: ${t.events.join(", ")}`);
    }
  }, 120_000);

  test("the bot's echo alone never confirms a barge-in", () => {
    expect(alone.events.filter((e) => e.startsWith("speechRealStart"))).toEqual([]);
  });

  test("the user's speech over it starts an utterance at every onset: the bot pauses for him", () => {
    for (const t of talks) {
      const start = t.events.find((e) => e.startsWith("speechStart"));
      expect(start, `user at ${t.onsetS} s`).toBeDefined();
      expect(Number(start!.split(" ")[1])).toBeLessThan(t.onsetS! + (USER_OFFSET_S - USER_ONSET_S));
    }
  });

  // The goal, not met yet: kept as a known failure, so that the day it passes the suite says so.
  // Here 2 of 6 (the gate opens on him in bursts, each re-opening untrusted for 150 ms, and once
  // shut he is learnt as residual echo). A gate carried on at 5 dB (a2248ae, reverted) confirmed
  // those two sooner but no more, and none in Chromium (bench echo: 0 of 6).
  test.fails("goal (issue #40): his 'can you help me' is confirmed while he speaks, in at least 5 of 6 onsets", () => {
    const inTime = talks.filter((t) => t.confirmedS !== null && t.confirmedS <= t.onsetS! + (USER_OFFSET_S - USER_ONSET_S) + 0.1);
    expect(inTime.length).toBeGreaterThanOrEqual(5);
  });
});
