// The Uplink against a naive sender (`ws.send` per frame, no queue), with 1,
// 10 and 50 concurrent kyutaiStt streams in one Chromium page, each fed a
// synthetic 24 kHz tone at real-time cadence (80 ms frames, catch-up timing),
// against the reference STT in `recognise=0` mode (audio read and stepped, no
// decoder: 50 pocketsphinx decoders would not fit; see demo/README.md).
//
// Two conditions, both reported:
// - `stall`: the server stops reading for 10 s (1 s after the upgrade), then
//   resumes. No priming. On loopback the kernel and Chromium's network service
//   absorb about 4–5 MB per socket before `bufferedAmount` moves, and 10 s of
//   audio is 1.2 MB, so neither sender sees backpressure here: that is the
//   finding the uplink's design had to allow for, measured.
// - `rate` (the `streams` and `naive` tables): the server reads 24,000 B/s per
//   stream (a fifth of the 120 kB/s the audio needs). Each socket is first
//   primed at burst speed through its own sender until `bufferedAmount`
//   stays above 0 for 500 ms (the state a slow mobile uplink reaches after
//   ~45 s at real time here), then 8 s run at real time.
// The uplink uses policy "gap" through a sink that counts the gap markers
// (Kyutai's protocol has none; see gapCountingSink in the harness), so the
// stream keeps flowing and every sample is accounted for.
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";

const PORT = 8863;
const COUNTS = [1, 10, 50];
const KEYS = [
  "pendingBytesMax", "overBudgetBytes", "bufferedAmountMax", "queueWaitMsP95", "oldestFrameAgeMsMax",
  "admissionRejects", "gapSamples", "gapMarkers", "overloads", "pendingFramesMax", "liveTimersMax",
  "pushedSamples", "sentSamples", "silentlyDroppedSamples", "overBudgetSamples", "pendingSamplesTaken",
  "heapPeakBytes", "primedMs", "pushedForMs", "drainedMs", "oldestFrameAgeMsAfterDrain",
];

function pick(r) {
  const out = {};
  for (const k of KEYS) out[k] = typeof r[k] === "number" ? Math.round(r[k] * 100) / 100 : r[k];
  return out;
}

export default function uplinkBench() {
  return withBench({ port: PORT, browserArgs: ["--enable-precise-memory-info"] }, (bench) => measure(bench));
}

async function measure({ server, browser, step }) {
  const result = {
    budgetBytes: 60000,
    conditions: {
      streams: "rate_bps=24000 per stream (slow uplink), sockets primed until bufferedAmount > 0, then 8 s at real time; Uplink policy gap (counting sink)",
      naive: "same as streams, with ws.send per frame and no queue; pendingBytesMax is bufferedAmount",
      stall: "real time, server stops reading 1 s after open for 10 s then resumes; no priming",
    },
    streams: {},
    naive: {},
    stall: { uplink: {}, naive: {} },
  };
  const runOne = async (options) => {
    // A fresh page per run: no heap or socket left over from the last one.
    const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
    const name = `${options.mode} ${options.streams} stream(s), ${options.query}`;
    try {
      await step(`open uplink.html for ${name}`, async () => {
        await page.goto(`${server.base}/bench/pages/uplink/uplink.html`);
        await page.waitForFunction(() => window.uplinkHarnessReady, null, { timeout: 30_000 });
      });
      // A run is its priming plus durationMs and drainMs of real time: two minutes more bounds it.
      return await step(name, () => page.evaluate((o) => window.uplinkHarness.runStreams(o), options), { timeoutMs: options.durationMs + options.drainMs + 120_000 });
    } finally {
      // Not to hide the step's own failure: if the backend died, the browser is closed by withBench.
      await step("close the page", () => page.close(), { timeoutMs: PAGE_OP_MS }).catch(() => {});
    }
  };
  for (const n of COUNTS) {
    const base = { streams: n, query: "recognise=0&rate_bps=24000", prime: true, frameMs: 80, durationMs: 8000, drainMs: 1000, pollMs: 10 };
    result.streams[n] = pick(await runOne({ ...base, mode: "uplink", policy: "gap" }));
    console.log(`rate ${n} uplink`, JSON.stringify(result.streams[n]));
    result.naive[n] = pick(await runOne({ ...base, mode: "naive" }));
    console.log(`rate ${n} naive`, JSON.stringify(result.naive[n]));
  }
  for (const n of COUNTS) {
    const base = { streams: n, query: "recognise=0&stall_after_ms=1000&stall_ms=10000", frameMs: 80, durationMs: 13000, drainMs: 3000, pollMs: 10 };
    result.stall.uplink[n] = pick(await runOne({ ...base, mode: "uplink", policy: "gap" }));
    console.log(`stall ${n} uplink`, JSON.stringify(result.stall.uplink[n]));
    result.stall.naive[n] = pick(await runOne({ ...base, mode: "naive" }));
    console.log(`stall ${n} naive`, JSON.stringify(result.stall.naive[n]));
  }
  return result;
}
