// `npm run bench -- providers`: the barge-in on each hosted provider, beside
// the reference Kyutai pair in the same run, in Chromium on the real parts
// against the reference backend's emulators (demo/server/emulators/).
//
// Each row is one session of the SDK's own barge-in (bench/pages/session/
// bargein.js, mode "vad"): the same seeded trials (fixture, moment) for every
// row, each talking over the backend's long story. An STT provider runs with
// the reference Kyutai TTS, a TTS provider with the reference Kyutai STT, so
// a row that differs from the `kyutai` row differs by that provider alone.
// Per row:
// - bargeIns: barge-ins measured (failed trials are counted apart);
// - heardWordError {mean, max}: per barge-in, |words the history kept as heard
//   − TTS words whose audio had fully played at the output when it went
//   silent| (the recording, aligned to the reply by its first loud sample;
//   the word times are the provider's own, so a provider that mistimes its
//   words shows it in heardWordErrorSameRule only as far as the recording
//   and the timings disagree);
// - staleSamples: samples ≥ 1e-4 of the cut reply in the recording after the
//   flush (+20 ms) and before the next reply was fenced;
// - firstAudioByteToAudibleMs {p50, p95}: the session's turn events (first
//   TTS audio byte handled by the page → its first sample rendered, plus the
//   context's output latency), over every reply of the row;
//   recordedFirstAudioByteToAudibleMs is the same read from the recording
//   (context time of the first byte → the reply's first sample, plus the
//   output latency), as a check.
// - sessionRestarts: fatal errors the row's session stopped on and was started
//   again after (bench/pages/session/bargein.js), each named in `problems`;
//   unansweredQuestions: fresh questions the STT heard nothing in, asked again.
// Note: the emulators are not the services (README): these figures are the
// providers' code and wire protocols on loopback, with flite's voice and
// pocketsphinx's words, not the hosted services' latency.
import { withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";
import { MOMENT_S, openBargeinPage, planTrials, round, summarise } from "./lib/bargein-summary.mjs";
import { BENCH_PROVIDERS } from "./lib/bench-args.mjs";

const PORT = 8858;
const SEED = 11;
const FIXTURES = ["help-me", "turn-on-lights"];
/** Barge-ins per row: at least 20 measured, with two to spare for a trial that fails. */
const TRIALS = 22;
/** The reference pair first: the baseline every other row is read against. */
const ROWS = ["kyutai", "deepgram", "assemblyai", "elevenlabs", "cartesia"];

const p50p95 = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? Math.round((a / b) * 100) / 100 : null);

/** One row's figures from its page run. */
function row(name, run) {
  const ok = run.trials.filter((t) => !t.failed);
  const s = summarise(run.trials);
  const sdkAudible = run.turns.map((t) => t.firstAudioByteToAudibleMs).filter((v) => Number.isFinite(v));
  const recordedAudible = ok.map((t) => t.firstAudioByteToFirstSampleMs + run.outputLatency * 1000).filter((v) => Number.isFinite(v));
  const kind = BENCH_PROVIDERS[name];
  return {
    stt: kind === "stt" ? name : "kyutai",
    tts: kind === "tts" ? name : "kyutai",
    bargeIns: s.trials,
    failedTrials: s.failed,
    sessionRestarts: run.restarts.length,
    unansweredQuestions: run.unansweredQuestions,
    heardWordError: s.heardWordError,
    heardWordErrorSameRule: s.heardWordErrorSameRule,
    staleSamples: s.staleSamples,
    firstAudioByteToAudibleMs: p50p95(sdkAudible),
    replies: sdkAudible.length,
    recordedFirstAudioByteToAudibleMs: p50p95(recordedAudible),
    onsetToPauseMs: { p50: s.onsetToSilenceMs.p50, p95: s.onsetToSilenceMs.p95 },
    onsetToFlushMs: { p50: s.onsetToFlushMs.p50, p95: s.onsetToFlushMs.p95 },
    directPauses: `${s.directPauses}/${s.trials}`,
    confirmReasons: s.reasons,
    trialsWithLeakAfterPause: s.trialsWithLeak,
    unknownQuanta: s.unknownQuanta,
  };
}

function printRows(rows) {
  const cells = (r) => [
    r.name.padEnd(11),
    String(r.bargeIns).padStart(4),
    `${r.heardWordError.mean} / ${r.heardWordError.max}`.padStart(11),
    String(r.staleSamples).padStart(6),
    `${r.firstAudioByteToAudibleMs.p50} / ${r.firstAudioByteToAudibleMs.p95}`.padStart(13),
    `${r.onsetToPauseMs.p50} / ${r.onsetToPauseMs.p95}`.padStart(13),
  ];
  console.log(`  ${["provider".padEnd(11), "n".padStart(4), "heard err".padStart(11), "stale".padStart(6), "byte→aud ms".padStart(13), "onset→pause".padStart(13)].join("  ")}`);
  for (const r of rows) console.log(`  ${cells(r).join("  ")}`);
}

export default async function providersBench() {
  const trials = planTrials(TRIALS, SEED, FIXTURES);
  const runs = {};
  const problems = [];
  await withBench({ port: PORT }, async (context) => {
    const { step } = context;
    const page = await openBargeinPage(context, problems);
    for (const provider of ROWS) {
      const started = Date.now();
      // A trial takes a few seconds; a minute each is a bound, not a measurement.
      const result = await step(`run ${provider} (${trials.length} barge-ins)`, () => page.evaluate((o) => window.bench.run(o), { mode: "vad", trials, provider }), { timeoutMs: 60_000 * trials.length });
      result.seconds = Math.round((Date.now() - started) / 1000);
      runs[provider] = result;
      problems.push(...result.errors.map((e) => `${provider}: ${e}`), ...result.warnings.map((w) => `${provider}: warning ${w}`), ...result.csp.map((e) => `${provider}: csp ${e}`), ...result.restarts.map((e) => `${provider}: session restarted after ${e}`));
      const r = row(provider, result);
      console.log(`  ${provider}: ${r.bargeIns} barge-ins (${r.failedTrials} failed, ${r.sessionRestarts} session restarts) in ${result.seconds} s; heard-word error mean ${r.heardWordError.mean}, stale ${r.staleSamples}, first byte → audible p50 ${r.firstAudioByteToAudibleMs.p50} ms`);
    }
  });
  const rows = ROWS.map((name) => ({ name, ...row(name, runs[name]) }));
  printRows(rows);
  const base = rows[0];
  return {
    ...Object.fromEntries(rows.map(({ name, ...r }) => [name, r])),
    // Each row against the kyutai row of the same run (1 = the same).
    versusKyutai: Object.fromEntries(
      rows.slice(1).map((r) => [
        r.name,
        {
          firstAudioByteToAudibleP50: ratio(r.firstAudioByteToAudibleMs.p50, base.firstAudioByteToAudibleMs.p50),
          firstAudioByteToAudibleP95: ratio(r.firstAudioByteToAudibleMs.p95, base.firstAudioByteToAudibleMs.p95),
          heardWordErrorMeanDiff: Math.round((r.heardWordError.mean - base.heardWordError.mean) * 100) / 100,
          staleSamplesDiff: r.staleSamples - base.staleSamples,
        },
      ]),
    ),
    outputLatencyMs: round(runs.kyutai.outputLatency * 1000),
    sampleRate: runs.kyutai.sampleRate,
    plan: { seed: SEED, trialsPerRow: TRIALS, fixtures: FIXTURES.join(","), momentS: MOMENT_S.join("–"), rows: ROWS.join(" "), secondsPerRow: Object.fromEntries(ROWS.map((n) => [n, runs[n].seconds])) },
    method:
      "Per row one session of the SDK's barge-in (bench/pages/session/bargein.js, mode vad) on the same seeded trials; a hosted STT with the Kyutai TTS, a hosted TTS with the Kyutai STT, all on the reference backend's emulators. heardWordError: |history's heard words − TTS words fully played before the recorded silence point|; staleSamples: samples ≥ 1e-4 after flush + 20 ms until the next reply's fence; firstAudioByteToAudibleMs: the session's turn events over every reply; recordedFirstAudioByteToAudibleMs: the recording's first sample of the reply − the first byte's context time, plus output latency.",
    perTrial: Object.fromEntries(
      ROWS.map((name) => [
        name,
        runs[name].trials.map((t) =>
          t.failed
            ? { fixture: t.fixture, plannedMoment: round(t.plannedMoment), failed: t.failed }
            : {
                fixture: t.fixture,
                moment: round(t.moment * 1000) / 1000,
                reason: t.reason,
                onsetToSilenceMs: round(t.onsetToSilenceMs),
                staleSamples: t.staleSamples,
                fullyPlayedWords: t.fullyPlayedWords,
                keptWords: t.keptWords,
                firstAudioByteToFirstSampleMs: round(t.firstAudioByteToFirstSampleMs),
              },
        ),
      ]),
    ),
    problems,
  };
}
