// `npm run bench -- coldstart` (issue #41): a first start on a real link. Chromium throttled by the
// DevTools protocol (Network.emulateNetworkConditions: 10 Mbit/s each way, 40 ms RTT), on the real
// parts against the reference backend, with the session's default vad.waitForModel: false
// (bench/pages/coldstart/coldstart.js is the page side). Per case it measures start() → `listening`,
// start() → the VAD's model ready, the bytes on the wire before each, and whether a question said
// 300 ms after `listening` was answered whole. Cases: cold (a fresh browser context: an empty HTTP
// cache) and warm (a persistent profile's disk cache, reloaded, as a returning user's browser),
// each with the reference server's pre-compressed copies (the default) and without
// (BARGEIN_PRECOMPRESSED=0), side by side.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../scripts/chromium.mjs";
import { track } from "./lib/cleanup.mjs";
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";
import { bytesBefore, recordResponses, sentBetween, sentFor } from "./lib/wire-bytes.mjs";
import { benchPort } from "./lib/browser.mjs";

const PORT = 8871;
/** The link: 10 Mbit/s, 40 ms round trip. */
const LINK = { offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 10e6 / 8 };
const TRIALS = { cold: 3, warm: 3 };
const SAY_AFTER_MS = 300;
const GOALS = { coldListeningMs: 1000, coldBytesBeforeListening: 300_000, warmListeningMs: 300 };
const ASSETS = { wasmBytes: ".wasm", modelBytes: ".onnx" };

const round = (v, d = 0) => (Number.isFinite(v) ? Math.round(v * 10 ** d) / 10 ** d : null);
const p50p95 = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

/** What the server has sent of each file's bodies so far (/__stats `static`). */
async function sentSoFar(server) {
  const stats = await (await fetch(`${server.base}/__stats`)).json();
  return stats.static ?? {};
}

/** One trial on `page` (already on the bench page), throttled; its marks and its bytes. */
async function trial(page, server, step, label) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", LINK);
  const before = await sentSoFar(server);
  const wire = recordResponses(page);
  const r = await step(`start() and a question, ${label}`, () => page.evaluate((o) => window.coldstartBench.trial(o), { sayAfterMs: SAY_AFTER_MS }), { timeoutMs: 180_000 });
  wire.stop();
  await cdp.detach().catch(() => {});
  // The SDK's files sent during the trial (the bench's own fixtures are not under /dist/).
  const sent = sentBetween(before, await sentSoFar(server));
  const timed = wire.timed.filter((t) => t.startAt >= r.startAt);
  const after = (at) => (at > 0 ? at - r.startAt : NaN);
  return {
    startToListeningMs: after(r.listeningAt),
    startToVadReadyMs: after(r.readyAt),
    bytesBeforeListening: bytesBefore(sent, timed, r.listeningAt),
    bytesBeforeVadReady: r.readyAt > 0 ? bytesBefore(sent, timed, r.readyAt) : null,
    sent: { ...sentFor(sent, ASSETS), all: sent },
    answered: r.answered,
    answeredBeforeReady: r.answeredBeforeReady,
    degradedAtListening: r.degradedAtListening,
    userText: r.userText,
    errors: r.errors,
  };
}

/** Cold trials in fresh contexts, then warm ones on a persistent profile, against `server`. */
async function runCases(server, browser, step, dir, label) {
  const url = `${server.base}/bench/pages/coldstart/coldstart.html`;
  const open = async (page) => {
    await page.goto(url);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 });
  };
  const cold = [];
  for (let i = 0; i < TRIALS.cold; i++) {
    const context = await step("open a fresh browser context", () => browser.newContext(), { timeoutMs: PAGE_OP_MS });
    try {
      const page = await step("open a page", () => context.newPage(), { timeoutMs: PAGE_OP_MS });
      await step(`open coldstart.html (${label}, cold ${i})`, () => open(page));
      cold.push(await trial(page, server, step, `${label}, cold ${i}`));
    } finally {
      await step("close the context", () => context.close(), { timeoutMs: PAGE_OP_MS });
    }
  }
  // A user's browser coming back: a disk cache (a Playwright context is off the record, and its
  // in-memory cache does not keep the 14 MB wasm: the controls bench's finding). Its first start
  // fills the cache (unthrottled, left out); each reload is then a warm start.
  const warm = [];
  const profile = await step("launch Chromium on a persistent profile", () => chromium.launchPersistentContext(join(dir, `profile-${label}`), { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }), { timeoutMs: PAGE_OP_MS });
  const untrack = track({ name: `Chromium (persistent profile, ${label})`, stop: () => profile.close() });
  try {
    const page = profile.pages()[0] ?? (await step("open a page (persistent profile)", () => profile.newPage(), { timeoutMs: PAGE_OP_MS }));
    await step(`open coldstart.html (${label}, filling the cache)`, () => open(page));
    await step(`start() filling the cache (${label})`, () => page.evaluate(() => window.coldstartBench.trial({ sayAfterMs: 0, answerTimeoutMs: 1 })), { timeoutMs: 180_000 });
    for (let i = 0; i < TRIALS.warm; i++) {
      await step(`reload coldstart.html (${label}, warm ${i})`, async () => {
        await page.reload();
        await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 });
      });
      warm.push(await trial(page, server, step, `${label}, warm ${i}`));
    }
  } finally {
    await step("close the persistent profile", () => profile.close(), { timeoutMs: PAGE_OP_MS }).then(untrack);
  }
  return { cold, warm };
}

/** The keys for one case's trials. */
function summarise(rows) {
  const finite = (xs) => xs.filter((x) => typeof x === "number" && Number.isFinite(x));
  return {
    startToListeningMs: p50p95(rows.map((r) => r.startToListeningMs)),
    startToVadReadyMs: p50p95(finite(rows.map((r) => r.startToVadReadyMs))),
    bytesBeforeListening: round(quantile(rows.map((r) => r.bytesBeforeListening), 0.5)),
    bytesBeforeVadReady: round(quantile(finite(rows.map((r) => r.bytesBeforeVadReady)), 0.5)),
    earlyTurnAnswered: round(rows.filter((r) => r.answered).length / rows.length, 2),
  };
}

export default async function coldstartBench() {
  const dir = mkdtempSync(join(tmpdir(), "bargein-coldstart-"));
  const port = benchPort(PORT);
  try {
    const measured = {};
    for (const [label, precompressed] of [["compressed", true], ["uncompressed", false]]) {
      // One backend per case (the switch is the server's), each on its own port.
      measured[label] = await withBench({ port: precompressed ? port : port + 1, env: precompressed ? {} : { BARGEIN_PRECOMPRESSED: "0" } }, ({ server, browser, step }) =>
        runCases(server, browser, step, dir, label),
      );
    }
    const on = measured.compressed;
    const off = measured.uncompressed;
    const sentOf = (rows) => ({ wasmBytes: round(quantile(rows.map((r) => r.sent.wasmBytes), 0.5)), modelBytes: round(quantile(rows.map((r) => r.sent.modelBytes), 0.5)) });
    const ratio = (a, b) => (a > 0 && b > 0 ? round(a / b, 2) : null);
    const cold = summarise(on.cold);
    const warm = summarise(on.warm);
    const compression = sentOf(on.cold);
    const uncompressed = { cold: summarise(off.cold), warm: summarise(off.warm), compression: sentOf(off.cold) };
    const atMost = (v, limit) => typeof v === "number" && v <= limit;
    return {
      cold,
      warm,
      compression,
      uncompressed,
      savings: {
        wasmBytes: ratio(uncompressed.compression.wasmBytes, compression.wasmBytes),
        modelBytes: ratio(uncompressed.compression.modelBytes, compression.modelBytes),
        coldBytesBeforeVadReady: ratio(uncompressed.cold.bytesBeforeVadReady, cold.bytesBeforeVadReady),
        coldStartToVadReadyMsP50: ratio(uncompressed.cold.startToVadReadyMs.p50, cold.startToVadReadyMs.p50),
      },
      goals: {
        coldListening: { goal: `cold, 10 Mbit/s: start() → listening ≤ ${GOALS.coldListeningMs} ms (p95)`, measured: cold.startToListeningMs.p95, pass: atMost(cold.startToListeningMs.p95, GOALS.coldListeningMs) },
        coldBytes: { goal: `≤ ${GOALS.coldBytesBeforeListening} bytes on the wire before listening (cold, p50)`, measured: cold.bytesBeforeListening, pass: atMost(cold.bytesBeforeListening, GOALS.coldBytesBeforeListening) },
        earlyTurn: { goal: "a question said right after listening is answered, whole, before Silero is ready (cold)", measured: round(on.cold.filter((r) => r.answeredBeforeReady).length / on.cold.length, 2), pass: on.cold.every((r) => r.answeredBeforeReady) },
        warmListening: { goal: `warm: start() → listening ≤ ${GOALS.warmListeningMs} ms (p95)`, measured: warm.startToListeningMs.p95, pass: atMost(warm.startToListeningMs.p95, GOALS.warmListeningMs) },
      },
      perTrial: Object.fromEntries(
        Object.entries(measured).map(([label, cases]) => [
          label,
          Object.fromEntries(Object.entries(cases).map(([kind, rows]) => [kind, rows.map((r) => ({ ...r, startToListeningMs: round(r.startToListeningMs), startToVadReadyMs: round(r.startToVadReadyMs) }))])),
        ]),
      ),
      method:
        `Debian's Chromium driven by Playwright; per trial a CDP session on the page sets Network.emulateNetworkConditions (latency ${LINK.latency} ms, ${(LINK.downloadThroughput * 8) / 1e6} Mbit/s down and up). It throttles the VAD worker's fetches (their timing shows the rate); whether it throttles the AudioWorklet modules' fetches and the WebSockets cannot be seen here (no browser event reports the former). ` +
        `` +
        `The page (bench/pages/coldstart/coldstart.js, on bench/pages/session/bench-session.js: the Kyutai STT and TTS and the scripted LLM of the reference backend, known speech injected through \`input\` over a -60 dBFS noise bed, turn.flushTimeoutMs 6000 as the test pages) calls start() with vad.waitForModel false; startToListeningMs is Date.now() at the call to the \`listening\` state event; startToVadReadyMs to the \`vad\` ready event (or to \`listening\` when the session was not degraded then). ` +
        `Bytes: the bodies of the SDK's files (/dist/) the reference server sent during the trial, as sent (compressed when it was), by its own count (/__stats static, read before and after; no browser event here reports the AudioWorklet modules' fetches). bytesBeforeListening and bytesBeforeVadReady count what had arrived by that moment: a body the browser's network events time (the VAD worker's model and wasm, seen by Playwright) counts its share arrived by then, linear between its first and last byte (the link is throttled to a constant rate: an estimate; whole bodies are exact); the others (the worklets, the worker's script) are awaited by start() and count whole. Headers (a few hundred bytes a response), the WebSockets' frames (the STT's audio), the page's own load before start() (its HTML, bargein.js) and the bench's fixtures are not counted. compression: the wasm's and the model's bodies (p50 over the cold trials). ` +
        `earlyTurnAnswered: weather-question.wav is played into the mic ${SAY_AFTER_MS} ms after \`listening\`; answered when a reply started and the history has one user message holding "weather", "like" and "today" (a premature end splits it). ` +
        `Cases: cold, ${TRIALS.cold} trials, each in a fresh browser context (empty HTTP cache); warm, ${TRIALS.warm} reloads of the page on a persistent profile whose disk cache one unthrottled start filled (the model and the wasm revalidated by ETag; the scripts, served no-store, fetched again). uncompressed: the same against a reference server started with BARGEIN_PRECOMPRESSED=0; savings: uncompressed / compressed.`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
