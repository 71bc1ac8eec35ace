// `npm run bench -- realtime`: barge-in on a speech-to-speech API, bargein
// against the peer's own client, in the same Chromium, against the same
// emulator (the reference backend's OpenAI Realtime, built from OpenAI's docs:
// it is not the service), with the same injected speech and the same seeded
// moments (bench/pages/realtime/).
//
// Per client, one conversation of TRIALS barge-ins, each at a seeded moment
// 0.25–2.5 s after the reply's first audible sample. Judged on the recorded
// output and on what the emulator got (bench/pages/realtime/judge.js):
// - onsetToSilentMs: the barge-in's speech onset → the output silent for good;
// - truncateErrorMs: the truncate's audio_end_ms − the item's ms heard, i.e. its
//   rendered ms (where the recorded output stops matching the item's PCM) less
//   the output latency, the rule the issue gives; rejectedTruncates: truncates
//   the emulator refused (past the audio sent); noTruncate: cuts that sent none
//   (the model then keeps all the audio sent);
// - staleSamples: output of the item from 20 ms after the client stopped it
//   (bargein: the interruption; the peer: audio_interrupted) to the speech's
//   end + 0.3 s;
// - historyWordError: |words of the item in the next response's input − words
//   heard| (a word is heard when its midpoint played: the emulator's own rule).
// The peer is @openai/agents-realtime 0.20.0's OpenAIRealtimeWebSocket with
// server_vad, bundled at bench time (bench/lib/page-bundle.mjs) into
// bench/pages/realtime/vendor/, removed after.
//
// Gemini Live: `gemini.*` is written when the backend has a Gemini Live emulator
// and the SDK a geminiLive provider; until then it says so.
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { planTrials, round } from "./lib/bargein-summary.mjs";
import { bundleForPage, writeVendor } from "./lib/page-bundle.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8861;
const SEED = 23;
const TRIALS = Number(process.env.BENCH_REALTIME_TRIALS ?? 24);
const FIXTURES = ["help-me", "turn-on-lights"];
const VENDOR = new URL("./pages/realtime/vendor/", import.meta.url);

export default async function realtimeBench() {
  const plan = planTrials(TRIALS, SEED, FIXTURES);
  const removeVendor = writeVendor(VENDOR, { "agents-realtime.js": { code: await bundleForPage("bench/pages/realtime/agents-entry.js") } });
  const problems = [];
  const runs = {};
  try {
    await withBench({ port: PORT }, async ({ server, browser, step }) => {
      for (const client of (process.env.BENCH_REALTIME_CLIENTS ?? "bargein,peer").split(",")) {
        const page = await step(`${client}: a new page`, () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
        page.on("pageerror", (e) => problems.push(`${client}: pageerror: ${e.message}`));
        page.on("console", (m) => m.type() === "error" && problems.push(`${client}: console: ${m.text()}`));
        page.on("response", (r) => r.status() >= 400 && problems.push(`${client}: ${r.status()} ${r.url()}`));
        await step(`${client}: open realtime.html`, async () => {
          await page.goto(`${server.base}/bench/pages/realtime/realtime.html`);
          await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
        });
        const started = Date.now();
        runs[client] = await step(`${client}: ${plan.length} barge-ins`, () => page.evaluate((o) => window.bench.run(o), { client, trials: plan, sessionOptions: process.env.BENCH_REALTIME_GUARD === "off" ? { echoGuard: { enabled: false } } : {} }), { timeoutMs: 40_000 * plan.length });
        problems.push(...runs[client].problems.map((p) => `${client}: ${p}`));
        const s = summarise(runs[client].trials);
        console.log(`  ${client}: ${s.trials} trials in ${((Date.now() - started) / 1000).toFixed(0)} s; silent p95 ${s.onsetToSilentMs.p95} ms; truncate error mean ${s.truncateErrorMs.mean} ms, max ${s.truncateErrorMs.max} ms; rejected ${s.rejectedTruncates}`);
        await step(`${client}: close the page`, () => page.close(), { timeoutMs: PAGE_OP_MS });
      }
    });
  } finally {
    removeVendor();
  }
  // BENCH_REALTIME_CLIENTS=bargein (or peer) runs one client, for exploring; the ratio then needs both.
  const bargein = runs.bargein ? summarise(runs.bargein.trials) : null;
  const peer = runs.peer ? summarise(runs.peer.trials) : null;
  return {
    openai: {
      emulator: "the reference backend's OpenAI Realtime emulator (demo/server/emulators/openai-realtime.mjs), not the service",
      bargein: { client: "bargein openaiRealtime, turnDetection client (its default)", ...bargein },
      peer: { client: "@openai/agents-realtime 0.20.0 OpenAIRealtimeWebSocket, server_vad, the app's queue player emptied on audio_interrupted", ...peer },
      ratio: bargein && peer ? {
        onsetToSilentP95: round(peer.onsetToSilentMs.p95 / bargein.onsetToSilentMs.p95),
        truncateErrorMeanAbs: round(peer.truncateErrorMs.meanAbs / Math.max(bargein.truncateErrorMs.meanAbs, 0.01)),
      } : null,
    },
    gemini: { pending: "no Gemini Live emulator and client yet" },
    goal: "onsetToSilentMs p95 < 100; |truncateErrorMs| < 3 with 0 rejectedTruncates",
    plan: { seed: SEED, trials: TRIALS, fixtures: FIXTURES.join(","), momentS: "0.25–2.5" },
    problems,
    perTrial: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.trials.map(compact)])),
  };
}

/** Figures over the trials that were barge-ins (the bot audible at the onset, the recording aligned). */
function summarise(all) {
  const trials = all.filter((t) => t.botAudibleAtOnset && t.aligned);
  const values = (key) => trials.map((t) => t[key]).filter((v) => typeof v === "number");
  const dist = (v) => ({ p50: round(quantile(v, 0.5)), p95: round(quantile(v, 0.95)), max: round(Math.max(...v)) });
  const errors = values("truncateErrorMs");
  const words = values("historyWordError");
  return {
    trials: trials.length,
    notBargeIns: all.length - trials.length,
    onsetToSilentMs: dist(values("onsetToSilentMs")),
    onsetToConfirmMs: dist(values("onsetToConfirmMs")),
    truncateErrorMs: {
      mean: round(mean(errors)),
      meanAbs: round(mean(errors.map(Math.abs))),
      max: round(Math.max(...errors.map(Math.abs))),
      // Signed extremes: above 0 the model believes more was heard than was.
      min: round(Math.min(...errors)),
      maxSigned: round(Math.max(...errors)),
    },
    rejectedTruncates: trials.filter((t) => t.truncate && !t.truncate.accepted).length,
    noTruncate: trials.filter((t) => !t.truncate).length,
    staleSamples: values("staleSamples").reduce((a, b) => a + b, 0),
    historyWordError: { mean: round(mean(words)), max: Math.max(...words) },
    unknownQuanta: values("unknownQuanta").reduce((a, b) => a + b, 0),
    outputLatencyMs: round(trials[0]?.outputLatencyMs),
  };
}

const mean = (v) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : null);

function compact(t) {
  const r = (v) => (typeof v === "number" ? round(v) : v);
  return {
    fixture: t.fixture,
    moment: r(t.moment),
    silent: r(t.onsetToSilentMs),
    confirm: r(t.onsetToConfirmMs),
    rendered: r(t.renderedMs),
    heard: r(t.heardTruthMs),
    sent: t.truncate?.audio_end_ms ?? null,
    accepted: t.truncate?.accepted ?? null,
    err: r(t.truncateErrorMs),
    words: `${t.modelWords}/${t.wordsHeard}`,
    stale: t.staleSamples,
    ok: t.botAudibleAtOnset && t.aligned,
  };
}
