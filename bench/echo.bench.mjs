// `npm run bench -- echo`: open speakers, with and without bargein's echo
// guard, in the same run. The bot's output comes back into the mic through a
// seeded room (test/browser/pages/echo/echo-path.js: delay → tanh soft clip →
// decaying-noise impulse response → gain) and the mic is a MediaStream of the
// page, so no browser echo canceller helps: the worst case of a browser whose
// canceller does not see Web Audio output (crbug 687574). Real worklets, the
// Silero worker and the reference backend (bench/pages/echo/echo.js).
//
// Per echo condition (gain × delay × room), for `guard` and `noGuard`:
// - selfInterruptionsPerReply: `interruption` events the page did not ask for,
//   over questions asked (each question gets up to 30 s to settle; a runaway
//   exchange, the bot answering its own echo, is stopped with interrupt()).
// - bargeInConfirmRate: a real utterance ("can you help me") 1.5–2.5 s into
//   the bot's reply (a ~15 s story: every question is asked as "tell me a
//   long story" of the scripted responder), over the echo: confirmed within 6 s, over the trials in
//   which the bot was still speaking at the onset (`botSpeakingAtOnset`; an
//   unguarded bot has often stopped itself by then).
// - onsetToSilentMs: the utterance's onset → the output silent for good (one
//   sample after its last sample ≥ 1e-4 before the utterance ends + 0.4 s),
//   sample-exact in context time; output already silent at the onset counts
//   as 0 and is counted apart (`silentBeforeOnset`).
// - echoPausesPerReply, echoPauseMs: the stutter. Pauses the VAD worker made
//   on its own during the replies (speechStart) that resumed as a misfire:
//   the bot's echo, not the user; and how long each held the bot silent.
// - erleDb: the guard's echo return loss enhancement at the end of each reply
//   (metrics.echo), once converged.
// guardCostUsPerQuantum: the capture side of the guard (both 16 kHz
// resamplers and the EchoGuard) timed per 128-frame quantum in a worker of
// the same Chromium, on 12 s of the bot's voice through the −6 dB room with a
// user talking over the last 40 %. esbuild bundles it from worklets/ first.
//
// guardCleanUplink (−6 dB only): the guard on, and the STT fed its cleaned
// signal (`echoGuard.cleanUplink`) instead of the raw mic, to choose between
// the two by what the STT makes of them: `userTurnsExact` (a question's turn
// is exactly its words), `echoWords` (STT words the session judged echo),
// `bargeInWordsRight` (the user's words over the bot, "can you help me",
// reached the history whole).
//
// guardTail768ms (the RT60 0.8 s room only): the guard with `echoGuard.tailMs`
// 768, since the default 256 ms tail holds only the first 19 dB of that decay.
//
// `BENCH_ECHO_QUICK=1` runs one reply and one barge-in per condition (a smoke
// of the bench itself, not a measurement). `BENCH_ECHO_ROWS=minus6dB,…` and
// `BENCH_ECHO_MODES=guard,…` measure only those rows and modes; the rest of
// bench/results/echo.json is kept from its last run (each row says when it
// was measured).
import { existsSync, readFileSync } from "node:fs";
import { build } from "esbuild";
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8856;
const QUICK = process.env.BENCH_ECHO_QUICK === "1";
const ROOM = { delayMs: 60, rt60: 0.3, seed: 7 };
/** [key, echo path, guard {replies, bargeIns}, noGuard {replies, bargeIns}] */
const GRID = [
  ["minus6dB", { ...ROOM, gainDb: -6 }, { replies: 30, bargeIns: 20 }, { replies: 4, bargeIns: 6 }],
  ["minus20dB", { ...ROOM, gainDb: -20 }, { replies: 3, bargeIns: 3 }, { replies: 2, bargeIns: 2 }],
  ["minus12dB", { ...ROOM, gainDb: -12 }, { replies: 3, bargeIns: 3 }, { replies: 2, bargeIns: 2 }],
  ["minus3dB", { ...ROOM, gainDb: -3 }, { replies: 3, bargeIns: 3 }, { replies: 2, bargeIns: 2 }],
  ["minus6dB_delay120ms", { ...ROOM, gainDb: -6, delayMs: 120 }, { replies: 3, bargeIns: 3 }, { replies: 2, bargeIns: 2 }],
  // Six barge-ins (three until the near-end gate's carry-on was measured here): a rate over three said little.
  ["minus6dB_rt60_0.8s", { ...ROOM, gainDb: -6, rt60: 0.8, seed: 9 }, { replies: 3, bargeIns: 6 }, { replies: 2, bargeIns: 2 }],
];
/** The cleaned-uplink comparison runs on the −6 dB row only. */
const CLEAN_UPLINK_PLAN = { replies: 12, bargeIns: 10 };
/** The 0.8 s room with a filter tail to match (`echoGuard.tailMs`), against the default 256 ms. */
const LONG_TAIL = { mode: "guardTail768ms", tailMs: 768, plan: { replies: 3, bargeIns: 3 } };
const MODES = ["guard", "noGuard", "guardCleanUplink", LONG_TAIL.mode];
const only = (name) => process.env[name]?.split(",").map((v) => v.trim()).filter(Boolean);
const ROWS = only("BENCH_ECHO_ROWS");
const WANTED_MODES = only("BENCH_ECHO_MODES");
const RESULT = new URL("./results/echo.json", import.meta.url);
/** The words each question fixture says, as the history should hold them. */
const QUESTION_WORDS = { "help-me": "can you help me", "stop-please": "stop please stop", "turn-on-lights": "please turn on the lights", "weather-question": "what is the weather like today" };
const words = (text) => text.toLowerCase().replace(/[^a-z' ]+/g, " ").trim().replace(/\s+/g, " ");

/** A page step that takes longer than this has hung (a stuck session). */
const STEP_TIMEOUT_MS = 20 * 60_000;

const round = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 10) / 10);
const p = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

async function bundleCostWorker() {
  await build({
    entryPoints: [new URL("./pages/echo/guard-cost-worker.js", import.meta.url).pathname],
    outfile: new URL("./pages/echo/build/guard-cost-worker.js", import.meta.url).pathname,
    bundle: true,
    format: "esm",
    target: "es2022",
    logLevel: "warning",
  });
}

function summarise(replies, bargeIns) {
  const asked = replies.perReply.length;
  const selfInterruptions = replies.perReply.reduce((a, r) => a + r.selfInterruptions, 0);
  const valid = bargeIns.trials.filter((t) => !t.failed && t.botSpeaking);
  const confirmed = valid.filter((t) => t.confirmed);
  // Output that had stopped before the onset counts as silent at the onset (0 ms); how often is reported apart.
  const silent = confirmed.map((t) => t.onsetToSilentMs).filter((v) => v !== null).map((v) => Math.max(0, v));
  const erle = replies.perReply.map((r) => r.echo).filter((e) => e && e.converged).map((e) => e.erleDb);
  return {
    replies: asked,
    selfInterruptionsPerReply: asked ? Math.round((selfInterruptions / asked) * 100) / 100 : null,
    selfInterruptions,
    repliesCut: replies.cutReplies,
    runawayExchanges: replies.perReply.filter((r) => !r.settled).length,
    extraUserTurns: replies.userTurns.length - asked,
    // The stutter: pauses the bot's own echo caused (they resumed), per reply, and how long each held the bot silent.
    echoPausesPerReply: asked ? round(replies.echoPauses.length / asked) : null,
    echoPauseMs: { ...p(replies.echoPauses), max: replies.echoPauses.length ? Math.max(...replies.echoPauses) : null },
    echoPausedMsPerReply: asked ? round(replies.echoPauses.reduce((a, b) => a + b, 0) / asked) : null,
    bargeIns: bargeIns.trials.length,
    botSpeakingAtOnset: valid.length,
    bargeInConfirmRate: valid.length ? Math.round((confirmed.length / valid.length) * 1000) / 1000 : null,
    onsetToSilentMs: p(silent),
    erleDb: { p50: round(quantile(erle, 0.5)) },
    delayMs: round(replies.echo?.delayMs),
    audibleAtOnset: valid.filter((t) => t.audibleAtOnset).length,
    silentBeforeOnset: confirmed.filter((t) => t.onsetToSilentMs !== null && t.onsetToSilentMs < 0).length,
    neverSilent: confirmed.filter((t) => t.onsetToSilentMs === null).length,
    userTurnsExact: `${replies.userTurns.filter((turn) => Object.values(QUESTION_WORDS).includes(words(turn))).length}/${asked}`,
    echoWords: replies.echo?.echoWords ?? null,
    bargeInWordsRight: `${confirmed.filter((t) => (t.transcripts ?? []).some((line) => line.startsWith("user:") && words(line.slice(5)).includes("help me"))).length}/${confirmed.length}`,
    measuredAt: new Date().toISOString(),
  };
}

export default async function echoBench() {
  await bundleCostWorker();
  const previous = (ROWS || WANTED_MODES) && existsSync(RESULT) ? JSON.parse(readFileSync(RESULT, "utf8")) : {};
  const out = Object.fromEntries(MODES.map((m) => [m, { ...(previous[m] ?? {}) }]));
  const detail = Object.fromEntries(MODES.map((m) => [m, { ...(previous.detail?.[m] ?? {}) }]));
  const problems = [];
  const cost = await withBench({ port: PORT, stepTimeoutMs: STEP_TIMEOUT_MS }, async ({ server, browser, step }) => {
    const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await step("open echo.html", async () => {
      await page.goto(`${server.base}/bench/pages/echo/echo.html`);
      await page.waitForFunction(() => window.echoBenchReady === true, null, { timeout: 30_000 });
    });
    const cost = await step("guard cost", () => page.evaluate((o) => window.echoBench.guardCost(o), { echo: { ...ROOM, gainDb: -6 } }));
    for (const [key, echo, guardPlan, noGuardPlan] of GRID) {
      if (ROWS && !ROWS.includes(key)) continue;
      const modes = [
        ["guard", guardPlan],
        ["noGuard", noGuardPlan],
        ...(key === "minus6dB" ? [["guardCleanUplink", CLEAN_UPLINK_PLAN]] : []),
        ...(echo.rt60 >= 0.8 ? [[LONG_TAIL.mode, LONG_TAIL.plan]] : []),
      ];
      for (const [mode, plan] of modes) {
        if (WANTED_MODES && !WANTED_MODES.includes(mode)) continue;
        const started = Date.now();
        const options = { echo, guard: mode !== "noGuard", cleanUplink: mode === "guardCleanUplink", tailMs: mode === LONG_TAIL.mode ? LONG_TAIL.tailMs : undefined };
        const replies = await step(`${mode} ${key} replies`, () => page.evaluate((o) => window.echoBench.replies(o), { ...options, count: QUICK ? 1 : plan.replies }));
        const bargeIns = await step(`${mode} ${key} barge-ins`, () => page.evaluate((o) => window.echoBench.bargeIns(o), { ...options, count: QUICK ? 1 : plan.bargeIns }));
        out[mode][key] = summarise(replies, bargeIns);
        detail[mode][key] = { echoPath: replies.echoPath, echo: replies.echo, perReply: replies.perReply, interruptions: replies.interruptions, userTurns: replies.userTurns, trials: bargeIns.trials };
        problems.push(...[...replies.errors, ...bargeIns.errors].map((e) => `${mode} ${key}: ${e}`));
        const s = out[mode][key];
        console.log(
          `  ${mode} ${key}: ${s.selfInterruptions} self-interruptions over ${s.replies} replies; confirm rate ${s.bargeInConfirmRate} over ${s.botSpeakingAtOnset} barge-ins on a speaking bot; ` +
            `silent p95 ${s.onsetToSilentMs.p95} ms; echo pauses ${s.echoPausesPerReply}/reply (p50 ${s.echoPauseMs.p50} ms, ${s.echoPausedMsPerReply} ms silent/reply); ERLE p50 ${s.erleDb.p50} dB; user turns exact ${s.userTurnsExact}, echo words ${s.echoWords}, ` +
            `barge-in words right ${s.bargeInWordsRight} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
        );
      }
    }
    return cost;
  });
  const costs = cost.costUs;
  return {
    ...out,
    guardCostUsPerQuantum: { p50: round(quantile(costs, 0.5)), p95: round(quantile(costs, 0.95)), mean: round(costs.reduce((a, b) => a + b, 0) / costs.length), quanta: cost.quanta, clock: cost.resolutionHint },
    guardCostTrace: cost.trace.map((t) => ({ atS: round(t.atS), erleDb: round(t.erleDb), converged: t.converged, delayMs: round(t.delayMs) })),
    goals: "guard at minus6dB: 0 self-interruptions, confirm rate ≥ 0.95, onset→silent p95 ≤ 120 ms, ERLE ≥ 20 dB",
    plan: { quick: QUICK, grid: GRID.map(([key, echo, g, n]) => ({ key, echo, guard: g, noGuard: n })), fixtures: "questions help-me/stop-please/turn-on-lights/weather-question; barge-in help-me over the weather-question reply" },
    detail,
    problems,
  };
}
