// Issue #39: in WebKitGTK the echo guard let the bot interrupt itself over open speakers. Measured
// there (test/engines/README.md): the MediaStream source that feeds the microphone runs a render
// quantum later every few seconds under load, so the echo path's delay grows by 128 context frames
// at a time, while the reference (the echo tap) stays put. This is that path in Node, from the
// worklet on: the bot's voice (slt fixtures) rendered quantum by quantum through the echo tap into
// CaptureEcho, its echo (the rig's room, RT60 0.3 s, −6 dB, tanh 1.5x) as the microphone, at both
// context rates the engines run (WebKitGTK 44.1 kHz, Chromium and Firefox 48 kHz). The echo alone is
// in the mic, so the guard's whole output is residual echo: cancellation is the mic's energy over
// the output's, per second of the reply.
import { beforeAll, describe, expect, test } from "vitest";
import { CaptureEcho } from "../../worklets/capture-echo.js";
import { echoTap, writeTap } from "../../worklets/echo-tap.js";
import { Resampler } from "../../src/audio/resampler.js";
import { RATE, botTurn, echoOf } from "../lib/echo-room.js";

const QUANTUM = 128;
const SECONDS = 20;
const LEAD_S = 0.5;
const ROOM = { rt60: 0.3, delayMs: 70, gainDb: -6, seed: 7, drive: 1.5, rig: true };
/** Where WebKit's hop gains a quantum, seconds (it did so every 3–5 s in the measured run). */
const SHIFTS_S = [8, 12, 16];

const ref16 = new Float32Array(SECONDS * RATE);
ref16.set(botTurn(SECONDS - LEAD_S), LEAD_S * RATE);
const echo16 = Float32Array.from(echoOf(ref16, ROOM));

/**
 * One reply through CaptureEcho at `rate`; the mic path gains a quantum of silence at each of
 * `shifts` (seconds). Returns the cancellation (dB) per whole second of the reply.
 */
function cancellation(rate: number, shifts: number[]): number[] {
  const up = (x: Float32Array) => new Resampler(RATE, rate).resampleAll(x);
  const ref = up(ref16);
  const echo = up(echo16);
  const mic = new Float32Array(ref.length);
  const at = new Set(shifts.map((s) => Math.round((s * rate) / QUANTUM) * QUANTUM));
  for (let j = 0, from = 0; j + QUANTUM <= mic.length; j += QUANTUM) {
    if (at.has(j)) continue;
    mic.set(echo.subarray(from, from + QUANTUM), j);
    from += QUANTUM;
  }
  const tap = `path-shift-${rate}-${shifts.length}`;
  const capture = new CaptureEcho(rate, { tap, tailMs: 256 });
  const micEnergy = new Float64Array(SECONDS);
  const outEnergy = new Float64Array(SECONDS);
  let outSamples = 0;
  for (let j = 0; j + QUANTUM <= mic.length; j += QUANTUM) {
    writeTap(echoTap(tap), j, ref.subarray(j, j + QUANTUM));
    const n = capture.process(mic.subarray(j, j + QUANTUM), j);
    const second = Math.floor(j / rate);
    // Energy per sample is the same at either rate for this band-limited (16 kHz-born) echo.
    for (let i = 0; i < QUANTUM; i++) micEnergy[second] += (mic[j + i] * mic[j + i] * RATE) / rate;
    for (let i = 0; i < n; i++) outEnergy[Math.floor((outSamples + i) / RATE)] += capture.out[i] * capture.out[i];
    outSamples += n;
  }
  return Array.from(micEnergy, (m, s) => 10 * Math.log10(m / outEnergy[s]));
}

const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
const rounded = (x: number[]) => x.map((v) => Math.round(v * 10) / 10);

describe("the echo guard when the microphone's path shifts by a render quantum (issue #39)", () => {
  const still: Record<number, number[]> = {};
  const shifted: Record<number, number[]> = {};
  // Seconds of offline DSP per reply: slow on a loaded machine, so a long hook timeout.
  beforeAll(() => {
    for (const rate of [44100, 48000]) {
      still[rate] = cancellation(rate, []);
      shifted[rate] = cancellation(rate, SHIFTS_S);
    }
    console.log(`cancellation per second, dB: steady path ${JSON.stringify({ 44100: rounded(still[44100]), 48000: rounded(still[48000]) })}`);
    console.log(`path a quantum later at ${SHIFTS_S.join(", ")} s: ${JSON.stringify({ 44100: rounded(shifted[44100]), 48000: rounded(shifted[48000]) })}`);
  }, 60_000);

  test("on a steady path the guard cancels as much at 44.1 kHz as at 48 kHz (the DSP does not depend on the context's rate)", () => {
    const from = SHIFTS_S[0];
    expect(mean(still[44100].slice(from))).toBeGreaterThan(15);
    expect(Math.abs(mean(still[44100].slice(from)) - mean(still[48000].slice(from)))).toBeLessThan(1);
  });

  // The goal, not met yet: kept as a known failure, so that the day it passes the suite says so. The
  // guard relearns the displaced response from scratch (its output prints above); one that follows
  // the shift would keep the learnt response, moved by the quantum, and cancel in the second after it
  // within 6 dB of the steady path.
  test.fails("goal (issue #39): the second after each shift cancels within 6 dB of the steady path", () => {
    for (const rate of [44100, 48000]) {
      for (const s of SHIFTS_S) expect(shifted[rate][s], `${rate} Hz, shift at ${s} s`).toBeGreaterThan(still[rate][s] - 6);
    }
  });
});
