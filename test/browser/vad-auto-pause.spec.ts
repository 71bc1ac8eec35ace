// The VAD worker's auto-pause acting on a real Player, recorded to the sample
// in the same AudioContext. Its pause carries the token (playback generation)
// it was armed with, so it holds only that generation. On a crossOriginIsolated
// page the worker writes the player's shared control block itself (no message
// on its port); with `?isolated=0` it posts to the player's control port.
import { expect, test, type Page } from "./backend-per-worker";
import { openPage } from "./open-page";

// This file's tests are independent of each other: they spread over the workers (it is one of the
// slowest files, and run as a whole it was the suite's tail).
test.describe.configure({ mode: "parallel" });

const TRANSPORTS = [
  { name: "shared", query: "" },
  { name: "port", query: "?isolated=0" },
] as const;

async function open(page: Page, query: string) {
  await openPage(page, `/test/browser/pages/vad/auto-pause.html${query}`, "autoPauseReady");
}

const run = (page: Page, options: object) => page.evaluate((o) => (window as any).autoPause.run(o), options);

for (const { name, query } of TRANSPORTS) {
  test.describe(`auto-pause over the ${name} transport`, () => {
    test("the worker pauses the generation it was armed for on speech start and resumes it on the misfire, losing no sample", async ({ page }) => {
      await open(page, query);
      const r = await run(page, { g: 3, token: 3, minSpeechMs: 5000 });
      expect(r.transport).toBe(name);
      expect(r.events).toEqual([
        { kind: "speechStart", pausedPlayback: true, pauseToken: 3 },
        { kind: "misfire", resumedPlayback: true, pauseToken: 3 },
      ]);
      // Held while the speech lasted: paused, and not one sample rendered.
      expect(r.duringSpeech.state).toBe("paused");
      expect(r.duringSpeech.later).toBe(r.duringSpeech.position);
      expect(r.afterSpeech.state).toBe("playing");
      expect(r.fadeOuts).toBe(1);
      expect(r.fadeIns).toBe(1);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
      // The shared block was written directly: nothing went through the port.
      expect(r.portMessages).toBe(0);
    });

    test("speech over the bot that nothing vouches for: the pause lapses in its quiet and renews on its next word, losing no sample", async ({ page }) => {
      await open(page, query);
      const r = await page.evaluate(() => (window as any).autoPause.lapse({ g: 3 }));
      const kinds = r.events.map((e: any) => (e.kind === "pauseLapse" ? (e.lapsed ? "lapse" : "renew") : e.kind));
      expect(kinds).toEqual(["speechStart", "lapse", "renew", "lapse", "misfire"]);
      expect(r.events.filter((e: any) => e.kind === "pauseLapse").map((e: any) => e.pauseToken)).toEqual([3, 3, 3]);
      // Paused during each word, playing in each quiet: the bot is silent only while there is sound to doubt.
      expect(r.states).toEqual([
        { state: "paused", moving: false },
        { state: "playing", moving: true },
        { state: "paused", moving: false },
        { state: "playing", moving: true },
      ]);
      expect(r.fadeOuts).toBe(2);
      expect(r.fadeIns).toBe(2);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
    });

    test("the onset cue's pause (action pause): a bump pauses the bot and lets it play on; a bump before speech pauses it for that speech; nothing lost", async ({ page }) => {
      await open(page, query);
      const r = await page.evaluate(() => (window as any).autoPause.onset({ g: 3 }));
      expect(r.events).toEqual([
        { kind: "onsetPause", action: "pause", paused: true, pauseToken: 3 },
        { kind: "onsetPause", action: "release", paused: false, pauseToken: 3 },
        { kind: "onsetPause", action: "pause", paused: true, pauseToken: 3 },
        // Silero's speech start keeps the cue's pause: no release, and the misfire resumes it.
        { kind: "speechStart", pausedPlayback: true, pauseToken: 3 },
        { kind: "misfire", resumedPlayback: true, pauseToken: 3 },
      ]);
      expect(r.states.map((s: any) => `${s.what}: ${s.state}${s.moving ? ", moving" : ""}`)).toEqual([
        "bump: paused",
        "after the bump: playing, moving",
        "speech: paused",
        "after the speech: playing, moving",
      ]);
      expect(r.fadeOuts).toBe(2);
      expect(r.fadeIns).toBe(2);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
    });

    test("the onset cue's duck (the default): a bump plays the bot on 12 dB softer, then at full level again; nothing held, nothing lost", async ({ page }) => {
      await open(page, query);
      const r = await page.evaluate(() => (window as any).autoPause.duck({ g: 3 }));
      expect(r.events).toEqual([
        { kind: "onsetPause", action: "duck", paused: true, pauseToken: 3 },
        { kind: "onsetPause", action: "release", paused: false, pauseToken: 3 },
      ]);
      // Never paused: the bot moved on through the bump.
      expect(r.states).toEqual([
        { what: "bump", state: "playing", moving: true },
        { what: "after the bump", state: "playing", moving: true },
      ]);
      // Every sample written was rendered once, in step: at full gain, then one ramp down, the duck's gain
      // (from the bump until the worker took the quiet after it, and its quick release), one ramp up, and
      // full gain to the end. How long the duck stands turns on when the test feeds the quiet, so its length
      // is read only as at least the quick release; its shape says it let go.
      expect(r.walked).toBe(r.written);
      expect(r.runs).toEqual(["full", "ramp", "ducked", "ramp", "full"]);
      expect(r.other).toBe(0);
      expect(r.ramp).toBeLessThanOrEqual(2 * r.fade);
      expect(r.ducked).toBeGreaterThan(0.05 * r.rate);
      expect(r.full + r.ducked + r.ramp).toBe(r.written);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
    });

    test("a worker armed with an older generation's token pauses nothing of the one playing", async ({ page }) => {
      await open(page, query);
      const r = await run(page, { g: 3, token: 2 });
      expect(r.events.map((e: any) => e.kind)).toEqual(["speechStart", "speechEnd"]);
      expect(r.events[0]).toEqual({ kind: "speechStart", pausedPlayback: true, pauseToken: 2 });
      expect(r.duringSpeech.state).toBe("playing");
      expect(r.duringSpeech.later).toBeGreaterThan(r.duringSpeech.position);
      expect(r.fadeOuts).toBe(0);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
    });

    test("the worker's pause of a reply is void once the next reply is fenced: it plays in full with no resume", async ({ page }) => {
      await open(page, query);
      const r = await run(page, { g: 3, token: 3, next: true });
      expect(r.events.map((e: any) => e.kind)).toEqual(["speechStart", "speechEnd"]);
      expect(r.events[0].pauseToken).toBe(3);
      expect(r.duringSpeech.state).toBe("paused");
      expect(r.duringSpeech.later).toBe(r.duringSpeech.position);
      expect(r.afterSpeech.state).toBe("paused"); // a confirmed utterance leaves the pause to the session
      expect(r.heard).toBe(true);
      expect(r.fadeOuts).toBe(0);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.ended).toBe(true);
      expect(r.endedSamples).toBe(r.written);
    });
  });
}
