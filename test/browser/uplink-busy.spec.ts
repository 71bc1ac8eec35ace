/**
 * Healthy sessions do not overload: five VoiceSessions at once in one page, on
 * the reference backend (real pocketsphinx STT, flite TTS, the scripted LLM)
 * over loopback, with the page's main thread busy 50 ms of every 60 ms. Over
 * the first 30 s none of them has an uplink `overload`, each still hears its
 * question, and no frame leaves older than the budget. The measurements of
 * where a frame's time went (the main thread's delivery delay, the queue's
 * wait for the socket, timer lateness) are printed with the result, so a
 * failure says which part fell behind.
 *
 * A slow link still overloads as documented: uplink.spec.ts (the "end"
 * policy's reconnect) and uplink-demo.spec.ts (`rate_bps=2000`).
 */
import { expect, test } from "@playwright/test";

// The session judges each frame's age from its capture (the main thread's delivery included), so a page
// frozen for longer than the budget would overload here (README, "Uplink"). On 2026-12-05, at this load,
// the main thread handed frames over at most 229 ms after their capture, and no session overloaded.

test("five healthy sessions, then the main thread busy 50 ms of every 60 ms for 30 s: no uplink overload, but for frames a frozen page handed over late", async ({ page }) => {
  test.setTimeout(240_000);
  page.on("console", (m) => m.text().startsWith("uplink-busy:") && console.log(m.text()));
  await page.goto("/test/browser/pages/uplink/uplink-busy.html");
  await page.waitForFunction(() => (window as any).uplinkBusyReady);
  // UPLINK_BUDGET_MS: measure another budget than the default (by hand, not in CI).
  const uplink = process.env.UPLINK_BUDGET_MS ? { budgetMs: Number(process.env.UPLINK_BUDGET_MS) } : {};
  const r = await page.evaluate((uplink) => (window as any).uplinkBusy.busySessions({ sessions: 5, durationMs: 30000, busyMs: 50, periodMs: 60, uplink }), uplink);
  console.log(JSON.stringify({ timers: r.timers, delivery: r.delivery, busyFraction: r.busyFraction, sessions: r.sessions.map((s: any) => ({ overloads: s.overloads, uplink: s.uplink, socket: s.socket, transcripts: s.transcripts, users: s.users, states: s.states, vad: s.vad, interruptions: s.interruptions, warnings: s.warnings })) }));
  // The load was real: the page's timers ran late.
  expect(r.busyFraction).toBeGreaterThan(0.6);
  expect(r.timers.lateMsMax).toBeGreaterThan(30);
  // Did the page itself freeze past the budget? Then it handed frames over already older than that, and
  // an `age` overload of those is the documented answer (README, "Uplink"), not the uplink falling
  // behind. A clean-clone CI run (2026-12-06) froze once for 528 ms (the probe's frames, beside the
  // sessions' own): four sessions overloaded at that moment, each for its one late frame.
  // The probe counts its frames handed over past the session's budget (`overBudget`).
  const frozen = r.delivery.mainThreadAgeMs.overBudget;
  const pageFroze = frozen > 0;
  for (const s of r.sessions) {
    expect(s.errors).toEqual([]);
    if (pageFroze) {
      // Only frames too old (late on arrival, or so nearly late that the next send found them past it),
      // one overload at most per frozen moment; never the queue's bytes.
      for (const o of s.overloads) expect(o.reason, JSON.stringify(o)).toBe("age");
      expect(s.overloads.length).toBeLessThanOrEqual(frozen);
      expect(s.socket.connections).toBe(1 + s.overloads.length);
    } else {
      expect(s.overloads).toEqual([]);
      expect(s.warnings.filter((w: string) => /fell behind/.test(w))).toEqual([]);
      expect(s.uplink.admissionRejects).toBe(0);
      expect(s.socket.connections).toBe(1);
    }
    // The uplink carried the audio, and it was judged by its capture time.
    expect(s.uplink.sentSamples).toBeGreaterThan(24000 * (s.overloads.length ? 15 : 25));
    expect(s.uplink.arrivalAgeMsMax).toBeGreaterThan(0);
    expect(s.uplink.oldestFrameAgeMsMax).toBeLessThanOrEqual(500);
    // The STT heard each session's question: the uplink carried it (a stream ended by an overload loses
    // what it had not transcribed yet), and the history keeps it. Under this load the STT's flush can time
    // out: its late words revise the last user message (a `revised` transcript, not a final one).
    if (s.overloads.length === 0) {
      expect(s.socket.heard.join(" ")).toMatch(/light|turn/i);
      expect(s.users.join(" ")).toMatch(/light|turn/i);
    }
  }
});
