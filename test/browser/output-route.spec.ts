// audio.outputRoute "webrtc-loopback" in real Chromium: the bot's audio goes
// through two RTCPeerConnections in the page into an <audio> element (the
// output Chromium's echo canceller takes as its reference). Recorded in the
// same AudioContext from the element's track: the sound arrives, what the
// route adds between render and the element is measured against the route's
// own estimate, and a pause still silences it (a pause's quantum plus the
// loopback). Whether the canceller then removes the bot in a real room is not
// testable here (no speakers): README, "Open speakers".
import { expect, test } from "./backend-per-worker";
import { openPage } from "./open-page";

test("the player through the WebRTC loopback: heard, its latency estimated, a pause silences it", async ({ page }) => {
  await openPage(page, "/test/browser/pages/audio/loopback.html", "loopbackReady");
  const r = await page.evaluate(() => (window as any).loopback.run({ count: 4 }));
  console.log(`loopback: open ${r.openMs.toFixed(0)} ms, estimate ${r.estimateMs.toFixed(1)} ms, measured ${r.results.map((x: any) => `${x.latencyMs?.toFixed(1)}/${x.pauseToQuietMs?.toFixed(1)}`).join(" ")} (latency/pause→quiet ms)`);
  expect(r.results).toHaveLength(4);
  for (const x of r.results) {
    // Every tone came out of the element, and its pause silenced it.
    expect(x.latencyMs).not.toBeNull();
    expect(x.pauseToQuietMs).not.toBeNull();
    // A loopback on one machine: the jitter buffer and an Opus packet. A sanity bound only: on a loaded
    // machine the jitter buffer grows (CI saw 263 ms); what the route adds is the estimate's business, below.
    expect(x.latencyMs).toBeGreaterThan(0);
    expect(x.latencyMs).toBeLessThan(1000);
    // The pause silenced the element's stream, one loopback after it acted in the worklet. A sanity bound, as
    // for the latency: the loopback at the pause is not the one measured at the tone's start (WebRTC's jitter
    // buffer moves on a loaded machine: 37 ms at the start, then quiet 104 ms after the pause), and the
    // pause's own speed (within a quantum) is the player's tests' and the bargein bench's business.
    expect(x.pauseToQuietMs).toBeLessThan(1000);
  }
  // The route's own estimate (from WebRTC's stats, read once, between two tones) is what the route adds:
  // within 40 ms of the span of latencies the recording showed. On a loaded machine the jitter buffer
  // moves between tones (121, 131, 291 ms in one run, with the estimate read at 197 ms), so the estimate
  // is held to the range it was read in, not to one tone's figure.
  const measured = r.results.map((x: any) => x.latencyMs as number);
  expect(r.estimateMs).toBeGreaterThan(Math.min(...measured) - 40);
  expect(r.estimateMs).toBeLessThan(Math.max(...measured) + 40);
  expect(r.elementPaused).toBe(true);
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});

test("a session with audio.outputRoute \"webrtc-loopback\": the reply comes out of the loopback's element, and stop() closes both connections and the element", async ({ page }) => {
  await openPage(page, "/test/browser/pages/audio/loopback.html", "loopbackReady");
  const r = await page.evaluate(() => (window as any).loopback.session());
  expect(r.errors).toEqual([]);
  expect(r.turns).toBeGreaterThanOrEqual(1);
  expect(r.history[0].text).toMatch(/help/);
  expect(r.history[1].role).toBe("assistant");
  expect(r.history[1].text.length).toBeGreaterThan(5);
  // The bot was heard through the element (the reference TTS speaks at a peak of ~0.3–0.9).
  expect(r.peak).toBeGreaterThan(0.1);
  expect(r.connections).toEqual(["closed", "closed"]);
  expect(r.elements).toEqual([{ paused: true, source: "none" }]);
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});
