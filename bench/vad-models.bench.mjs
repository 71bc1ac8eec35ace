// `npm run bench -- vad-models`: the three Silero models @ricky0123/vad-web
// ships (v5, v6, legacy) side by side in bargein's real VadWorker in
// Chromium, to choose the default by measurement. Each labelled speech
// fixture is fed clean and mixed with white and pink noise at 10, 5 and 0 dB
// SNR (noise scaled against the labelled utterances' RMS), and the noise alone
// at the 0 dB level; the worker runs the session's settings (redemptionMs
// 600, minSpeechMs 200). Per model: utterances found and missed, segments
// invented (speech where the label has none), and onset error (the first
// speech start of a found utterance minus its labelled onset). Fed as fast as
// the worker takes it: this measures decisions, not real-time latency (the
// `vad` bench does that).
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8724;
const CONFIG = {
  models: ["v5", "v6", "legacy"],
  speech: ["speech-slt", "speech-rms", "speech-two"],
  noises: ["noise-white", "noise-pink"],
  snrsDb: [10, 5, 0],
  options: { redemptionMs: 600, minSpeechMs: 200 },
};

const round = (v) => Math.round(v * 10) / 10;

function summarise(rows) {
  const sum = (key) => rows.reduce((n, r) => n + r[key], 0);
  const onsets = rows.flatMap((r) => r.onsetErrorMs);
  return {
    utterances: sum("utterances"),
    found: sum("found"),
    missed: sum("missed"),
    invented: sum("invented"),
    onsetErrorMs: onsets.length ? { p50: round(quantile(onsets, 0.5)), p95: round(quantile(onsets, 0.95)) } : null,
  };
}

export default function vadModelsBench() {
  return withBench({ port: PORT }, async ({ server, browser, step }) => {
    const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await step("open models.html", async () => {
      await page.goto(`${server.base}/bench/pages/vad/models.html`);
      await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
    });
    const rows = await step("run the three models on every fixture and noise", () => page.evaluate((c) => window.bench.run(c), CONFIG), { timeoutMs: 30 * 60_000 });
    const result = { config: CONFIG, errors };
    for (const model of CONFIG.models) {
      const mine = rows.filter((r) => r.model === model);
      result[model] = {
        clean: summarise(mine.filter((r) => r.noise === "clean")),
        noisy: summarise(mine.filter((r) => r.noise !== "clean" && r.fixture !== "none")),
        at0dB: summarise(mine.filter((r) => r.snrDb === 0 && r.fixture !== "none")),
        noiseOnlyInvented: summarise(mine.filter((r) => r.fixture === "none")).invented,
      };
    }
    result.rows = rows.map((r) => ({ ...r, onsetErrorMs: r.onsetErrorMs.map(round) }));
    return result;
  });
}
