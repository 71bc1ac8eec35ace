// The audio engine, measured in real Chromium with a recorder node after the
// player inside the same AudioContext (test/browser/pages/audio/): flush
// latency in samples, stale samples after a generation fence, samples lost
// across pause/resume, process() time per render quantum in both worklets,
// and underruns over 60 s of playback fed at 1× real time.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildSync } from "esbuild";
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile, summary } from "./lib/results.mjs";

const PORT = 8714;
const QUANTUM = 128;

/**
 * Chromium 156's AudioWorkletGlobalScope has no `performance`, so per-quantum
 * percentiles are taken here: the worklets' per-quantum work (the same
 * Resampler and RingBuffer code, transpiled) timed one quantum at a time in
 * Node with performance.now(). The in-browser mean comes from Date.now() sums.
 */
async function nodeQuantumTimes(contextRate = 48000, quanta = 20000) {
  const dir = mkdtempSync(join(tmpdir(), "audio-bench-"));
  const load = async (name) => {
    const outfile = join(dir, `${name}.mjs`);
    buildSync({ entryPoints: [`src/audio/${name}.ts`], outfile, format: "esm", logLevel: "error" });
    return import(pathToFileURL(outfile).href);
  };
  const { Resampler } = await load("resampler");
  const { RingBuffer } = await load("ring-buffer");
  const stereo = [new Float32Array(QUANTUM), new Float32Array(QUANTUM)];
  const mono = new Float32Array(QUANTUM);
  const vad = new Resampler(contextRate, 16000);
  const uplink = new Resampler(contextRate, 24000);
  const vadOut = new Float32Array(vad.maxOutput(QUANTUM));
  const upOut = new Float32Array(uplink.maxOutput(QUANTUM));
  const frame = new Float32Array(1920);
  let filled = 0;
  const capture = [];
  for (let q = 0; q < quanta; q++) {
    for (let i = 0; i < QUANTUM; i++) stereo[0][i] = stereo[1][i] = Math.sin((q * QUANTUM + i) * 0.01);
    const t0 = performance.now();
    mono.fill(0);
    for (const ch of stereo) for (let i = 0; i < QUANTUM; i++) mono[i] += ch[i] * 0.5;
    vad.process(mono, 0, QUANTUM, vadOut, 0);
    const n = uplink.process(mono, 0, QUANTUM, upOut, 0);
    for (let i = 0; i < n; i++) {
      frame[filled++] = upOut[i];
      if (filled === frame.length) filled = 0;
    }
    capture.push((performance.now() - t0) * 1000);
  }
  const ring = RingBuffer.create(contextRate * 10);
  const out = new Float32Array(QUANTUM);
  const chunk = new Float32Array(QUANTUM).fill(0.25);
  const playback = [];
  for (let q = 0; q < quanta; q++) {
    ring.push(chunk);
    const t0 = performance.now();
    out.fill(0);
    const n = ring.pop(out, 0, QUANTUM);
    for (let i = 0; i < Math.min(n, 128); i++) out[i] *= (i + 1) / 128; // the fade-in, worst case
    playback.push((performance.now() - t0) * 1000);
  }
  const pick = (v) => ({ p50: quantile(v, 0.5), p95: quantile(v, 0.95) });
  return { capture: pick(capture), playback: pick(playback), contextRate, quanta };
}

export default function audioBench() {
  return withBench({ port: PORT }, async ({ server, browser, step }) => {
    const open = async (file, query = "") => {
      const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
      await step(`open ${file}.html${query}`, async () => {
        await page.goto(`${server.base}/test/browser/pages/audio/${file}.html${query}`);
        await page.waitForFunction(() => window.audioReady === true, null, { timeout: 60_000 });
      });
      // The 60 s real-time scenario is the longest; three minutes bounds any of them.
      return (scenario, args = {}) => step(`${file}${query}: ${scenario}`, () => page.evaluate(([s, a]) => window.audio[s](a), [scenario, args]), { timeoutMs: 180_000 });
    };

    const transports = {};
    for (const [name, query, scale] of [
      ["shared", "", 1],
      ["port", "?isolated=0", 0.5],
    ]) {
      const run = await open("player", query);
      const flush = await run("flushes", { count: Math.round(200 * scale) + 10, seed: 101 });
      const audible = flush.results.filter((r) => r.audibleAtFlush);
      let stale = 0;
      let fenceCycles = 0;
      for (const flushFirst of [false, true]) {
        const f = await run("fences", { count: Math.round(25 * scale), flushFirst, seed: 202 });
        stale += f.stale;
        fenceCycles += f.checked;
        if (!f.newRenderedInOrder) throw new Error(`${name}: a new generation did not play whole and in order`);
      }
      const pauses = await run("pauses", { cycles: Math.round(100 * scale), seed: 303, via: "main" });
      const worker = await run("pauses", {
        cycles: Math.round(100 * scale),
        seed: 404,
        via: name === "shared" ? "shared" : "port",
      });
      transports[name] = {
        flushes: audible.length,
        flushToSilenceSamples: summary(audible.map((r) => r.afterApplied)),
        flushRequestToSilenceSamples: summary(audible.map((r) => r.afterRequest)),
        fenceCycles,
        staleSamplesAfterFence: stale,
        pauseResumeCycles: pauses.fadeOuts + worker.fadeOuts,
        pauseResumeLostSamples: pauses.lost + worker.lost,
        pauseResumeMismatchedSamples: pauses.mismatches + worker.mismatches,
        positionMinusRendered: pauses.position - pauses.consumed,
      };
    }

    const run = await open("player");
    const realtime = await run("realtime", { seconds: 60, profile: true });
    const capture = await (await open("capture"))("injectedClicks", { clicks: 4, profile: true, ms: 5000 });
    const us = (values) => ({ p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: Math.max(...values) });
    const node = await nodeQuantumTimes();

    const shared = transports.shared;
    return {
      flushToSilenceSamples: shared.flushToSilenceSamples,
      staleSamplesAfterFence: shared.staleSamplesAfterFence,
      pauseResumeLostSamples: shared.pauseResumeLostSamples,
      processTimeUs: {
        capture: { ...node.capture, meanInWorklet: capture.meanMicrosByDate },
        playback: { ...node.playback, meanInWorklet: realtime.meanMicrosByDate },
        method:
          "p50/p95: the worklets' per-quantum work timed in Node (performance.now; Chromium 156 worklets have no performance); " +
          "meanInWorklet: real worklets in Chromium, Date.now() sums / quanta",
        inWorkletSharedClock: {
          note: "worklet reads a worker's performance.now() through a SharedArrayBuffer; 5 µs steps, freezes when the worker is descheduled",
          capture: us(capture.micros),
          playback: us(realtime.micros),
          clock: { capture: capture.clock, playback: realtime.clock },
          quanta: { capture: capture.micros.length, playback: realtime.micros.length },
        },
      },
      underruns60s: realtime.underruns,
      realtime: {
        written: realtime.written,
        rendered: realtime.rendered,
        transport: realtime.transport,
        maxFeedGapMs: realtime.maxFeedGapMs,
      },
      captureAlignment: {
        vadPeakErrorSamples: Math.max(...capture.vad.peaks.map((p, i) => Math.abs(p - capture.vad.expected[i]))),
        uplinkPeakErrorSamples: Math.max(...capture.uplink.peaks.map((p, i) => Math.abs(p - capture.uplink.expected[i]))),
        mediaStreamHopFrames: capture.hopLatencyFrames,
      },
      transports,
    };
  });
}
