// `npm run bench -- noise` (issue #40): what room sounds that are not speech
// cost a listener, and what the onset cue buys real voices, in the same run.
//
// In Chromium on the real parts (capture and playback worklets, Silero VAD
// worker) against the reference backend; the user on headphones, so the mic
// hears the room and the user, never the bot (bench/pages/session/noise.js
// says how each figure is read from the recorded output):
// - noise: each recording of test/fixtures/noise (typing, doors, a knock,
//   applause, a cough, a phone ring, a notification, music, babble) played
//   over the bot's long reply at two levels: near, its loudest 100 ms as loud
//   as the user's voice (the median of the speech recordings below), and far,
//   FAR_DB under; plus quiet-room controls (the reply over the room's floor
//   alone). Per sound: pauses (audible gaps in the reply), ms silenced, false
//   interruptions (a barge-in confirmed) and audio lost (a false barge-in's
//   unplayed reply).
// - speech: pocketsphinx-testdata's recordings of real people (bench/lib/
//   human-speech.mjs) talking over the reply, their first words' onsets
//   split into fricatives (four, seven, five, he, had…) and others: onset →
//   silent, and whether each barge-in was confirmed.
// - variants: `cueOn` (the cue silences the bot at the rise: the rule before
//   issue #40), `cueOff` (Silero's speech start alone), `duckCue` (the new
//   rule: duck at the rise, silence on a speech-like frame, quick release),
//   and the other settings of the curve (CURVE), each by its
//   `vad.onsetPause`; `default` is the options' defaults at run time. A
//   variant whose options the defaults equal is not run twice: `default`
//   then carries its figures and names it in `sameAs`. `curve` puts every
//   variant's goal figures side by side. NOISE_VARIANTS=a,b runs only those
//   (a quick look; the committed result runs them all).
// All variants hear the same events in the same seeded order, over a room
// floor at the speech recordings' loudest room (as the bargein bench does).
import { withBench, PAGE_OP_MS } from "./lib/with-bench.mjs";
import { prepareHumanSpeech } from "./lib/human-speech.mjs";
import { FAR_DB, noiseCorpus, perSound, perSpeech, planNoiseEvents, planSpeech, speechLevelDb, summariseVariant } from "./lib/noise-plan.mjs";
import { round } from "./lib/bargein-summary.mjs";

const PORT = 8872;
const SEED = 40;
/** The cue's settings compared, by `vad.onsetPause`; `default` sets none. */
const SETTINGS = {
  cueOn: { action: "pause", quickReleaseMs: 0 },
  cueOff: false,
  duckCue: { action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseMs: 96 },
  // The curve: one knob of the new rule moved at a time.
  pauseQuickRelease: { action: "pause", silenceProbability: 0.15, quickReleaseMs: 96 },
  duckHold: { action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseMs: 0 },
  duckEagerSilence: { action: "duck", duckDb: 12, silenceProbability: 0.08, quickReleaseMs: 96 },
  // A cheap speech-likeness check before Silero's: a voice's pitch (src/vad/voicing.ts).
  duckVoiced70: { action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseMs: 96, voicing: 0.7 },
  // Silero's state reset at each cue: offline its state after a long run of room sounds answered voices late.
  duckFresh: { action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseMs: 96, resetModel: true },
};
const only = process.env.NOISE_VARIANTS?.split(",").filter(Boolean);
const VARIANTS = Object.fromEntries(
  Object.entries(SETTINGS)
    .filter(([name]) => !only || only.includes(name))
    .map(([name, onsetPause]) => [name, { vad: { onsetPause } }]),
);
const GOALS = { pausesPerNoiseEvent: 0.2, silencedMsP95: 50, falseInterruptions: 0, onsetToSilentP95: 100, onsetToSilentMax: 250, confirmRate: 1 };

export default async function noiseBench() {
  const recordings = prepareHumanSpeech();
  const corpus = noiseCorpus();
  const nearDb = round(speechLevelDb(recordings.names));
  const events = planNoiseEvents(corpus, nearDb, SEED);
  const speech = planSpeech(recordings.names, SEED);
  const results = {};
  const problems = [];
  let defaults;
  await withBench({ port: PORT }, async ({ server, browser, step }) => {
    const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await step("open noise.html", async () => {
      await page.goto(`${server.base}/bench/pages/session/noise.html`);
      await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
    });
    defaults = await step("read the defaults", () => page.evaluate(() => import("/dist/advanced.js").then((m) => JSON.parse(JSON.stringify(m.DEFAULTS)))));
    const runs = { ...VARIANTS };
    if (sameVariant(defaults) === undefined) runs.default = {};
    for (const [name, options] of Object.entries(runs)) {
      const started = Date.now();
      // A window takes about 4 s and a speech trial about 8: a bound, not a measurement.
      const result = await step(`run ${name} (${events.length} noise windows, ${speech.length} speech trials)`, () => page.evaluate((o) => window.bench.run(o), { options, events, speech, bedDb: recordings.noiseDb }), { timeoutMs: 15_000 * (events.length + speech.length) });
      results[name] = result;
      problems.push(...result.errors.map((e) => `${name}: ${e}`), ...result.csp.map((e) => `${name}: csp ${e}`));
      const s = summariseVariant(result, speech);
      console.log(`  ${name}: ${((Date.now() - started) / 1000).toFixed(0)} s; ${s.noise.pausesPerNoiseEvent} pauses and p95 ${s.noise.silencedMsPerNoiseEvent.p95} ms silenced per noise event, ${s.noise.falseInterruptions} false interruptions; ${s.noise.dipsPerNoiseEvent} dips (p95 ${s.noise.dippedMsPerNoiseEvent.p95} ms); speech onset → silent p95 ${s.speech.onsetToSilentMs?.p95} ms (ducked ${s.speech.onsetToDuckedMs?.p95}), confirmed ${s.speech.confirmRate}`);
    }
  });
  const same = sameVariant(defaults);
  const summaries = Object.fromEntries(Object.entries(results).map(([name, r]) => [name, summariseVariant(r, speech)]));
  const byVariant = { ...results, ...(same ? { default: results[same] } : {}) };
  const sounds = perSound(events, results);
  printSounds(sounds, Object.keys(results));
  return {
    ...Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, summaries[name]])),
    default: { ...(same ? summaries[same] : summaries.default), sameAs: same ?? null, options: `vad.onsetPause ${JSON.stringify(defaults.vad.onsetPause)}` },
    curve: Object.entries(summaries).map(([name, s]) => ({
      variant: name,
      onsetPause: name === "default" ? defaults.vad.onsetPause : SETTINGS[name],
      pausesPerNoiseEvent: s.noise.pausesPerNoiseEvent,
      silencedMsP95: s.noise.silencedMsPerNoiseEvent.p95,
      dipsPerNoiseEvent: s.noise.dipsPerNoiseEvent,
      dippedMsP95: s.noise.dippedMsPerNoiseEvent.p95,
      falseInterruptions: s.noise.falseInterruptions,
      onsetToSilentMs: s.speech.onsetToSilentMs,
      onsetToDuckedMs: s.speech.onsetToDuckedMs,
      confirmRate: s.speech.confirmRate,
      goalsMet: goalsMet(s),
    })),
    method:
      "An audible pause is a run of 10 ms or more in which the output's level (2.7 ms windows) is 20 dB or more under the reply's own level in the 200 ms before the event: silence, or a duck as deep. " +
      "A dip is such a run 6 dB or more under it (a duck: the bot plays on, softer); pauses count as dips too. silenced and dipped ms add up each event's pauses and dips. " +
      "Onset → silent: from the speech's labelled onset to the point after which every sample stays under 1e-4 until the barge-in's flush; onset → ducked: to the point after which the level stays 6 dB under the reply's. " +
      "Goals: the audible pauses and silenced ms are judged, not the dips, which are reported beside them.",
    goals: {
      noise: `≤ ${GOALS.pausesPerNoiseEvent} audible pauses per noise event, ≤ ${GOALS.silencedMsP95} ms silenced per event at p95, ${GOALS.falseInterruptions} false interruptions`,
      speech: `onset → silent p95 ≤ ${GOALS.onsetToSilentP95} ms and max ≤ ${GOALS.onsetToSilentMax} ms, every barge-in confirmed`,
      met: Object.fromEntries(Object.entries({ ...summaries, ...(same ? { default: summaries[same] } : {}) }).map(([name, s]) => [name, goalsMet(s)])),
    },
    levels: { nearDbfs: nearDb, farDbfs: round(nearDb - FAR_DB), roomFloorDbfs: recordings.noiseDb, measure: "RMS of the loudest 100 ms; near = the median of the speech recordings', never past a −1 dBFS peak" },
    perSound: sounds,
    perSpeech: perSpeech(speech, byVariant),
    perEvent: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.noise.map((e) => `${e.name}/${e.level}: ${e.pauses} pauses [${e.pauseMs.join(",")}] ms, ${e.dips} dips [${e.dipMs.join(",")}] ms${e.interrupted ? ` INTERRUPTED (${e.reason}, lost ${e.lostMs} ms)` : ""}${e.void ? " void" : ""} | ${e.vadTrace}`)])),
    speechTraces: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.speech.map((t) => `${t.name}: ${t.confirmed ? `ducked at ${round(t.onsetToDuckedMs)} ms, silent at ${round(t.onsetToSilentMs)} ms, confirmed at ${Math.round(t.onsetToConfirmMs)} ms (${t.reason})` : "NOT CONFIRMED"}${t.void ? " void" : ""} | ${t.vadTrace}`)])),
    plan: { seed: SEED, sounds: corpus.length, noiseWindows: events.length, speechTrials: speech.length, variantsRun: Object.keys(results).join(","), freshReplies: Object.fromEntries(Object.entries(results).map(([n, r]) => [n, r.freshReplies])) },
    problems: [...problems, ...Object.entries(results).flatMap(([name, r]) => [...r.warnings.map((w) => `${name}: warning ${w}`), ...(r.overloads ? [`${name}: ${r.overloads} uplink overloads`] : [])])],
  };

  /** The variant whose `vad.onsetPause` the defaults equal, if any (every setting it names, and on). */
  function sameVariant(d) {
    if (!d) return undefined;
    const cue = d.vad.onsetPause;
    return Object.keys(VARIANTS).find((name) => {
      const v = SETTINGS[name];
      if (v === false || cue === false || cue?.enabled === false) return v === false && (cue === false || cue?.enabled === false);
      return ["action", "duckDb", "silenceProbability", "quickReleaseMs", "voicing", "resetModel"].every((key) => (v[key] ?? cue[key]) === cue[key]);
    });
  }
}

function goalsMet(s) {
  return {
    noise: s.noise.pausesPerNoiseEvent <= GOALS.pausesPerNoiseEvent && s.noise.silencedMsPerNoiseEvent.p95 <= GOALS.silencedMsP95 && s.noise.falseInterruptions <= GOALS.falseInterruptions,
    speech: s.speech.onsetToSilentMs !== null && s.speech.onsetToSilentMs.p95 <= GOALS.onsetToSilentP95 && s.speech.onsetToSilentMs.max <= GOALS.onsetToSilentMax && s.speech.confirmRate >= GOALS.confirmRate,
  };
}

/** The per-sound breakdown as a table (the runner's table prints only the headline figures). */
function printSounds(rows, variants) {
  console.log(`  ${"sound".padEnd(16)} ${"level".padEnd(5)} ${"dBFS".padStart(6)}  ${variants.map((v) => `${v}: pauses/ms/false`.padEnd(24)).join(" ")}`);
  for (const r of rows) {
    const cells = variants.map((v) => (r[v] ? `${r[v].pauses}/${r[v].silencedMs}/${r[v].falseInterruption ? "YES" : "no"}${r[v].void ? " void" : ""}` : "—").padEnd(24));
    console.log(`  ${r.sound.padEnd(16)} ${r.level.padEnd(5)} ${String(r.dbfs).padStart(6)}  ${cells.join(" ")}`);
  }
}
