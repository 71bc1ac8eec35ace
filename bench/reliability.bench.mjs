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
// failedFaultCases, transcriptLost) must all be 0. Each leak is named in
// `leaks` (where, session, barge-in, state, quests, socket URLs, the
// session's last events, and what was still open 2 s later).
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
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

/** Steps that load a page and wait for it to be ready. */
const PAGE_READY_MS = 60_000;
/** One STT fault case, or all the reply cases in one page: generous bounds, not measurements. */
const STT_CASE_MS = 120_000;
const REPLY_CASES_MS = 15 * 60_000;

async function runFuzz(runChild) {
  const started = Date.now();
  const run = await runChild("npx", ["vitest", "run", "test/unit/fuzz.test.ts"], {
    name: "fuzz (vitest test/unit/fuzz.test.ts)",
    env: { FUZZ_MESSAGES: String(FUZZ_MESSAGES), NO_COLOR: "1" },
    timeoutMs: 20 * 60_000,
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

async function openPage({ browser, step }, url, ready) {
  const page = await step("open a page in a new context", async () => (await browser.newContext()).newPage(), { timeoutMs: PAGE_OP_MS });
  await step(`open ${new URL(url).pathname}`, async () => {
    await page.goto(url);
    await page.waitForFunction((flag) => window[flag], ready, { timeout: PAGE_READY_MS });
  });
  return page;
}

async function runFaults(bench) {
  const { server, step } = bench;
  const base = server.base;
  const failures = [];
  let transcriptLost = 0;
  const started = Date.now();
  for (const c of CASES.filter((c) => c.service === "stt")) {
    const page = await openPage(bench, `${base}/test/browser/pages/faults/faults.html`, "faultsPageReady");
    const r = await step(`fault case ${c.name}`, () => page.evaluate((c) => window.faultsPage.runSttCase(c), c), { timeoutMs: STT_CASE_MS });
    const f = judgeSttCase(c, r);
    failures.push(...f);
    transcriptLost += lostWords(r.partialAtReport, r.history).length;
    console.log(`  fault ${c.name}: ${f.length ? f.join("; ") : "ok"}`);
    await step("close the page's context", () => page.context().close(), { timeoutMs: PAGE_OP_MS });
  }
  const replyCases = CASES.filter((c) => c.service !== "stt");
  const page = await openPage(bench, `${base}/test/browser/pages/faults/faults.html`, "faultsPageReady");
  const r = await step(
    `the ${replyCases.length} LLM/TTS fault cases`,
    () => page.evaluate(({ cases, stallMs }) => window.faultsPage.runReplyCases(cases, { turn: { replyStallMs: stallMs } }), { cases: replyCases, stallMs: REPLY_STALL_MS }),
    { timeoutMs: REPLY_CASES_MS },
  );
  const finalUsers = r.clean.history.filter((m) => m.role === "user").map((m) => m.text);
  for (const [i, c] of replyCases.entries()) {
    const f = judgeReplyCase(c, r.results[i], i, finalUsers);
    failures.push(...f);
    transcriptLost += lostWords(r.results[i].partialAtReport, finalUsers).length;
    console.log(`  fault ${c.name}: ${f.length ? f.join("; ") : "ok"} (${r.results[i].ms} ms)`);
  }
  failures.push(...judgeCleanTurn(r.clean, r.interruptions, replyCases));
  await step("close the page's context", () => page.context().close(), { timeoutMs: PAGE_OP_MS });
  const failedNames = new Set(failures.map((f) => f.split(":")[0]));
  return { cases: CASES.length, failed: [...failedNames].filter((n) => CASES.some((c) => c.name === n)).length, failures, transcriptLost, seconds: (Date.now() - started) / 1000 };
}

/** One soak page: `share` of the barge-ins; the first page (`sampleHeap`) also samples the heap. */
async function soakPage(bench, { share, seed, sampleHeap }) {
  const { server, step } = bench;
  const page = await openPage(bench, `${server.base}/bench/pages/reliability/soak.html`, "soakPageReady");
  const cdp = await step(`soak page ${seed}: set up`, async () => {
    const session = await page.context().newCDPSession(page);
    await page.exposeFunction("soakProgressToNode", (n) => {
      if (n % 50 === 0) console.log(`  soak page ${seed}: ${n} barge-ins`);
    });
    await page.evaluate(() => (window.soakProgress = 0));
    return session;
  }, { timeoutMs: 30_000 });
  const heap = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    return (await cdp.send("Runtime.getHeapUsage")).usedSize;
  };
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
    const warm = await step(`soak page ${seed}: heap once warm (5 barge-ins)`, async () => {
      await page.waitForFunction(() => window.soakProgress >= 5, undefined, { timeout: 120_000 });
      return heap();
    }, { timeoutMs: 130_000 });
    const warmAt = await step(`soak page ${seed}: read progress`, () => page.evaluate(() => window.soakProgress), { timeoutMs: 10_000 });
    // Sample again near the end: when the count is nearly reached or the time nearly up.
    const soakStart = Date.now();
    const late = await step(`soak page ${seed}: heap near the end`, async () => {
      await page.waitForFunction(
        ({ n, until }) => window.soakProgress >= n - 2 || Date.now() > until,
        { n: share, until: soakStart + SOAK_MINUTES * 60_000 - 20_000 },
        { timeout: SOAK_MINUTES * 60_000 + 60_000, polling: 1000 },
      );
      return heap();
    }, { timeoutMs: SOAK_MINUTES * 60_000 + 70_000 });
    const lateAt = await step(`soak page ${seed}: read progress`, () => page.evaluate(() => window.soakProgress), { timeoutMs: 10_000 });
    heapResult = { heapDeltaBytes: late - warm, heapSampledBetweenBargeIns: [warmAt, lateAt] };
  }
  const r = await step(`soak page ${seed}: ${share} barge-ins`, () => run, { timeoutMs: SOAK_MINUTES * 60_000 + 5 * 60_000 });
  await step("close the page's context", () => page.context().close(), { timeoutMs: PAGE_OP_MS });
  return { ...r, ...heapResult };
}

/** PAGES pages at once, each its own session, sharing the backend; the counts are summed. */
async function runSoak(bench) {
  const shares = Array.from({ length: PAGES }, (_, i) => Math.floor(BARGE_INS / PAGES) + (i < BARGE_INS % PAGES ? 1 : 0));
  const runs = await Promise.all(shares.map((share, i) => soakPage(bench, { share, seed: 2026 + i, sampleHeap: i === 0 })));
  await new Promise((r) => setTimeout(r, 500));
  const server = await bench.step("read the backend's /__stats", async () => (await fetch(`${bench.server.base}/__stats`)).json(), { timeoutMs: 10_000 });
  const sum = (key) => runs.reduce((n, r) => n + r[key], 0);
  return {
    pages: PAGES,
    bargeIns: sum("bargeIns"),
    attempts: sum("attempts"),
    retries: sum("retries"),
    retriesByState: runs.reduce((by, r) => {
      for (const [state, n] of Object.entries(r.retriesByState ?? {})) by[state] = (by[state] ?? 0) + n;
      return by;
    }, {}),
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
    leaks: runs.flatMap((r, page) => r.leaks.map((l) => ({ page, ...l }))),
    sttDown: runs.flatMap((r, page) => r.sttDown.map((l) => ({ page, ...l }))),
    sttDownAtUserFinal: sum("sttDownAtUserFinal"),
    warnings: sum("warnings"),
    warningSamples: runs.flatMap((r) => r.warningSamples).slice(0, 10),
    phaseMs: Object.fromEntries(Object.keys(runs[0].phaseMs).map((k) => [k, runs.reduce((n, r) => n + r.phaseMs[k], 0)])),
  };
}

/** Prints each leak the soak named, so a run's log says which and when, not only how many. */
function printLeaks(leaks) {
  for (const l of leaks) {
    console.log(`  ${l.where.includes("STT down") ? "STT DOWN (not a leak)" : "LEAK"} ${l.where}: session ${l.session}, barge-in ${l.bargeIn} (attempt ${l.attempt}, retries ${l.retries}), state ${l.state}, at ${l.atMs} ms: quests [${l.quests.join(", ")}], sockets [${l.sockets.join(", ")}]; 2 s later: quests [${l.after?.quests.join(", ")}], sockets [${l.after?.sockets.join(", ")}], state ${l.after?.state}`);
    for (const line of l.trail) console.log(`      ${line}`);
  }
}

export default function reliability() {
  return withBench({ port: PORT }, async (bench) => {
    console.log(`fuzz: ${FUZZ_MESSAGES} messages per provider…`);
    const fuzz = await runFuzz(bench.run);
    const skipFaults = process.env.RELIABILITY_SKIP_FAULTS === "1";
    console.log("fault matrix…");
    const faults = skipFaults ? { cases: 0, failed: 0, failures: ["skipped"], transcriptLost: 0, seconds: 0 } : await runFaults(bench);
    console.log(`soak: up to ${BARGE_INS} barge-ins or ${SOAK_MINUTES} min…`);
    const soak = await runSoak(bench);
    printLeaks(soak.leaks);
    printLeaks(soak.sttDown);
    return {
      bargeIns: soak.bargeIns,
      soakPages: soak.pages,
      // Sessions started and stopped in turn on each page (RELIABILITY_PER_SESSION barge-ins each).
      soakSessions: soak.sessions,
      bargeInAttempts: soak.attempts,
      // Phrases spoken again because the last one made no turn (no words recognised).
      soakRetries: soak.retries,
      // The session's state when each retry spoke (listening: the last speech made no turn).
      soakRetriesByState: soak.retriesByState,
      soakSeconds: Math.round(soak.ms / 1000),
      secondsPerBargeIn: soak.ms / 1000 / Math.max(1, soak.bargeIns),
      staleSamples: soak.staleSamples,
      fencesChecked: soak.fencesChecked,
      fencesUnchecked: soak.fencesUnchecked,
      leakedSockets: soak.leakedSockets + Object.values(soak.serverOpenAfterStop).reduce((a, b) => a + b, 0),
      leakedQuests: soak.leakedQuests,
      // Each leak named (see the header); the backend's streams still open after every stop, by service.
      leaks: soak.leaks,
      leakedServerStreams: soak.serverOpenAfterStop,
      // Not leaks: user finals while the STT was reconnecting (an uplink overload or a drop), named in sttDown.
      sttDownAtUserFinal: soak.sttDownAtUserFinal,
      sttDown: soak.sttDown,
      soakWarnings: soak.warnings,
      soakWarningSamples: soak.warningSamples,
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
  });
}
