/**
 * A small soak (the benchmark runs the long one: `npm run bench -- reliability`):
 * two real VoiceSessions in Chromium, one after the other, the user talking over the bot at random
 * moments, each barge-in's speech becoming the next turn. It proves, for every
 * barge-in: no stale sample after the fence (checked in the AudioContext), only
 * the STT stream and its socket live between turns; and over the run: no
 * unhandled rejection, no session error, everything closed after stop (page and
 * server), and a JS heap that does not grow with the number of barge-ins.
 */
import { expect, test } from "./backend-per-worker";
import { openPage } from "./open-page";

const BARGE_INS = 16;

test(`${BARGE_INS} barge-ins at random moments: no stale audio, no leaked socket or stream, a flat heap`, async ({ page }) => {
  test.setTimeout(150_000);
  await openPage(page, "/bench/pages/reliability/soak.html", "soakPageReady");
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    return (await cdp.send("Runtime.getHeapUsage")).usedSize;
  };
  await page.evaluate(() => ((window as any).soakProgress = 0));
  const run = page.evaluate(
    (n) =>
      (window as any).soakPage.runSoak({
        bargeIns: n,
        bargeInsPerSession: n / 2,
        seed: 7,
        deadlineMs: 120_000,
        onProgress: (k: number) => ((window as any).soakProgress = k),
      }),
    BARGE_INS,
  );
  // The heap once warm (two barge-ins in), and again at the end of the run, both after a full GC.
  await page.waitForFunction(() => (window as any).soakProgress >= 2, undefined, { timeout: 60_000 });
  const warm = await heap();
  await page.waitForFunction((n) => (window as any).soakProgress >= n - 1, BARGE_INS, { timeout: 120_000 });
  const late = await heap();
  const r = await run;
  const heapDeltaBytes = late - warm;
  // Objects still alive after both sessions stopped and a full GC, counted by prototype.
  const alive = async (prototype: string) => {
    await cdp.send("HeapProfiler.collectGarbage");
    const { result } = await cdp.send("Runtime.evaluate", { expression: prototype, awaitPromise: true });
    const { objects } = await cdp.send("Runtime.queryObjects", { prototypeObjectId: result.objectId! });
    const { result: length } = await cdp.send("Runtime.callFunctionOn", { objectId: objects.objectId!, functionDeclaration: "function () { return this.length; }", returnByValue: true });
    return length.value as number;
  };
  const workletNodes = await alive("AudioWorkletNode.prototype");
  const sessions = await alive('import("/dist/bargein.js").then((m) => m.VoiceSession.prototype)');
  console.log(`soak: ${JSON.stringify({ ...r, heapDeltaBytes })}`);
  expect(r.bargeIns).toBeGreaterThanOrEqual(BARGE_INS);
  expect(r.fencesChecked).toBeGreaterThanOrEqual(BARGE_INS - 1);
  expect(r.staleSamples).toBe(0);
  // Each leak named (where, barge-in, state, quests, socket URLs, the session's last events), so a failure says which.
  expect(r.leaks).toEqual([]);
  expect(r.leakedQuests).toBe(0);
  expect(r.leakedSockets).toBe(0);
  expect(r.uncaught).toEqual([]);
  expect(r.sessionErrors).toEqual([]);
  expect(r.csp).toEqual([]);
  // Two sessions, one after the other: each stop() let go of everything.
  expect(r.sessions).toBe(2);
  expect(r.interruptions).toBe(r.bargeIns);
  expect(r.notIdleAfterStop).toBe(0);
  expect(r.leakedAfterStop).toEqual([]);
  expect(r.openSocketsAfterStop).toBe(0);
  // Each session's capture and playback processors stop with it (else they run, and stay, until the
  // context closes): only the page's own recorder node is left. The page's closures keep the last session.
  expect(workletNodes).toBe(1);
  expect(sessions).toBeLessThanOrEqual(1);
  expect(r.serverOpenAfterStop).toEqual({ stt: 0, tts: 0, llmOpen: 0, llmActive: 0 });
  // Flat across the session restart: ~13 barge-ins between the samples; a leak of even one reply's audio (≥ 100 kB) each would show.
  expect(heapDeltaBytes).toBeLessThan(1_000_000);
});
