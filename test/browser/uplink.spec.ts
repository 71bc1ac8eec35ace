/**
 * The Uplink in Chromium: kyutaiStt streams on real browser WebSockets to the
 * reference STT, with the server's fault knobs making real backpressure
 * (`rate_bps`: a slow uplink; `stall_ms`: the server stops reading).
 *
 * On loopback the kernel and Chromium's network service absorb about 5 MB per
 * socket before `bufferedAmount` moves (40 s of Kyutai audio), so the runs
 * that need backpressure first prime the socket at burst speed, through the
 * same sender, until `bufferedAmount` stays above 0 (see uplink-harness.js).
 * The streams use `recognise=0` (audio read, counted and stepped, no decoder)
 * except the VoiceSession scenarios, which recognise real speech.
 */
import { expect, test } from "./backend-per-worker";
import { openPage } from "./open-page";
import { STOP_BOUND_MS } from "./sanity-bounds";

// This file's tests are independent of each other: they spread over the workers (it is one of the
// slowest files, and run as a whole it was the suite's tail).
test.describe.configure({ mode: "parallel" });

const PAGE = "/test/browser/pages/uplink/uplink.html";
/** 0.5 s of 24 kHz audio at 5 bytes a sample (msgpack float32). */
const BUDGET_BYTES = 60000;
/** Bytes of one 20 ms frame on Kyutai's wire. */
const FRAME_BYTES = 480 * 5;

test.beforeEach(async ({ page }) => {
  await openPage(page, PAGE, "uplinkHarnessReady", "uplinkSessionReady");
});

function run(page: import("@playwright/test").Page, options: Record<string, unknown>) {
  return page.evaluate((o) => (window as any).uplinkHarness.runStreams(o), options);
}

function expectNoSilentDrop(r: any) {
  expect(r.silentlyDroppedSamples, "pushed − sent − gap − unsent after end − still queued").toBe(0);
  expect(r.pushedSamples).toBeGreaterThan(0);
  expect(r.sentSamples + r.gapSamples + r.unsentAfterEndSamples).toBeLessThanOrEqual(r.pushedSamples);
}

test("on a slow uplink (rate_bps=24000, a fifth of what the audio needs) pending bytes stay within the budget at every sample, while a naive sender's grow past it", async ({ page }) => {
  test.setTimeout(90_000);
  const common = { streams: 2, query: "recognise=0&rate_bps=24000", prime: true, frameMs: 20, durationMs: 3000, drainMs: 300, policy: "gap" };
  const r = await run(page, { ...common, mode: "uplink" });
  // Real backpressure: the socket's own buffer filled, and frames were refused.
  expect(r.bufferedAmountMax).toBeGreaterThan(0);
  expect(r.admissionRejects).toBeGreaterThan(0);
  expect(r.gapSamples).toBeGreaterThan(0);
  // Polled after every push and every 5 ms: never over the budget.
  expect(r.pendingSamplesTaken).toBeGreaterThan(1000);
  expect(r.overBudgetSamples).toBe(0);
  expect(r.budgetBytes).toBe(BUDGET_BYTES);
  expect(r.pendingBytesMax).toBeLessThanOrEqual(BUDGET_BYTES);
  expect(r.pendingBytesMax).toBeGreaterThan(BUDGET_BYTES / 2);
  expectNoSilentDrop(r);
  // The gap markers that went out carry what was skipped (a marker may still wait in the queue).
  expect(r.gapMarkers).toBeGreaterThan(0);
  expect(r.gapSamplesCountedBySink).toBeLessThanOrEqual(r.gapSamples);

  // The same socket conditions with send() per frame: the buffer grows without bound.
  const naive = await run(page, { ...common, streams: 1, mode: "naive" });
  expect(naive.pendingBytesMax).toBeGreaterThan(10 * BUDGET_BYTES);
  expect(naive.oldestFrameAgeMsMax).toBeGreaterThan(1000);
});

test("the pending sends do not grow with the number of frames: 1,000 and 5,000 frames hold the same bounded queue and one timer per uplink", async ({ page }) => {
  test.setTimeout(90_000);
  const common = { streams: 2, mode: "uplink", query: "recognise=0&rate_bps=24000", prime: true, frameMs: 20, framesPerTick: 20, drainMs: 300, policy: "gap" };
  const small = await run(page, { ...common, totalFrames: 1000 });
  const large = await run(page, { ...common, totalFrames: 5000 });
  for (const r of [small, large]) {
    // The queue holds at most what fits in the budget (25 frames of 2,400 bytes).
    expect(r.pendingFramesMax).toBeGreaterThan(0);
    expect(r.pendingFramesMax).toBeLessThanOrEqual(BUDGET_BYTES / FRAME_BYTES);
    // One retry timer per uplink (2), plus the harness's own wait.
    expect(r.liveTimersMax).toBeLessThanOrEqual(3);
    expect(r.overBudgetSamples).toBe(0);
    expectNoSilentDrop(r);
  }
  expect(large.framesPushedPerStream - large.primeFramesPerStream).toBe(5000);
  expect(small.framesPushedPerStream - small.primeFramesPerStream).toBe(1000);
  expect(large.pendingFramesMax).toBe(small.pendingFramesMax);
  expect(large.liveTimersMax).toBe(small.liveTimersMax);
});

const STALL_MS = 12_000;

test("after a stall ends the backlog drains: no frame older than the budget is left, the queue empties, and nothing was dropped silently", async ({ page }) => {
  test.setTimeout(90_000);
  // The server stops reading 0.3 s after the upgrade, for 12 s; priming fills the socket inside the stall. (With
  // 5 s, priming under two CPU burners once had not filled both sockets when the stall ended, and never did after.)
  const r = await run(page, {
    streams: 2,
    mode: "uplink",
    query: `recognise=0&stall_after_ms=300&stall_ms=${STALL_MS}`,
    prime: true,
    frameMs: 20,
    durationMs: 6000,
    drainMs: 5000,
    policy: "gap",
    // The run goes on past its 6 s until the queue is seen low again (for at most 30 s more): on a loaded
    // machine the stalled backlog took longer to drain than the second left after the stall.
    untilFlowing: true,
  });
  expect(r.primedMs).toBeLessThan(STALL_MS); // the stall was still on when the real-time run began
  // During the stall frames waited in the queue, then expired into gaps.
  expect(r.pendingFramesMax).toBeGreaterThan(0);
  expect(r.gapSamples).toBeGreaterThan(0);
  // No frame waited (much) past the budget: expiry runs on every push and on the 10 ms retry timer.
  expect(r.oldestFrameAgeMsMax).toBeLessThanOrEqual(500 + 100);
  expect(r.queueWaitMsP95).toBeLessThanOrEqual(500);
  // After the stall: the queue is empty and nothing is old.
  expect(r.pendingFramesAfterDrain).toBe(0);
  expect(r.oldestFrameAgeMsAfterDrain).toBe(0);
  // Audio flowed again after the stall (the last trace points show an empty queue), within the 30 s the run waits.
  const tail = r.trace.slice(-5);
  expect(tail.every(([, pending]: number[]) => pending <= BUDGET_BYTES / 4)).toBe(true);
  expect(r.overBudgetSamples).toBe(0);
  expectNoSilentDrop(r);
});

test('policy "end" in a VoiceSession: the stream that fell behind is ended cleanly (close 1000 at the server), the user sees overload and a warning, the STT reconnects and still transcribes', async ({ page }) => {
  test.setTimeout(120_000);
  const r = await page.evaluate(() =>
    (window as any).uplinkSession.endPolicyScenario({ stallQuery: "stall_after_ms=300&stall_ms=8000" }),
  );
  expect(r.errors).toEqual([]);
  expect(r.connections.length).toBeGreaterThanOrEqual(2);
  expect(r.connections[0].primed.bufferedAmount).toBeGreaterThan(0);
  expect(r.overloads.length).toBeGreaterThanOrEqual(1);
  expect(r.overloads[0]).toMatchObject({ service: "stt", policy: "end", budgetBytes: BUDGET_BYTES });
  expect(r.overloads[0].pendingBytes).toBeGreaterThan(0);
  expect(r.warnings.some((w: string) => /fell behind its latency budget/.test(w))).toBe(true);
  // The new stream is live and sending.
  expect(r.uplinkAfterReconnect.sentSamples).toBeGreaterThan(0);
  expect(r.liveQuests).toContain("stt");
  // The next utterance is transcribed on the new stream.
  expect(r.transcribed).toBe(true);
  expect(r.transcripts.find((l: string) => l.startsWith("user:"))).toMatch(/light|turn/i);
  // The server saw the ended stream close with code 1000 (once its stall was over).
  expect(r.closedNormally).toBe(true);
});

test("an STT that never answers the flush marker: the turn goes on after flushTimeoutMs with a warning and the words it had", async ({ page }) => {
  test.setTimeout(90_000);
  const r = await page.evaluate(() =>
    (window as any).uplinkSession.unansweredFlushScenario({ query: "ignore_markers=1", flushTimeoutMs: 1000 }),
  );
  expect(r.errors).toEqual([]);
  const warning = r.warnings.find((w: any) => /did not confirm its last words/.test(w.message));
  expect(warning).toBeTruthy();
  // The wait is the flush timeout, not forever.
  expect(warning.afterSpeechEndMs).toBeGreaterThan(900);
  expect(warning.afterSpeechEndMs).toBeLessThan(2500);
  expect(r.thinkingAfterSpeechEndMs).toBeLessThan(2500);
  expect(r.transcripts.find((l: string) => l.startsWith("user:"))).toMatch(/light|turn/i);
  expect(r.markersDelta).toBe(0);
  expect(r.stopMs).toBeLessThan(STOP_BOUND_MS);
  expect(r.finalState).toBe("idle");
  expect(r.serverSawClose, `STT counters at the backend, before and after: ${JSON.stringify([r.sttBefore, r.sttAfter])}`).toBe(true);
});

test("an STT that stalls (reads nothing, answers nothing): the turn ends after flushTimeoutMs, stop() resolves promptly, and the server sees the socket closed", async ({ page }) => {
  test.setTimeout(90_000);
  const r = await page.evaluate(() =>
    (window as any).uplinkSession.unansweredFlushScenario({
      // Longer than the test: a stop() that waited for the server would wait out the stall.
      query: "stall_after_ms=300&stall_ms=20000",
      flushTimeoutMs: 1000,
      fixture: "help-me",
      waitForReply: false,
    }),
  );
  expect(r.errors).toEqual([]);
  const warning = r.warnings.find((w: any) => /did not confirm its last words/.test(w.message));
  expect(warning).toBeTruthy();
  expect(warning.afterSpeechEndMs).toBeGreaterThan(900);
  expect(warning.afterSpeechEndMs).toBeLessThan(2500);
  // No words came, so there is no reply: the session listens again.
  expect(r.stateBeforeStop).toBe("listening");
  expect(r.stopMs).toBeLessThan(STOP_BOUND_MS);
  expect(r.finalState).toBe("idle");
  expect(r.serverSawClose, `STT counters at the backend, before and after: ${JSON.stringify([r.sttBefore, r.sttAfter])}`).toBe(true);
});

test("LLM admission: a request whose deadline passes in the queue never reaches the server", async ({ page }) => {
  test.setTimeout(60_000);
  const r = await page.evaluate(() => (window as any).uplinkSession.admissionScenario({ deadlineMs: 300, wordMs: 100 }));
  expect(r.first.ms).toBeGreaterThan(300);
  expect(r.first.text.split(/\s+/).length).toBeGreaterThan(3);
  expect(r.second.ok).toBe(false);
  expect(r.second.name).toBe("DeadlineExceededError");
  // Only the first request was started at the server.
  expect(r.requestsStartedDelta).toBe(1);
  expect(r.metrics.expired).toBe(1);
  // After the queue cleared, the next request goes through.
  expect(r.requestsStartedAfterThird).toBe(2);
  expect(r.third.words).toBeGreaterThan(1);
});
