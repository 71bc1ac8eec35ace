// An open-speaker echo path built from real speech, for the echo guard's
// tests in Node: the bot's fixtures through a mildly clipping loudspeaker, a
// seeded room and a gain, the person's fixtures over it, and a runner that
// hands a guard the chunks a 48 kHz worklet would.
import { readFileSync } from "node:fs";
import { EchoGuard } from "../../src/audio/echo/echo-guard.js";
import { RealFft } from "../../src/audio/echo/real-fft.js";
import { prng } from "./prng.mjs";

export const RATE = 16000;
const FIXTURES = "test/fixtures/";

/** 16-bit PCM mono WAV → samples in [−1, 1); walks the chunks rather than assuming 44 bytes. */
export function readWav(path: string): Float32Array {
  const b = readFileSync(path);
  let at = 12;
  let rate = 0;
  while (at + 8 <= b.length) {
    const id = b.toString("ascii", at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === "fmt ") {
      rate = b.readUInt32LE(at + 12);
      if (b.readUInt16LE(at + 10) !== 1 || b.readUInt16LE(at + 22) !== 16) throw new Error(`${path}: not mono 16-bit`);
    } else if (id === "data") {
      if (rate !== RATE) throw new Error(`${path}: ${rate} Hz, expected ${RATE}`);
      const out = new Float32Array(size / 2);
      for (let i = 0; i < out.length; i++) out[i] = b.readInt16LE(at + 8 + 2 * i) / 32768;
      return out;
    }
    at += 8 + size + (size & 1);
  }
  throw new Error(`${path}: no data chunk`);
}

export interface Utterance {
  samples: Float32Array;
  /** Speech onset and offset within `samples`. */
  onset: number;
  offset: number;
}

/** An utterance of a fixture, with `pad` samples kept either side of the speech. */
export function utterance(file: string, onset: number, offset: number, pad = 1600): Utterance {
  const w = readWav(FIXTURES + file);
  const from = Math.max(0, onset - pad);
  return { samples: w.slice(from, Math.min(w.length, offset + pad)), onset: onset - from, offset: offset - from };
}

// The bot speaks with one voice (slt); the person is another (rms), from other files.
export const BOT = [
  utterance("vad/speech-slt.wav", 23760, 54240, 800),
  utterance("speech/stop-please.wav", 4800, 25888, 800),
  utterance("vad/speech-two.wav", 18480, 32480, 800),
  utterance("speech/weather-question.wav", 8000, 31680, 800),
];
export const PERSON = [
  utterance("speech/help-me.wav", 4800, 21072),
  utterance("speech/turn-on-lights.wav", 6400, 31824),
  utterance("vad/speech-rms.wav", 14400, 42000),
  utterance("vad/speech-two.wav", 69840, 88640),
];

/** A bot turn: the bot's utterances in a loop with 200 ms pauses. */
export function botTurn(seconds: number): Float32Array {
  const out = new Float32Array(seconds * RATE);
  for (let at = 0, i = 0; at < out.length; i++) {
    const u = BOT[i % BOT.length].samples;
    out.set(u.subarray(0, Math.min(u.length, out.length - at)), at);
    at += u.length + 0.2 * RATE;
  }
  return out;
}

export function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Room response: seeded noise, amplitude falling 60 dB over RT60, unit energy. */
export function roomResponse(rt60: number, seed: number): Float64Array {
  const random = prng(seed);
  const h = new Float64Array(Math.round(rt60 * RATE));
  let energy = 0;
  for (let n = 0; n < h.length; n++) {
    h[n] = gaussian(random) * Math.exp((-6.908 * n) / (rt60 * RATE));
    energy += h[n] * h[n];
  }
  for (let n = 0; n < h.length; n++) h[n] /= Math.sqrt(energy);
  return h;
}

/** Linear convolution of x with h delayed by `delay`, through one big FFT. */
export function convolve(x: Float32Array, h: Float64Array, delay: number): Float64Array {
  let size = 4;
  while (size < x.length + h.length + delay) size *= 2;
  const fft = new RealFft(size);
  const a = new Float64Array(size);
  const b = new Float64Array(size);
  a.set(x);
  b.set(h, delay);
  const bins = size / 2 + 1;
  const [ar, ai, br, bi] = [0, 0, 0, 0].map(() => new Float64Array(bins));
  fft.forward(a, ar, ai);
  fft.forward(b, br, bi);
  for (let k = 0; k < bins; k++) {
    const re = ar[k] * br[k] - ai[k] * bi[k];
    ai[k] = ar[k] * bi[k] + ai[k] * br[k];
    ar[k] = re;
  }
  fft.inverse(ar, ai, a);
  return a.slice(0, x.length);
}

/**
 * The browser rig's room (test/browser/pages/echo/echo-path.js, the echo
 * bench's): a direct path, then a sum of three uniforms decaying to −60 dB at
 * RT60, unit energy; at 16 kHz here, so the same seed is the same kind of
 * room, not the same samples.
 */
export function rigRoomResponse(rt60: number, seed: number): Float64Array {
  const random = prng(seed);
  const h = new Float64Array(Math.ceil(rt60 * RATE));
  const decay = Math.log(1000) / (rt60 * RATE);
  h[0] = 1;
  for (let i = 1; i < h.length; i++) h[i] = 0.5 * (random() + random() + random() - 1.5) * Math.exp(-decay * i);
  let energy = 0;
  for (const v of h) energy += v * v;
  for (let i = 0; i < h.length; i++) h[i] /= Math.sqrt(energy);
  return h;
}

export interface PathOptions {
  rt60: number;
  delayMs: number;
  gainDb: number;
  seed: number;
  drive?: number;
  /** The browser rig's room (rigRoomResponse) instead of Gaussian noise. */
  rig?: boolean;
}

/**
 * Loudspeaker → room → mic gain. The loudspeaker is a tanh soft clip: tanh(x)
 * by default (−35 dB distortion at speech peaks), or with `drive` the browser
 * echo path's tanh(drive·x)/tanh(drive) (test/browser/pages/echo/echo-path.js uses 1.5).
 */
export function echoOf(ref: Float32Array, o: PathOptions): Float64Array {
  const driven = o.drive ? ref.map((v) => Math.tanh(o.drive! * v) / Math.tanh(o.drive!)) : ref.map((v) => Math.tanh(v));
  const room = o.rig ? rigRoomResponse(o.rt60, o.seed) : roomResponse(o.rt60, o.seed);
  const echo = convolve(driven, room, Math.round((o.delayMs * RATE) / 1000));
  const gain = 10 ** (o.gainDb / 20);
  for (let i = 0; i < echo.length; i++) echo[i] *= gain;
  return echo;
}

export function noise(length: number, seed: number, db = -70): Float64Array {
  const random = prng(seed);
  const scale = 10 ** (db / 20);
  return Float64Array.from({ length }, () => scale * gaussian(random));
}

export interface Run {
  /** out[t] is the guard's output for mic sample t (latency removed). */
  out: Float64Array;
  /** Per block: end time (s) and the state's flags and figures. */
  time: Float64Array;
  nearEnd: Uint8Array;
  converged: Uint8Array;
  trusted: Uint8Array;
  delayMs: number;
  delayFromFilter: boolean;
  erleEstimateDb: number;
  microsPerBlock: number;
}

/** Runs a guard over mic/ref in the chunks a 48 kHz worklet would hand it (43, 43, 42). */
export function run(mic: ArrayLike<number>, ref: Float32Array, guard = new EchoGuard()): Run {
  const length = ref.length;
  const micIn = Float32Array.from(mic);
  const out = new Float32Array(length);
  const blocks = Math.floor(length / guard.blockSize);
  const r: Run = {
    out: new Float64Array(length),
    time: new Float64Array(blocks),
    nearEnd: new Uint8Array(blocks),
    converged: new Uint8Array(blocks),
    trusted: new Uint8Array(blocks),
    delayMs: 0,
    delayFromFilter: false,
    erleEstimateDb: 0,
    microsPerBlock: 0,
  };
  const chunks = [43, 43, 42];
  let elapsed = 0;
  for (let t = 0, c = 0; t < length; c++) {
    const n = Math.min(chunks[c % 3], length - t);
    const started = performance.now();
    guard.process(micIn.subarray(t, t + n), ref.subarray(t, t + n), out.subarray(t, t + n));
    elapsed += performance.now() - started;
    t += n;
    const b = guard.state.blockCount - 1;
    if (b >= 0 && b < blocks && r.time[b] === 0) {
      r.time[b] = ((b + 1) * guard.blockSize) / RATE;
      r.nearEnd[b] = +guard.state.nearEnd;
      r.converged[b] = +guard.state.converged;
      r.trusted[b] = +guard.state.trusted;
    }
  }
  const latency = guard.latencySamples;
  for (let t = 0; t + latency < length; t++) r.out[t] = out[t + latency];
  r.delayMs = guard.state.delayMs;
  r.delayFromFilter = guard.state.delayFromFilter;
  r.erleEstimateDb = guard.state.erleDb;
  r.microsPerBlock = (elapsed * 1000) / guard.state.blockCount;
  return r;
}

/** ERLE over [from, to) seconds, skipping the samples `skip` marks: echo energy / residual-echo energy. */
export function erle(echo: Float64Array, residual: (t: number) => number, from: number, to: number, skip?: Uint8Array): number {
  let e = 0;
  let r = 0;
  for (let t = Math.round(from * RATE); t < Math.min(echo.length, Math.round(to * RATE)); t++) {
    if (skip?.[t]) continue;
    e += echo[t] * echo[t];
    const v = residual(t);
    r += v * v;
  }
  return 10 * Math.log10(e / r);
}

/** RMS over the 20 ms frames within 30 dB of the loudest: the level of speech while it is speaking. */
export function activeRms(x: ArrayLike<number>, from = 0, to = x.length): number {
  const frames: number[] = [];
  for (let t = from; t + 320 <= to; t += 320) {
    let s = 0;
    for (let i = t; i < t + 320; i++) s += x[i] * x[i];
    frames.push(s / 320);
  }
  const loud = Math.max(...frames) / 1000;
  const active = frames.filter((f) => f > loud);
  return Math.sqrt(active.reduce((a, b) => a + b, 0) / active.length);
}

/** The person's utterances laid over a bot turn (`length` samples) at the given times, each scaled to `level` (active RMS). */
export function person(at: number[], level: number, length: number): { signal: Float64Array; onsets: number[]; offsets: number[]; mask: Uint8Array } {
  const signal = new Float64Array(length);
  const mask = new Uint8Array(length);
  const onsets: number[] = [];
  const offsets: number[] = [];
  at.forEach((seconds, i) => {
    const u = PERSON[i % PERSON.length];
    const start = Math.round(seconds * RATE);
    const gain = level / activeRms(u.samples, u.onset, u.offset);
    for (let j = 0; j < u.samples.length && start + j < signal.length; j++) signal[start + j] = gain * u.samples[j];
    onsets.push(start + u.onset);
    offsets.push(start + u.offset);
    // The echo-only stretches exclude the utterance, 100 ms before its labelled
    // onset (breath, a soft first consonant) and 300 ms after its offset.
    mask.fill(1, Math.max(0, start + u.onset - 0.1 * RATE), Math.min(mask.length, start + u.offset + 0.3 * RATE));
  });
  return { signal, onsets, offsets, mask };
}
