/**
 * Five VoiceSessions at once in one page, on the reference backend (real STT, flite TTS, the scripted
 * LLM) over loopback, with the page's main thread busy 50 ms of every 60 ms for 30 s. The uplink's
 * policy holds: no frame leaves older than the budget, a frame handed over past it ends the stream by
 * `age` (never by bytes) and the session reconnects, and a session that did not overload hears its
 * question and keeps it in the history. How often sessions overload at this load is a rate, measured
 * by `npm run bench -- uplink-busy` (bench/uplink-busy.bench.mjs). The measurements of where a frame's
 * time went (the main thread's delivery delay, the queue's wait for the socket, timer lateness) are
 * printed with the result, so a failure says which part fell behind.
 *
 * A slow link still overloads as documented: uplink.spec.ts (the "end"
 * policy's reconnect) and uplink-demo.spec.ts (`rate_bps=2000`).
 */
import { DEFAULTS } from "../../src/defaults";
import { expect, test } from "./backend-per-worker";
import { openPage } from "./open-page";

const TOO_OFTEN = "OverloadError: stt: the uplink fell behind its latency budget too often; check the network or raise uplink.budgetMs";

// The session judges each frame's age from its capture (the main thread's delivery included), so a page
// frozen for longer than the budget overloads here (README, "Uplink").

test("five healthy sessions, then the main thread busy 50 ms of every 60 ms for 30 s: frames past the budget end a stream by age only, each session reconnects and keeps its question", async ({ page }) => {
  test.setTimeout(240_000);
  page.on("console", (m) => m.text().startsWith("uplink-busy:") && console.log(m.text()));
  await openPage(page, "/test/browser/pages/uplink/uplink-busy.html", "uplinkBusyReady");
  // UPLINK_BUDGET_MS: measure another budget than the default (by hand, not in CI).
  const uplink = process.env.UPLINK_BUDGET_MS ? { budgetMs: Number(process.env.UPLINK_BUDGET_MS) } : {};
  const r = await page.evaluate((uplink) => (window as any).uplinkBusy.busySessions({ sessions: 5, durationMs: 30000, busyMs: 50, periodMs: 60, uplink }), uplink);
  console.log(JSON.stringify({ timers: r.timers, delivery: r.delivery, busyFraction: r.busyFraction, sessions: r.sessions.map((s: any) => ({ overloads: s.overloads, uplink: s.uplink, socket: s.socket, transcripts: s.transcripts, users: s.users, states: s.states, vad: s.vad, interruptions: s.interruptions, warnings: s.warnings })) }));
  // The load was real: the page's main thread was held for much of the run, and its timers ran late. (The
  // share is the generator's, not a behaviour: it aims at 50 of every 60 ms, and on a machine busier than
  // the page its next slice starts late, so the share it reaches falls: 0.57 with two CPU burners.)
  expect(r.busyFraction).toBeGreaterThan(0.4);
  expect(r.timers.lateMsMax).toBeGreaterThan(30);
  // How often frames age past the budget depends on how busy the machine is besides this page (another
  // test, a CI neighbour): that is a rate, for `npm run bench -- uplink-busy`. What holds under any load
  // is the policy: a frame handed over older than the budget ends the stream by `age` (the documented
  // answer, README "Uplink"), never by the queue's bytes; the session reconnects once per overload; and
  // nothing else goes wrong. The probe's count of frames handed over past the budget is printed above.
  for (const s of r.sessions) {
    for (const o of s.overloads) expect(o.reason, JSON.stringify(o)).toBe("age");
    // The reconnect policy's answer to overloads that come too often: once an episode's retries
    // (DEFAULTS.reconnect.delaysMs) are spent, the next overload is fatal, named as such. A machine busier
    // than the page (two CPU burners) gets there; then the last overload opened no new socket.
    const gaveUp = s.errors.length > 0;
    if (gaveUp) {
      expect(s.errors).toEqual([TOO_OFTEN]);
      expect(s.overloads.length).toBeGreaterThan(DEFAULTS.reconnect.delaysMs.length);
    }
    expect(s.socket.connections).toBe(1 + s.overloads.length - (gaveUp ? 1 : 0));
    if (s.overloads.length === 0) {
      expect(s.warnings.filter((w: string) => /fell behind/.test(w))).toEqual([]);
      expect(s.uplink.admissionRejects).toBe(0);
    }
    // The uplink carried the audio, and it was judged by its capture time. A session that overloaded lost
    // the audio of each reconnect, and a busier machine overloads more often (a CI run with two CPU burners
    // alongside sent 2 s of one session's 30): how much is the bench's business, not this test's.
    // (sentSamples is the live stream's: the one the last overload opened may have sent nothing yet, so a
    // session that overloaded is judged by the most any of its streams carried.)
    expect(s.overloads.length ? Math.max(s.uplink.sentSamplesMax, s.uplink.sentSamples ?? 0) : s.uplink.sentSamples).toBeGreaterThan(s.overloads.length ? 0 : 24000 * 25);
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
