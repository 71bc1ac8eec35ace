// `npm run bench -- uplink-busy`: how often healthy sessions overload their uplink when the page's
// main thread is busy. Five VoiceSessions in one Chromium page on the reference backend (kyutaiStt
// with the real recogniser, flite TTS, the scripted LLM), each saying one question 4 s after the last
// one listens, for 30 s. Side by side, in the same browser and backend, in alternating order:
// - busy: the main thread busy 50 ms of every 60 ms (test/browser/pages/uplink/uplink-busy.js);
// - idle: the same sessions with the main thread free (the baseline).
// Per condition: sessions that overloaded (by age, by bytes), frames the main thread handed over past
// the budget (a frozen page: the overloads it causes are the documented answer), the main thread's
// delivery delay (p95, max), and the questions the STT heard. The test (uplink-busy.spec.ts) checks
// the policy under any load; this measures the rate on this machine.
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8864;
const ROUNDS = Number(process.env.BENCH_UPLINK_BUSY_ROUNDS ?? 3);
const CONDITIONS = { busy: { busyMs: 50, periodMs: 60 }, idle: { busyMs: 0, periodMs: 60 } };

export default function uplinkBusyBench() {
  return withBench({ port: PORT }, async ({ server, browser, step }) => {
    /** @type {Record<string, any[]>} */
    const runs = { busy: [], idle: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["busy", "idle"] : ["idle", "busy"];
      for (const name of order) {
        const page = await step(`${name} ${round + 1}: a new page`, () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
        try {
          await step(`${name} ${round + 1}: open uplink-busy.html`, async () => {
            await page.goto(`${server.base}/test/browser/pages/uplink/uplink-busy.html`);
            await page.waitForFunction(() => window.uplinkBusyReady === true, null, { timeout: 30_000 });
          });
          const r = await step(`${name} ${round + 1}: five sessions for 30 s`, () => page.evaluate((o) => window.uplinkBusy.busySessions(o), { sessions: 5, durationMs: 30000, ...CONDITIONS[name] }), { timeoutMs: 180_000 });
          runs[name].push(r);
          console.log(`  ${name} ${round + 1}: ${summarise([r]).overloadedSessions} of 5 sessions overloaded; delivery max ${r.delivery.mainThreadAgeMs.max} ms`);
        } finally {
          await step(`${name} ${round + 1}: close the page`, () => page.close(), { timeoutMs: PAGE_OP_MS });
        }
      }
    }
    const busy = summarise(runs.busy);
    const idle = summarise(runs.idle);
    return {
      busy,
      idle,
      // The test's former assertion, kept here as the bench's goal: with the page busy but not frozen past
      // the budget, no session overloads; an overload is only ever by age, for a frame handed over late.
      goal: "no overload by bytes; no more overloaded sessions than frames the main thread handed over past the budget",
      met: busy.overloadsByBytes === 0 && idle.overloadsByBytes === 0 && busy.overloadedSessions <= busy.framesPastBudget && idle.overloadedSessions <= idle.framesPastBudget,
      ratio: { deliveryP95: idle.deliveryMs.p95 > 0 ? Math.round((busy.deliveryMs.p95 / idle.deliveryMs.p95) * 100) / 100 : null },
      plan: { rounds: ROUNDS, sessions: 5, durationMs: 30000, busy: CONDITIONS.busy },
    };
  });
}

/** @param {any[]} results */
function summarise(results) {
  const sessions = results.flatMap((r) => r.sessions);
  const delivery = results.map((r) => r.delivery.mainThreadAgeMs);
  const p95s = delivery.map((d) => d.p95);
  return {
    sessions: sessions.length,
    overloadedSessions: sessions.filter((s) => s.overloads.length > 0).length,
    overloadsByAge: sessions.reduce((n, s) => n + s.overloads.filter((o) => o.reason === "age").length, 0),
    overloadsByBytes: sessions.reduce((n, s) => n + s.overloads.filter((o) => o.reason !== "age").length, 0),
    framesPastBudget: delivery.reduce((n, d) => n + d.overBudget, 0),
    deliveryMs: { p95: quantile(p95s, 0.5), max: Math.max(...delivery.map((d) => d.max)) },
    questionsHeard: sessions.filter((s) => /light|turn/i.test(s.socket.heard.join(" "))).length,
    busyFraction: Math.round((results.reduce((n, r) => n + r.busyFraction, 0) / Math.max(1, results.length)) * 100) / 100,
  };
}
