// `npm run bench -- bargein`: how fast and how cleanly talking over the bot
// silences it, in Chromium on the real parts (capture and playback worklets,
// Silero VAD worker) against the reference backend, compared with a
// server-driven baseline.
//
// Each trial talks over the bot at a seeded random moment of its reply: a
// fixture (help-me or turn-on-lights) is played into the session's `input`
// so that its speech envelope onset lands `moment` s after the reply's first
// audio, and the output is recorded in the same AudioContext
// (bench/pages/session/bargein.js). Per trial, sample-exact in context time:
// - onsetToSilenceMs: onset → the output goes silent for good (one sample
//   after the last sample ≥ 1e-4 before the flush settled; skipped render
//   quanta count as unknown, not silent). For the SDK's own barge-in this is
//   the VAD-driven pause: `onsetToPauseMs`. onsetToFirstQuietMs is the first
//   10 ms run below 1e-4 after the onset, which a natural gap in the bot's
//   speech can end early; both are reported. Output already silent at the
//   onset (the onset cue paused on the word's soft start, which comes before
//   the −20 dB envelope onset) counts as 0 and is counted apart
//   (`silentBeforeOnset`, per trial `silentBeforeOnsetMs`).
// - onsetToFlushMs: onset → the interruption confirmed and the ring flushed:
//   AudioContext.currentTime read in the session's `interruption` listener,
//   which runs right after interrupt() has called player.flush() (the
//   worklet applies it at its next quantum, at that context time give or take
//   one audio-callback burst).
// - staleSamples: samples ≥ 1e-4 from the flush (+20 ms slack) to the next
//   reply's first audio byte: audio of the cancelled turn after its fence.
// - heardWordError: |TTS words whose audio fully played before the silence
//   point (TTS word timestamps, aligned to the recording by the reply's first
//   loud sample) − words the history kept|. The session's rule differs on
//   purpose (a word is heard when its midpoint was rendered, less the output
//   latency), so heardWordErrorSameRule applies that rule to the recording:
//   it isolates the session's measurement error from the choice of rule.
// - onsetToVadSpeechStartMs: onset → end of the audio frame on which the VAD
//   decided speech started (the worker's own context-time stamp), and
//   directPauses: how many of those pauses the worker sent to the playback
//   worklet itself, with no main-thread hop.
// Baseline ("serverDriven"): bargeIn.enabled = false, and the page calls
// session.interrupt() on the first user word the STT (the backend's
// pocketsphinx) returns while the bot speaks, as a server-driven stack
// (Unmute) decides from its STT; measured on the same moments and fixtures.
// mainThreadLoad: the SDK's barge-in with the page's main thread busy 50 ms
// in every 60 ms.
// humanSpeech: the SDK's barge-in with recordings of real people instead of
// flite (bench/lib/human-speech.mjs, from pocketsphinx-testdata): real
// onsets are softer. The mic carries a bed of noise at the loudest of the
// recordings' own rooms all along (`noiseBedDb`), as a real mic is never
// digitally silent: without it the onset cue paused on each recording's
// first sample, the step from silence to its room noise, up to 340 ms before
// the speech, and held that pause into the speech (18 of 30 trials).
import { withBench } from "./lib/with-bench.mjs";
import { MOMENT_S, openBargeinPage, planTrials, round, stats, summarise } from "./lib/bargein-summary.mjs";
import { prepareHumanSpeech } from "./lib/human-speech.mjs";
import { DEFAULT_PROVIDER } from "./lib/bench-args.mjs";

const PORT = 8851;
const SEED = 7;
const FIXTURES = ["help-me", "turn-on-lights"];
const RUNS = [
  { name: "vad-1", mode: "vad", from: 0, to: 25 },
  { name: "vad-2", mode: "vad", from: 25, to: 50 },
  { name: "server", mode: "server", from: 0, to: 25 },
  { name: "vad-load", mode: "vad", load: true, from: 0, to: 20 },
  { name: "vad-human", mode: "vad", human: true, from: 0, to: 30 },
];



/** `npm run bench -- bargein --provider NAME` runs every run on that STT or TTS (bench/lib/bench-args.mjs). */
export const takesProvider = true;

export default async function bargeinBench({ provider = DEFAULT_PROVIDER } = {}) {
  const trialsPlan = planTrials(50, SEED, FIXTURES);
  const recordings = prepareHumanSpeech();
  const humanPlan = planTrials(30, SEED, recordings.names);
  const runs = {};
  const problems = [];
  await withBench({ port: PORT }, async (context) => {
    const { step } = context;
    const page = await openBargeinPage(context, problems);
    for (const r of RUNS) {
      const started = Date.now();
      const trials = (r.human ? humanPlan : trialsPlan).slice(r.from, r.to);
      // A trial takes a few seconds; a minute each is a bound, not a measurement.
      const result = await step(`run ${r.name} (${trials.length} trials)`, () => page.evaluate((o) => window.bench.run(o), { mode: r.mode, load: r.load, trials, provider, bedDb: r.human ? recordings.noiseDb : undefined }), { timeoutMs: 60_000 * Math.max(1, trials.length) });
      runs[r.name] = result;
      problems.push(...result.errors.map((e) => `${r.name}: ${e}`), ...result.csp.map((e) => `${r.name}: csp ${e}`), ...result.restarts.map((e) => `${r.name}: session restarted after ${e}`));
      const s = summarise(result.trials);
      console.log(`  ${r.name}: ${s.trials} trials (${s.failed} failed, ${result.restarts.length} session restarts) in ${((Date.now() - started) / 1000).toFixed(0)} s; silence p50 ${s.onsetToSilenceMs.p50} ms, p95 ${s.onsetToSilenceMs.p95} ms`);
    }
  });
  const vadTrials = [...runs["vad-1"].trials, ...runs["vad-2"].trials];
  const vad = summarise(vadTrials);
  const serverDriven = summarise(runs.server.trials);
  const loaded = summarise(runs["vad-load"].trials);
  const human = summarise(runs["vad-human"].trials);
  const okServer = runs.server.trials.filter((t) => !t.failed);
  return {
    provider,
    trials: vad.trials,
    failedTrials: vad.failed,
    onsetToPauseMs: { p50: vad.onsetToSilenceMs.p50, p95: vad.onsetToSilenceMs.p95, max: vad.onsetToSilenceMs.max },
    onsetToFirstQuietMs: vad.onsetToFirstQuietMs,
    onsetToFlushMs: vad.onsetToFlushMs,
    staleSamples: vad.staleSamples,
    heardWordError: vad.heardWordError,
    heardWordErrorSameRule: vad.heardWordErrorSameRule,
    onsetToVadSpeechStartMs: vad.onsetToVadSpeechStartMs,
    serverDriven: {
      trials: serverDriven.trials,
      failedTrials: serverDriven.failed,
      onsetToSilenceMs: serverDriven.onsetToSilenceMs,
      onsetToFirstWordMs: stats(okServer.map((t) => t.onsetToWordMs)),
      staleSamples: serverDriven.staleSamples,
      heardWordError: serverDriven.heardWordError,
    },
    speedup: round(serverDriven.onsetToSilenceMs.p95 / vad.onsetToSilenceMs.p95),
    mainThreadLoad: {
      load: "50 ms busy loop every 60 ms on the page's main thread",
      trials: loaded.trials,
      failedTrials: loaded.failed,
      onsetToPauseMs: loaded.onsetToSilenceMs,
      onsetToFlushMs: loaded.onsetToFlushMs,
      onsetToVadSpeechStartMs: loaded.onsetToVadSpeechStartMs,
      directPauses: `${loaded.directPauses}/${loaded.trials}`,
      staleSamples: loaded.staleSamples,
      heardWordError: loaded.heardWordError,
    },
    humanSpeech: {
      recordings: "pocketsphinx-testdata: 5 LibriVox readings (female) and 5 CMU cards utterances (male), each 3 times",
      noiseBedDb: recordings.noiseDb,
      trials: human.trials,
      failedTrials: human.failed,
      onsetToPauseMs: human.onsetToSilenceMs,
      silentBeforeOnset: `${human.silentBeforeOnset}/${human.trials}`,
      onsetToVadSpeechStartMs: human.onsetToVadSpeechStartMs,
      onsetToFlushMs: human.onsetToFlushMs,
      staleSamples: human.staleSamples,
      confirmReasons: human.reasons,
      slowdownVsFlite: round(human.onsetToSilenceMs.p95 / vad.onsetToSilenceMs.p95),
      goal: "onsetToPauseMs p95 ≤ 100",
    },
    checks: {
      botAudibleAtOnset: `${vad.botAudibleAtOnset}/${vad.trials}`,
      silentBeforeOnset: `${vad.silentBeforeOnset}/${vad.trials}`,
      trialsWithLeakAfterPause: vad.trialsWithLeak + loaded.trialsWithLeak,
      directPauses: `${vad.directPauses}/${vad.trials}`,
      confirmReasons: vad.reasons,
      renderedAgreementMs: vad.renderedAgreementMs,
      unknownQuanta: vad.unknownQuanta + serverDriven.unknownQuanta + loaded.unknownQuanta + human.unknownQuanta,
      outputLatencyMs: round(runs["vad-1"].outputLatency * 1000),
      sampleRate: runs["vad-1"].sampleRate,
    },
    // Fatal errors a run's session stopped on and was started again after (bench/pages/session/bargein.js).
    sessionRestarts: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.restarts.length])),
    // Fresh questions (to get a reply to talk over) the STT heard nothing in, asked again.
    unansweredQuestions: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.unansweredQuestions])),
    plan: { seed: SEED, fixtures: FIXTURES.join(","), momentS: MOMENT_S.join("–"), runs: RUNS.map((r) => `${r.name}:${r.from}-${r.to}`).join(" ") },
    perTrial: Object.fromEntries(
      Object.entries(runs).map(([name, r]) => [
        name,
        r.trials.map((t) =>
          t.failed
            ? { fixture: t.fixture, plannedMoment: round(t.plannedMoment), failed: t.failed }
            : {
                fixture: t.fixture,
                moment: round(t.moment * 1000) / 1000,
                reason: t.reason,
                onsetToSilenceMs: round(t.onsetToSilenceMs),
                silentBeforeOnsetMs: round(t.silentBeforeOnsetMs),
                onsetToFirstQuietMs: round(t.onsetToFirstQuietMs),
                onsetToFlushMs: round(t.onsetToFlushMs),
                onsetToWordMs: round(t.onsetToWordMs),
                staleSamples: t.staleSamples,
                leakSamples: t.leakSamples,
                fullyPlayedWords: t.fullyPlayedWords,
                halfPlayedWords: t.halfPlayedWords,
                keptWords: t.keptWords,
                onsetToVadSpeechStartMs: round(t.onsetToVadSpeechStartMs),
                directPause: t.directPause,
                speechStartToConfirmMs: round(t.speechStartToConfirmMs),
                vadTrace: t.vadTrace,
                renderedAgreementMs: round(t.renderedAgreementMs),
                audibleAtOnset: t.audibleAtOnset,
              },
        ),
      ]),
    ),
    problems: [
      ...problems,
      ...Object.entries(runs).flatMap(([name, r]) => [
        ...r.warnings.map((w) => `${name}: warning ${w}`),
        ...r.overloads.map((o) => `${name}: overload ${o.service} ${o.reason} ${o.pendingBytes}/${o.budgetBytes} B at ${o.contextTime.toFixed(2)} s (policy ${o.policy})`),
      ]),
    ],
  };
}
