// `npm run bench -- fallback` (issue #41): what listening before the VAD's model is ready costs.
// With vad.waitForModel false (the default) a session listens as soon as the mic, the worklets and
// the STT are up; until Silero is ready a level detector in the VAD worker ends the user's turns,
// and the onset cue pauses the bot. This bench holds the model's request back on a page (it is
// never answered), so a whole run is decided by that fallback, and runs the same plan with Silero
// ready (vad.waitForModel true) side by side, in one process, on the real parts against the
// reference backend:
// - turnTaking: the turn corpus (bench/lib/turn-corpus.mjs: 50 utterances, 40 with pauses inside)
//   under the default end-of-turn settings, measured as the turn bench measures it
//   (bench/pages/session/turn-taking.js): premature ends, voice to voice, wasted LLM requests.
// - bargeIn: 20 flite barge-ins over the bot's story (bench/pages/session/bargein.js, the barge-in
//   bench's plan and seed): onset → the bot silent, onset → flush, stale samples, heard words.
// `degradedThroughout` says the fallback's runs stayed on the level detector to their end. Their
// sessions report the model's load timeout (vad.loadTimeoutMs) as a non-fatal error, as designed:
// it is listed in `problems`, and the session listens on.
import { withBench } from "./lib/with-bench.mjs";
import { openBargeinPage, planTrials, round, summarise } from "./lib/bargein-summary.mjs";
import { prepareTurnCorpus } from "./lib/turn-corpus.mjs";
import { summariseTurnTaking } from "./lib/turn-taking-summary.mjs";
import { runTurnTaking } from "./lib/turn-taking-run.mjs";

const PORT = 8873;
const SEED = 7;
const FIXTURES = ["help-me", "turn-on-lights"];
const BARGE_INS = 20;
/** The session's default end of turn (the turn bench's `policy`). */
const TURN = { holdUnfinished: { holdMs: 700 } };
const CASES = {
  silero: { holdModel: false, vad: { waitForModel: true } },
  levelFallback: { holdModel: true, vad: { waitForModel: false } },
};

export default async function fallbackBench() {
  const utterances = prepareTurnCorpus();
  const plan = planTrials(BARGE_INS, SEED, FIXTURES);
  const out = { turnTaking: {}, bargeIn: {} };
  const problems = [];
  const perTrial = {};
  const perUtterance = {};
  await withBench({ port: PORT }, async (context) => {
    for (const [name, { holdModel, vad }] of Object.entries(CASES)) {
      const tt = await runTurnTaking(context, { name, sessionOptions: { vad, turn: TURN }, utterances, holdModel, problems });
      perUtterance[name] = tt.results;
      out.turnTaking[name] = { ...summariseTurnTaking(tt.results), degradedThroughout: tt.results.every((u) => u.degraded) };
      console.log(`  turn-taking ${name}: ${JSON.stringify(out.turnTaking[name])}`);

      const page = await openBargeinPage(context, problems, { holdModel });
      const r = await context.step(`${BARGE_INS} barge-ins (${name})`, () => page.evaluate((o) => window.bench.run(o), { mode: "vad", trials: plan, sessionVad: vad }), { timeoutMs: 60_000 * BARGE_INS });
      await context.step(`close bargein.html (${name})`, () => page.close());
      problems.push(...r.errors.map((e) => `${name}: ${e}`), ...r.csp.map((e) => `${name}: csp ${e}`), ...r.restarts.map((e) => `${name}: session restarted after ${e}`));
      const s = summarise(r.trials);
      out.bargeIn[name] = {
        trials: s.trials,
        failedTrials: s.failed,
        onsetToPauseMs: s.onsetToSilenceMs,
        onsetToFlushMs: s.onsetToFlushMs,
        staleSamples: s.staleSamples,
        heardWordError: s.heardWordError,
        confirmReasons: s.reasons,
        degradedThroughout: r.trials.every((t) => t.failed || t.degraded),
      };
      perTrial[name] = r.trials.map((t) => (t.failed ? { fixture: t.fixture, failed: t.failed } : { fixture: t.fixture, reason: t.reason, onsetToSilenceMs: round(t.onsetToSilenceMs), onsetToFlushMs: round(t.onsetToFlushMs), staleSamples: t.staleSamples, vadTrace: t.vadTrace }));
      console.log(`  barge-in ${name}: ${JSON.stringify(out.bargeIn[name])}`);
    }
  });
  const ratio = (a, b) => (a && b ? round(a / b) : null);
  return {
    ...out,
    costs: {
      prematureEndRate: { silero: out.turnTaking.silero.prematureEndRate, levelFallback: out.turnTaking.levelFallback.prematureEndRate },
      voiceToVoiceP50Ratio: ratio(out.turnTaking.levelFallback.voiceToVoiceMs.p50, out.turnTaking.silero.voiceToVoiceMs.p50),
      onsetToPauseP95Ratio: ratio(out.bargeIn.levelFallback.onsetToPauseMs.p95, out.bargeIn.silero.onsetToPauseMs.p95),
    },
    plan: { turn: TURN, cases: CASES, utterances: utterances.length, bargeIns: { seed: SEED, fixtures: FIXTURES.join(","), trials: BARGE_INS } },
    perUtterance,
    perTrial,
    problems,
  };
}
