// Barge-in trials on bench/pages/session/bargein.js, shared by the bargein and
// providers benches so both plan, run and read a trial the same way: the
// seeded plan, the page, and the summaries.
import { quantile } from "./results.mjs";
import { prng } from "../../test/lib/prng.mjs";
import { PAGE_OP_MS } from "./with-bench.mjs";

/** When, into the reply, the user talks over it (s): a uniform draw between these. */
export const MOMENT_S = [0.25, 2.5];

/**
 * `n` seeded trials: a moment in MOMENT_S and a fixture. Two fixtures are drawn at random;
 * more (the human recordings) are taken in turn.
 * @param {number} n @param {number} seed @param {string[]} fixtures
 */
export function planTrials(n, seed, fixtures) {
  const random = prng(seed);
  return Array.from({ length: n }, (_, i) => ({
    moment: MOMENT_S[0] + (MOMENT_S[1] - MOMENT_S[0]) * random(),
    fixture: fixtures.length === 2 ? fixtures[random() < 0.5 ? 0 : 1] : fixtures[i % fixtures.length],
  }));
}

/**
 * Opens the bench page in a new tab and waits for it; page errors go to `problems`.
 * @param {import("./with-bench.mjs").BenchContext} context @param {string[]} problems
 */
/** `holdModel`: the VAD's model request is never answered on this page, so its sessions stay on the level fallback. */
export async function openBargeinPage({ server, browser, step }, problems, { holdModel = false } = {}) {
  const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  if (holdModel) await page.route("**/silero_vad*.onnx", () => {});
  await step("open bargein.html", async () => {
    await page.goto(`${server.base}/bench/pages/session/bargein.html`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
  });
  return page;
}

export const round = (v) => (v === null || v === undefined ? v : Math.round(v * 10) / 10);
export const stats = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)), max: round(Math.max(...values)) });
const round2 = (v) => Math.round(v * 100) / 100;
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The figures of a run's trials; failed trials are counted, not measured. */
export function summarise(trials) {
  const ok = trials.filter((t) => !t.failed);
  const quiet = ok.map((t) => t.onsetToFirstQuietMs).filter((v) => v !== null);
  return {
    trials: ok.length,
    failed: trials.length - ok.length,
    onsetToSilenceMs: stats(ok.map((t) => t.onsetToSilenceMs)),
    onsetToFirstQuietMs: stats(quiet),
    onsetToFlushMs: stats(ok.map((t) => t.onsetToFlushMs)),
    staleSamples: ok.reduce((a, t) => a + t.staleSamples, 0),
    trialsWithLeak: ok.filter((t) => t.leakSamples > 0).length,
    heardWordError: { mean: round2(mean(ok.map((t) => t.heardWordError))), max: Math.max(...ok.map((t) => t.heardWordError)) },
    heardWordErrorSameRule: { mean: round2(mean(ok.map((t) => t.heardWordErrorSameRule))), max: Math.max(...ok.map((t) => t.heardWordErrorSameRule)) },
    onsetToVadSpeechStartMs: stats(ok.map((t) => t.onsetToVadSpeechStartMs).filter((v) => v !== null)),
    directPauses: ok.filter((t) => t.directPause).length,
    botAudibleAtOnset: ok.filter((t) => t.audibleAtOnset).length,
    // Trials in which the bot had gone silent before the −20 dB onset (the onset cue, on the word's soft start).
    silentBeforeOnset: ok.filter((t) => t.silentBeforeOnsetMs > 0).length,
    reasons: countBy(ok.map((t) => t.reason)),
    renderedAgreementMs: stats(ok.map((t) => Math.abs(t.renderedAgreementMs))),
    unknownQuanta: ok.reduce((a, t) => a + t.unknownQuanta, 0),
  };
}
