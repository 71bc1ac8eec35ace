// `npm run bench -- reliability`: the long versions of the reliability tests.
//
// 1. Fuzz: test/unit/fuzz.test.ts with 10,000 messages into each provider's
//    parser (FUZZ_MESSAGES), read back from its FUZZ_REPORT line.
// 2. Fault matrix: every case of test/browser/pages/faults/cases.js, run and
//    judged exactly as test/browser/faults.spec.ts does.
// 3. Soak: barge-ins at random moments on real sessions in Chromium
//    (bench/pages/reliability/soak.js), a new session every
//    RELIABILITY_PER_SESSION (100), until RELIABILITY_BARGE_INS (1,000) or
//    RELIABILITY_SOAK_MINUTES (40) of soak, whichever comes first. The JS heap
//    is sampled (after a full GC, via CDP) once warm and again at the end.
//
// Failure counts (staleSamples, leaked*, uncaughtErrors, fuzzUncaught,
// failedFaultCases, transcriptLost) must all be 0.
import { spawnSync } from "node:child_process";
import { launchBrowser, startServer } from "./lib/browser.mjs";
import { CASES, REPLY_STALL_MS, judgeCleanTurn, judgeReplyCase, judgeSttCase, lostWords } from "../test/browser/pages/faults/cases.js";

const PORT = 8870;
const BARGE_INS = Number(process.env.RELIABILITY_BARGE_INS ?? 1000);
const SOAK_MINUTES = Number(process.env.RELIABILITY_SOAK_MINUTES ?? 40);
/** Seconds of each barge-in phrase played (RELIABILITY_SPEECH_S); the rest is cut. */
const SPEECH_S = Number(process.env.RELIABILITY_SPEECH_S ?? 0.6);
/** Barge-ins per session before the soak stops it and starts a new one (RELIABILITY_PER_SESSION). */
const PER_SESSION = Number(process.env.RELIABILITY_PER_SESSION ?? 100);
const FUZZ_MESSAGES = Number(process.env.FUZZ_MESSAGES ?? 10_000);
/**
 * Soak pages at once, each with its own session (RELIABILITY_PAGES). One by
 * default: two sessions (two VADs, two recognisers, two synthesisers) on this
 * 2-core machine left the turn-taking too starved to barge in reliably.
 */
const PAGES = Number(process.env.RELIABILITY_PAGES ?? 1);

function runFuzz() {
  const started = Date.now();
  const run = spawnSync("npx", ["vitest", "run", "test/unit/fuzz.test.ts"], {
    env: { ...process.env, FUZZ_MESSAGES: String(FUZZ_MESSAGES), NO_COLOR: "1" },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const match = /FUZZ_REPORT (\{.*\})/.exec(`${run.stdout}\n${run.stderr}`);
  if (!match) throw new Error(`the fuzz run printed no report (exit ${run.status}):\n${run.stdout.slice(-2000)}`);
  const report = JSON.parse(match[1]);
  const tallies = Object.values(report.reports).map((r) => r.tally);
  return {
    passed: run.status === 0,
    seconds: (Date.now() - started) / 1000,
    messages: tallies.reduce((n, t) => n + t.cases, 0),
    // Anything but a ProtocolError or the server's own error, a hang, or an uncaught exception.
    uncaught: report.uncaught + tallies.reduce((n, t) => n + t.foreign.length + t.hangs.length + t.lostSentinel.length, 0),
    perProvider: Object.fromEntries(
      Object.entries(report.reports).map(([name, r]) => [
        name,
        { messages: r.tally.cases, socketCases: r.socketCases, protocolErrors: r.tally.protocolErrors, serverErrors: r.tally.serverErrors, passedThrough: r.tally.passedThrough, heapDeltaBytes: r.heapDeltaBytes, ms: Math.round(r.ms) },
      ]),
    ),
  };
}

async function openPage(browser, url, ready) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.waitForFunction((flag) => window[flag], ready);
  return page;
}

async function runFaults(browser, base) {
  const failures = [];
  let transcriptLost = 0;
  const started = Date.now();
  for (const c of CASES.filter((c) => c.service === "stt")) {
    const page = await openPage(browser, `${base}/test/browser/pages/faults/faults.html`, "faultsPageReady");
    const r = await page.evaluate((c) => window.faultsPage.runSttCase(c), c);
    const f = judgeSttCase(c, r);
    failures.push(...f);
    transcriptLost += lostWords(r.partialAtReport, r.history).length;
    console.log(`  fault ${c.name}: ${f.length ? f.join("; ") : "ok"}`);
    await page.context().close();
  }
  const replyCases = CASES.filter((c) => c.service !== "stt");
  const page = await openPage(browser, `${base}/test/browser/pages/faults/faults.html`, "faultsPageReady");
  const r = await page.evaluate(({ cases, stallMs }) => window.faultsPage.runReplyCases(cases, { turn: { replyStallMs: stallMs } }), { cases: replyCases, stallMs: REPLY_STALL_MS });
  const finalUsers = r.clean.history.filter((m) => m.role === "user").map((m) => m.text);
  for (const [i, c] of replyCases.entries()) {
    const f = judgeReplyCase(c, r.results[i], i, finalUsers);
    failures.push(...f);
    transcriptLost += lostWords(r.results[i].partialAtReport, finalUsers).length;
    console.log(`  fault ${c.name}: ${f.length ? f.join("; ") : "ok"} (${r.results[i].ms} ms)`);
  }
  failures.push(...judgeCleanTurn(r.clean, r.interruptions, replyCases));
  await page.context().close();
  const failedNames = new Set(failures.map((f) => f.split(":")[0]));
  return { cases: CASES.length, failed: [...failedNames].filter((n) => CASES.some((c) => c.name === n)).length, failures, transcriptLost, seconds: (Date.now() - started) / 1000 };
}

/** One soak page: `share` of the barge-ins; the first page (`sampleHeap`) also samples the heap. */
async function soakPage(browser, base, { share, seed, sampleHeap }) {
  const page = await openPage(browser, `${base}/bench/pages/reliability/soak.html`, "soakPageReady");
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    return (await cdp.send("Runtime.getHeapUsage")).usedSize;
  };
  await page.exposeFunction("soakProgressToNode", (n) => {
    if (n % 50 === 0) console.log(`  soak page ${seed}: ${n} barge-ins`);
  });
  await page.evaluate(() => (window.soakProgress = 0));
  const run = page.evaluate(
    ({ n, ms, seed, maxSpeechS, perSession }) =>
      window.soakPage.runSoak({
        bargeIns: n,
        bargeInsPerSession: perSession,
        seed,
        maxSpeechS,
        deadlineMs: ms,
        checkServer: false,
        onProgress: (k) => {
          if (k !== window.soakProgress) window.soakProgressToNode(k);
          window.soakProgress = k;
        },
      }),
    { n: share, ms: SOAK_MINUTES * 60_000, seed, maxSpeechS: SPEECH_S, perSession: PER_SESSION },
  );
  // Awaited below; until then a failure (the page closing) must not go unhandled.
  run.catch(() => {});
  let heapResult = {};
  if (sampleHeap) {
    await page.waitForFunction(() => window.soakProgress >= 5, undefined, { timeout: 120_000 });
    const warm = await heap();
    const warmAt = await page.evaluate(() => window.soakProgress);
    // Sample again near the end: when the count is nearly reached or the time nearly up.
    const soakStart = Date.now();
    await page.waitForFunction(
      ({ n, until }) => window.soakProgress >= n - 2 || Date.now() > until,
      { n: share, until: soakStart + SOAK_MINUTES * 60_000 - 20_000 },
      { timeout: SOAK_MINUTES * 60_000 + 60_000, polling: 1000 },
    );
    const late = await heap();
    const lateAt = await page.evaluate(() => window.soakProgress);
    heapResult = { heapDeltaBytes: late - warm, heapSampledBetweenBargeIns: [warmAt, lateAt] };
  }
  const r = await run;
  await page.context().close();
  return { ...r, ...heapResult };
}

/** PAGES pages at once, each its own session, sharing the backend; the counts are summed. */
async function runSoak(browser, base) {
  const shares = Array.from({ length: PAGES }, (_, i) => Math.floor(BARGE_INS / PAGES) + (i < BARGE_INS % PAGES ? 1 : 0));
  const runs = await Promise.all(shares.map((share, i) => soakPage(browser, base, { share, seed: 2026 + i, sampleHeap: i === 0 })));
  await new Promise((r) => setTimeout(r, 500));
  const server = await (await fetch(`${base}/__stats`)).json();
  const sum = (key) => runs.reduce((n, r) => n + r[key], 0);
  return {
    pages: PAGES,
    bargeIns: sum("bargeIns"),
    attempts: sum("attempts"),
    retries: sum("retries"),
    ms: Math.max(...runs.map((r) => r.ms)),
    staleSamples: sum("staleSamples"),
    fencesChecked: sum("fencesChecked"),
    fencesUnchecked: sum("fencesUnchecked"),
    sessions: sum("sessions"),
    leakedSockets: sum("leakedSockets") + sum("openSocketsAfterStop") + runs.reduce((n, r) => n + r.leakedAfterStop.reduce((k, l) => k + l.pageSockets, 0), 0),
    leakedQuests: sum("leakedQuests") + runs.reduce((n, r) => n + r.leakedAfterStop.reduce((k, l) => k + l.quests.length, 0), 0),
    serverOpenAfterStop: { stt: server.stt.open, tts: server.tts.open, llmOpen: server.llm.open, llmActive: server.llm.active },
    heapDeltaBytes: runs[0].heapDeltaBytes,
    heapSampledBetweenBargeIns: runs[0].heapSampledBetweenBargeIns,
    uncaught: runs.flatMap((r) => r.uncaught),
    sessionErrors: runs.flatMap((r) => r.sessionErrors),
    csp: runs.flatMap((r) => r.csp),
    notIdleAfterStop: sum("notIdleAfterStop"),
    phaseMs: Object.fromEntries(Object.keys(runs[0].phaseMs).map((k) => [k, runs.reduce((n, r) => n + r.phaseMs[k], 0)])),
  };
}

export default async function reliability() {
  console.log(`fuzz: ${FUZZ_MESSAGES} messages per provider…`);
  const fuzz = runFuzz();
  const skipFaults = process.env.RELIABILITY_SKIP_FAULTS === "1";
  const server = await startServer({ port: PORT });
  const browser = await launchBrowser();
  try {
    console.log("fault matrix…");
    const faults = skipFaults ? { cases: 0, failed: 0, failures: ["skipped"], transcriptLost: 0, seconds: 0 } : await runFaults(browser, server.base);
    console.log(`soak: up to ${BARGE_INS} barge-ins or ${SOAK_MINUTES} min…`);
    const soak = await runSoak(browser, server.base);
    return {
      bargeIns: soak.bargeIns,
      soakPages: soak.pages,
      // Sessions started and stopped in turn on each page (RELIABILITY_PER_SESSION barge-ins each).
      soakSessions: soak.sessions,
      bargeInAttempts: soak.attempts,
      // Phrases spoken again because the last one made no turn (no words recognised).
      soakRetries: soak.retries,
      soakSeconds: Math.round(soak.ms / 1000),
      secondsPerBargeIn: soak.ms / 1000 / Math.max(1, soak.bargeIns),
      staleSamples: soak.staleSamples,
      fencesChecked: soak.fencesChecked,
      fencesUnchecked: soak.fencesUnchecked,
      leakedSockets: soak.leakedSockets + Object.values(soak.serverOpenAfterStop).reduce((a, b) => a + b, 0),
      leakedQuests: soak.leakedQuests,
      notIdleAfterStop: soak.notIdleAfterStop,
      heapDeltaBytes: soak.heapDeltaBytes,
      heapSampledBetweenBargeIns: soak.heapSampledBetweenBargeIns,
      uncaughtErrors: soak.uncaught.length,
      sessionErrors: soak.sessionErrors.length,
      sessionErrorSamples: soak.sessionErrors.slice(0, 5),
      // Mean ms per barge-in spent in each phase of the soak's cycle.
      soakCycleMs: Object.fromEntries(Object.entries(soak.phaseMs).map(([k, v]) => [k, Math.round(v / Math.max(1, soak.bargeIns))])),
      fuzzMessages: fuzz.messages,
      fuzzUncaught: fuzz.uncaught,
      fuzzPassed: fuzz.passed,
      fuzz: fuzz.perProvider,
      faultCases: faults.cases,
      failedFaultCases: faults.failed,
      faultFailures: faults.failures,
      transcriptLost: faults.transcriptLost,
      faultSeconds: faults.seconds,
      cspViolations: soak.csp.length,
      config: { pages: PAGES, bargeInsWanted: BARGE_INS, bargeInsPerSession: PER_SESSION, soakMinutes: SOAK_MINUTES, speechSeconds: SPEECH_S, vadRedemptionMs: 300, fuzzMessagesPerProvider: FUZZ_MESSAGES, ttsPace: 0, llmWordMs: 10, maxBargeInDelayMs: 500 },
    };
  } finally {
    await browser.close();
    server.close();
  }
}
