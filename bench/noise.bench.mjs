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
// - variants: `cueOn` (`vad.onsetPause: true`), `cueOff` (Silero's speech
//   start alone) and `default` (the options' defaults at run time). A
//   variant whose options the defaults equal is not run twice: `default`
//   then carries its figures and names it in `sameAs`.
// All variants hear the same events in the same seeded order, over a room
// floor at the speech recordings' loudest room (as the bargein bench does).
import { withBench, PAGE_OP_MS } from "./lib/with-bench.mjs";
import { prepareHumanSpeech } from "./lib/human-speech.mjs";
import { FAR_DB, noiseCorpus, perSound, perSpeech, planNoiseEvents, planSpeech, speechLevelDb, summariseVariant } from "./lib/noise-plan.mjs";
import { round } from "./lib/bargein-summary.mjs";

const PORT = 8872;
const SEED = 40;
/** The variants compared, by the options they set; `default` sets none. */
const VARIANTS = {
  cueOn: { vad: { onsetPause: true } },
  cueOff: { vad: { onsetPause: false } },
};
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
      console.log(`  ${name}: ${((Date.now() - started) / 1000).toFixed(0)} s; ${s.noise.pausesPerNoiseEvent} pauses and p95 ${s.noise.silencedMsPerNoiseEvent.p95} ms silenced per noise event, ${s.noise.falseInterruptions} false interruptions; speech p95 ${s.speech.onsetToSilentMs?.p95} ms, confirmed ${s.speech.confirmRate}`);
    }
  });
  const same = sameVariant(defaults);
  const summaries = Object.fromEntries(Object.entries(results).map(([name, r]) => [name, summariseVariant(r, speech)]));
  const byVariant = { ...results, ...(same ? { default: results[same] } : {}) };
  const sounds = perSound(events, results);
  printSounds(sounds, Object.keys(results));
  return {
    cueOn: summaries.cueOn,
    cueOff: summaries.cueOff,
    default: { ...(same ? summaries[same] : summaries.default), sameAs: same ?? null, options: `vad.onsetPause ${defaults.vad.onsetPause}` },
    goals: {
      noise: `≤ ${GOALS.pausesPerNoiseEvent} pauses per noise event, ≤ ${GOALS.silencedMsP95} ms silenced per event at p95, ${GOALS.falseInterruptions} false interruptions`,
      speech: `onset → silent p95 ≤ ${GOALS.onsetToSilentP95} ms and max ≤ ${GOALS.onsetToSilentMax} ms, every barge-in confirmed`,
      met: Object.fromEntries(Object.entries({ ...summaries, ...(same ? { default: summaries[same] } : {}) }).map(([name, s]) => [name, goalsMet(s)])),
    },
    levels: { nearDbfs: nearDb, farDbfs: round(nearDb - FAR_DB), roomFloorDbfs: recordings.noiseDb, measure: "RMS of the loudest 100 ms; near = the median of the speech recordings', never past a −1 dBFS peak" },
    perSound: sounds,
    perSpeech: perSpeech(speech, byVariant),
    perEvent: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.noise.map((e) => `${e.name}/${e.level}: ${e.pauses} pauses [${e.pauseMs.join(",")}] ms${e.interrupted ? ` INTERRUPTED (${e.reason}, lost ${e.lostMs} ms)` : ""}${e.void ? " void" : ""} | ${e.vadTrace}`)])),
    speechTraces: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.speech.map((t) => `${t.name}: ${t.confirmed ? `silent at ${round(t.onsetToSilentMs)} ms, confirmed at ${Math.round(t.onsetToConfirmMs)} ms (${t.reason})` : "NOT CONFIRMED"}${t.void ? " void" : ""} | ${t.vadTrace}`)])),
    plan: { seed: SEED, sounds: corpus.length, noiseWindows: events.length, speechTrials: speech.length, variantsRun: Object.keys(results).join(","), freshReplies: Object.fromEntries(Object.entries(results).map(([n, r]) => [n, r.freshReplies])) },
    problems: [...problems, ...Object.entries(results).flatMap(([name, r]) => [...r.warnings.map((w) => `${name}: warning ${w}`), ...(r.overloads ? [`${name}: ${r.overloads} uplink overloads`] : [])])],
  };

  /** The variant whose options the defaults equal, if any. */
  function sameVariant(d) {
    if (!d) return undefined;
    return Object.keys(VARIANTS).find((name) => Object.entries(VARIANTS[name].vad).every(([key, value]) => d.vad[key] === value));
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
