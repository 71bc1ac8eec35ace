// `npm run bench -- vad`: bargein's VadWorker against @ricky0123/vad-web's
// MicVAD, in the same Chromium, on the same audio (the VAD fixtures, repeated
// with seeded sub-frame jitter), played in real time through a 16 kHz
// AudioContext into a MediaStream that each VAD consumes.
//
// - inferenceMs: per 32 ms frame in our worker (the `inferenceMs` that the
//   worker reports with each metered probability), from a fast replay.
// - mainThreadMsPerAudioSecond: the page's main-thread busy time while the
//   audio plays, from Chrome's own accounting (CDP Performance.getMetrics
//   `TaskDuration`: the renderer main thread's total task time), taken just
//   before and after playback, divided by the audio's duration. Each VAD runs
//   in its own page, so the counter covers only that VAD and the page around it.
// - onsetLatencyMs: labelled onset (scripts/make-vad-fixtures.mjs) to the
//   speech-start callback on the main thread, both in performance.now() time.
//
// MicVAD's page is served under the same strict CSP as ours; it loads MicVAD
// from ./vendor/micvad.js, built here by rollup from vad-web's CommonJS dist
// against the installed onnxruntime-web 1.30 (vad-web's bundle.min.js embeds
// ORT 1.22 and would need 1.22's wasm). ./vendor/ is not committed:
// its files are written to bench/pages/vad/vendor/ for the run and removed after.
import { bundleForPage, writeVendor } from "./lib/page-bundle.mjs";
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8723;
const CONFIG = { fixtures: ["speech-slt", "speech-rms", "speech-two"], repeats: 3, seed: 42 };
const VAD_WEB = "node_modules/@ricky0123/vad-web/dist/";
const VENDOR = new URL("./pages/vad/vendor/", import.meta.url);

/** MicVAD's files in bench/pages/vad/vendor/ for the run (bench/lib/page-bundle.mjs). */
async function writeMicVadVendor() {
  const files = { "micvad.js": { code: await bundleForPage("bench/pages/vad/micvad-entry.js") } };
  for (const file of ["vad.worklet.bundle.min.js", "silero_vad_v5.onnx"]) files[file] = { copy: VAD_WEB + file };
  return writeVendor(VENDOR, files);
}

async function taskDurationS(cdp) {
  const { metrics } = await cdp.send("Performance.getMetrics");
  return metrics.find((m) => m.name === "TaskDuration").value;
}

async function runPage({ browser, server, step }, pageName) {
  const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("response", (r) => r.status() >= 400 && !r.url().endsWith("/favicon.ico") && errors.push(`${r.status()} ${r.url()}`));
  const prepared = await step(`${pageName}: open and prepare`, async () => {
    await page.goto(`${server.base}/bench/pages/vad/${pageName}.html`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
    return page.evaluate((c) => window.bench.prepare(c), CONFIG);
  });
  const cdp = await step(`${pageName}: CDP Performance.enable`, async () => {
    const session = await page.context().newCDPSession(page);
    await session.send("Performance.enable");
    return session;
  }, { timeoutMs: 10_000 });
  // Let loading settle before measuring.
  await page.waitForTimeout(1000);
  const before = await step(`${pageName}: read TaskDuration`, () => taskDurationS(cdp), { timeoutMs: 10_000 });
  // Real-time playback of the fixtures (repeats × their length): ten minutes bounds it.
  const played = await step(`${pageName}: play the fixtures`, () => page.evaluate(() => window.bench.play()), { timeoutMs: 10 * 60_000 });
  const after = await step(`${pageName}: read TaskDuration`, () => taskDurationS(cdp), { timeoutMs: 10_000 });
  const finished = await step(`${pageName}: finish`, () => page.evaluate(() => window.bench.finish()), { timeoutMs: 60_000 });
  await step("close the page", () => page.close(), { timeoutMs: PAGE_OP_MS });
  return { prepared, played, finished, mainThreadMs: (after - before) * 1000, errors };
}

const stats = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });
const round = (v) => Math.round(v * 100) / 100;

export default async function vadBench() {
  const removeVendor = await writeMicVadVendor();
  try {
    return await withBench({ port: PORT }, (bench) => measure(bench));
  } finally {
    removeVendor();
  }
}

async function measure(bench) {
  const ours = await runPage(bench, "ours");
  const micvad = await runPage(bench, "micvad");
  const oursPerS = ours.mainThreadMs / ours.played.durationS;
  const micvadPerS = micvad.mainThreadMs / micvad.played.durationS;
  const found = (r) => r.finished.latencies.filter((v) => v !== null);
  return {
    audio: {
      fixtures: CONFIG.fixtures.join(","),
      repeats: CONFIG.repeats,
      seconds: round(ours.played.durationS),
      labelledOnsets: ours.prepared.onsets,
    },
    inferenceMs: { ...stats(ours.finished.inferenceMs), frames: ours.finished.inferenceMs.length },
    mainThreadMsPerAudioSecond: {
      ours: round(oursPerS),
      micvad: round(micvadPerS),
      ratio: Math.round((oursPerS / micvadPerS) * 10000) / 10000,
      method:
        "CDP Performance.getMetrics TaskDuration (renderer main-thread task time) delta over real-time playback, one page per VAD, divided by audio seconds",
    },
    onsetLatencyMs: {
      ours: { ...stats(found(ours)), detected: found(ours).length },
      micvad: { ...stats(found(micvad)), detected: found(micvad).length },
      oursDecidedInWorker: stats(ours.finished.workerLatencies.filter((v) => v !== null)),
      method:
        "performance.now() of the speechStart callback on the main thread minus the labelled onset's render time (same clock mapping for both); oursDecidedInWorker uses the worker's own decision time (what auto-pause acts on), without the hop to the main thread",
    },
    loadMs: { ours: round(ours.prepared.loadMs), micvad: round(micvad.prepared.loadMs) },
    speechStarts: { ours: ours.finished.speechStarts, micvad: micvad.finished.speechStarts },
    latenciesMs: { ours: ours.finished.latencies.map((v) => (v === null ? null : round(v))), micvad: micvad.finished.latencies.map((v) => (v === null ? null : round(v))) },
    errors: { ours: ours.errors, micvad: micvad.errors },
  };
}
