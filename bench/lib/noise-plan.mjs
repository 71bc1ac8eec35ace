// The noise bench's plan and figures (`npm run bench -- noise`, issue #40):
// which room sounds play at which level, which recordings of people talk over
// the bot and when, and what one variant's trials add up to. Pure but for
// reading the fixtures, so test/bench can check the arithmetic.
import { readFileSync, readdirSync } from "node:fs";
import { readWav } from "../../demo/server/wav.mjs";
import { prng } from "../../test/lib/prng.mjs";
import { planTrials, round, stats } from "./bargein-summary.mjs";
import { quantile } from "./results.mjs";

const NOISE = new URL("../../test/fixtures/noise/", import.meta.url);
const HUMAN = new URL("../pages/session/human/", import.meta.url);

/** How much softer the far level is than the near one (dB): a sound across the room rather than at the desk. */
export const FAR_DB = 15;
/** No sound is raised past this peak (dBFS): a real mic clips there. */
const PEAK_CEILING_DB = -1;
/** Quiet-room controls per variant: the reply over the room's floor alone. */
export const CONTROLS = 4;

/** The room sounds of test/fixtures/noise: name, kind, length, onset (s), loudest 100 ms and peak (dBFS). */
export function noiseCorpus() {
  return readdirSync(NOISE)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const meta = JSON.parse(readFileSync(new URL(f, NOISE), "utf8"));
      return { name: f.replace(/\.json$/, ""), kind: meta.kind, seconds: meta.samples / meta.sampleRate, onsetS: meta.onsetSamples / meta.sampleRate, loudestDbfs: meta.loudestDbfs, peakDbfs: meta.peakDbfs };
    });
}

/** RMS (dBFS) of the loudest 100 ms of 16 kHz samples: the measure the noise fixtures' `loudestDbfs` uses. */
export function loudestDb(samples, rate = 16000) {
  const span = rate / 10;
  let loudest = 0;
  for (let i = 0; i + span <= samples.length; i += rate / 100) {
    let sum = 0;
    for (let j = i; j < i + span; j++) sum += samples[j] * samples[j];
    loudest = Math.max(loudest, sum / span);
  }
  return 10 * Math.log10(loudest);
}

/** The median loudest 100 ms of the speech recordings (dBFS): how loud the user is at the mic. */
export function speechLevelDb(names) {
  const levels = names.map((name) => {
    const wav = readWav(new Uint8Array(readFileSync(new URL(`${name.replace(/^human\//, "")}.wav`, HUMAN))));
    return loudestDb(Float32Array.from(wav.samples, (s) => s / 32768), wav.sampleRate);
  });
  return quantile(levels, 0.5);
}

/**
 * Every sound at two levels, near (its loudest 100 ms as loud as the user's
 * voice) and far (FAR_DB under), never past PEAK_CEILING_DB, and CONTROLS
 * quiet windows, in a seeded order: each variant meets them in the same order.
 */
export function planNoiseEvents(corpus, nearDb, seed) {
  const events = [];
  for (const clip of corpus) {
    for (const [level, target] of [["near", nearDb], ["far", nearDb - FAR_DB]]) {
      const gainDb = Math.min(target - clip.loudestDbfs, PEAK_CEILING_DB - clip.peakDbfs);
      events.push({ name: clip.name, kind: clip.kind, level, seconds: clip.seconds, onsetS: clip.onsetS, gainDb: round(gainDb), gain: 10 ** (gainDb / 20), dbfs: round(clip.loudestDbfs + gainDb) });
    }
  }
  for (let i = 0; i < CONTROLS; i++) events.push({ name: null, level: "control" });
  const random = prng(seed);
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [events[i], events[j]] = [events[j], events[i]];
  }
  return events;
}

/**
 * How a recording's first word begins, by its spelling: "fricative" (f, s,
 * sh, th, v, z, and the breathy h), else "other". Such onsets reach Silero's
 * threshold late (src/vad/onset-cue.ts), which is what the cue is for.
 */
export function onsetClass(text) {
  return /^(f|s|h|v|z|th)/i.test(text.trim()) ? "fricative" : "other";
}

/** Each recording once, at a seeded moment of the reply, with its first word's onset class. */
export function planSpeech(names, seed) {
  return planTrials(names.length, seed, names).map((trial) => {
    const meta = JSON.parse(readFileSync(new URL(`${trial.fixture.replace(/^human\//, "")}.json`, HUMAN), "utf8"));
    return { name: trial.fixture, moment: trial.moment, text: meta.text, onset: onsetClass(meta.text) };
  });
}

const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);
const pctl = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

/** One variant's figures in the keys, from its page result and the speech plan. */
export function summariseVariant(result, speechPlan) {
  const events = result.noise.filter((e) => e.name !== "quiet" && !e.void);
  const controls = result.noise.filter((e) => e.name === "quiet" && !e.void);
  const trials = result.speech.filter((t) => !t.void);
  const onsetOf = new Map(speechPlan.map((p) => [p.name, p.onset]));
  const speechOf = (list) => {
    const ok = list.filter((t) => t.confirmed);
    const ducked = ok.filter((t) => typeof t.onsetToDuckedMs === "number");
    return {
      trials: list.length,
      onsetToSilentMs: ok.length ? stats(ok.map((t) => t.onsetToSilentMs)) : null,
      onsetToDuckedMs: ducked.length ? stats(ducked.map((t) => t.onsetToDuckedMs)) : null,
      confirmRate: list.length ? round((ok.length / list.length) * 1000) / 1000 : null,
    };
  };
  return {
    noise: {
      events: events.length,
      pausesPerNoiseEvent: round(mean(events.map((e) => e.pauses)) * 100) / 100,
      silencedMsPerNoiseEvent: pctl(events.map((e) => e.silencedMs)),
      falseInterruptions: events.filter((e) => e.interrupted).length,
      lostMs: events.reduce((a, e) => a + e.lostMs, 0),
      eventsWithAPause: events.filter((e) => e.pauses > 0).length,
      silencedMsTotal: events.reduce((a, e) => a + e.silencedMs, 0),
      dipsPerNoiseEvent: round(mean(events.map((e) => e.dips ?? 0)) * 100) / 100,
      dippedMsPerNoiseEvent: pctl(events.map((e) => e.dippedMs ?? 0)),
    },
    speech: {
      ...speechOf(trials),
      fricativeOnsets: speechOf(trials.filter((t) => onsetOf.get(t.name) === "fricative")),
      otherOnsets: speechOf(trials.filter((t) => onsetOf.get(t.name) !== "fricative")),
    },
    quietRoom: { windows: controls.length, pauses: controls.reduce((a, e) => a + e.pauses, 0), silencedMs: controls.reduce((a, e) => a + e.silencedMs, 0), falseInterruptions: controls.filter((e) => e.interrupted).length },
    voidEvents: result.noise.filter((e) => e.void).length + result.speech.filter((t) => t.void).length,
  };
}

/** Per sound and level, each variant's pauses, silenced ms, false interruptions and lost ms. */
export function perSound(events, results) {
  const rows = [];
  for (const e of events.filter((x) => x.name)) {
    const row = { sound: e.name, kind: e.kind, level: e.level, dbfs: e.dbfs };
    for (const [variant, result] of Object.entries(results)) {
      const m = result.noise.find((x) => x.name === e.name && x.level === e.level);
      row[variant] = m ? { pauses: m.pauses, silencedMs: m.silencedMs, dips: m.dips, dippedMs: m.dippedMs, falseInterruption: m.interrupted, lostMs: m.lostMs, ...(m.void ? { void: true } : {}) } : null;
    }
    rows.push(row);
  }
  return rows.sort((a, b) => a.sound.localeCompare(b.sound) || a.level.localeCompare(b.level));
}

/** Per recording, each variant's onset → silent (null: not confirmed). */
export function perSpeech(plan, results) {
  return plan.map((p) => {
    const row = { recording: p.name, firstWord: p.text.split(/\s+/)[0], onset: p.onset };
    for (const [variant, result] of Object.entries(results)) {
      const t = result.speech.find((x) => x.name === p.name);
      row[variant] = t ? { onsetToSilentMs: round(t.onsetToSilentMs), onsetToDuckedMs: round(t.onsetToDuckedMs), confirmed: t.confirmed, ...(t.void ? { void: true } : {}) } : null;
    }
    return row;
  });
}
