/**
 * The fault matrix: for STT, TTS and LLM, every fault the reference backend
 * can inject (at capacity on every instance, start-up timeout, drop mid-stream,
 * stall, malformed and oversized messages) against real VoiceSessions in
 * Chromium. Each case must end in its documented event (the README's "Errors and warnings"), the
 * session must either go on (the next turn works) or end cleanly (idle,
 * everything released), the user's words must stay in history, and no socket,
 * stream or unhandled rejection may be left behind.
 *
 * The cases and the rules they are judged by are one table,
 * pages/faults/cases.js, shared with `npm run bench -- reliability`.
 */
import { expect, test, type Page } from "./backend-per-worker";
// @ts-ignore: a plain ESM module shared with the page and the benchmark
import { REPLY_STALL_MS, SUITE_CASES, judgeCleanTurn, judgeReplyCase, judgeSttCase } from "./pages/faults/cases.js";
import { openPage } from "./open-page";

interface FaultCase {
  name: string;
  service: "stt" | "tts" | "llm";
  fault: string;
  expect: { error?: string; outcome: "starts-not" | "ends" | "continues" };
}
// The rows marked `suite`; the whole table runs in `npm run bench -- reliability`.
const cases = SUITE_CASES() as FaultCase[];

async function openFaultsPage(page: Page): Promise<void> {
  await openPage(page, "/test/browser/pages/faults/faults.html", "faultsPageReady");
}

const OUTCOME = {
  "starts-not": "start() rejects and nothing stays open",
  ends: "the session gives up after bounded reconnects and ends cleanly",
  continues: "the session reconnects and the next turn works",
};

for (const c of cases.filter((c) => c.service === "stt")) {
  test(`STT ${c.fault}: ${c.expect.error ?? "a warning"}; ${OUTCOME[c.expect.outcome]}; the user's words are kept`, async ({ page }) => {
    test.setTimeout(90_000);
    await openFaultsPage(page);
    const r = await page.evaluate((c) => (window as any).faultsPage.runSttCase(c), c);
    console.log(`${c.name}: ${JSON.stringify({ startError: r.startError, errors: r.seen.errors.map((e: any) => `${e.name}${e.fatal ? " (fatal)" : ""}`), warnings: r.seen.warnings.length, history: r.history, detail: r.detail })}`);
    expect(judgeSttCase(c, r)).toEqual([]);
    expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
  });
}

test("TTS and LLM faults, one per turn on one session: each is reported, the turn ends, nothing leaks, the user's words stay, and a clean turn works after them all", async ({ page }) => {
  test.setTimeout(240_000);
  await openFaultsPage(page);
  const replyCases = cases.filter((c) => c.service !== "stt");
  const r = await page.evaluate(
    ({ cases, stallMs }) => (window as any).faultsPage.runReplyCases(cases, { turn: { replyStallMs: stallMs } }),
    { cases: replyCases, stallMs: REPLY_STALL_MS },
  );
  const finalUsers = r.clean.history.filter((m: any) => m.role === "user").map((m: any) => m.text);
  const failures: string[] = [];
  for (const [i, c] of replyCases.entries()) {
    const res = r.results[i];
    console.log(`${c.name}: ${res.ms} ms, errors ${JSON.stringify(res.seen.errors.map((e: any) => e.name))}, warnings ${res.seen.warnings.length}, state ${res.state}`);
    failures.push(...judgeReplyCase(c, res, i, finalUsers));
  }
  failures.push(...judgeCleanTurn(r.clean, r.interruptions, replyCases));
  expect(failures).toEqual([]);
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});
