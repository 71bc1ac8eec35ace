// The playback worklet measured to the sample: a recorder node after the
// player, inside the same AudioContext, captures exactly what was rendered.
// Every scenario runs on both transports: the SharedArrayBuffer ring
// (crossOriginIsolated) and the MessagePort ring (`?isolated=0`).
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
  await openPage(page, `/test/browser/pages/audio/player.html${query}`, "audioReady");
}

const run = (page: Page, scenario: string, args: object = {}) =>
  page.evaluate(([s, a]) => (window as any).audio[s](a), [scenario, args] as const);

for (const { name, query } of TRANSPORTS) {
  test.describe(`player over the ${name} transport`, () => {
    test("flush: silence within 128 samples of the quantum that applies it, and the ring is empty", async ({ page }) => {
      await open(page, query);
      const r = await run(page, "flushes", { count: 6, seed: 11 });
      expect(r.transport).toBe(name);
      expect(r.results.filter((x: any) => x.audibleAtFlush).length).toBeGreaterThanOrEqual(5);
      for (const x of r.results) expect(x.afterApplied).toBeLessThanOrEqual(128);
      expect(r.states.every((s: string) => s === "idle")).toBe(true);
      expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
    });

    test("generation fence: no sample of an old generation after the new one starts, late writes refused", async ({ page }) => {
      await open(page, query);
      for (const flushFirst of [false, true]) {
        const r = await run(page, "fences", { count: 3, flushFirst, seed: 5 });
        expect(r.checked).toBe(3);
        expect(r.heardOld).toBe(3); // the old generation was playing when the new one came
        expect(r.stale).toBe(0);
        expect(r.staleAccepted).toBe(0);
        expect(r.dropped).toBeGreaterThan(0);
        expect(r.newRenderedInOrder).toBe(true);
      }
    });

    test("pause/resume from the main thread loses no sample and position() equals what was rendered", async ({ page }) => {
      await open(page, query);
      const r = await run(page, "pauses", { cycles: 6, seed: 21, via: "main" });
      expect(r.fadeOuts).toBeGreaterThanOrEqual(5);
      expect(r.fadeIns).toBe(r.fadeOuts);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.position).toBe(r.written);
      expect(r.endedSamples).toBe(r.written);
      expect(r.midCheck.position).toBe(r.midCheck.rendered);
      expect(r.midCheck.position).toBeGreaterThan(0);
    });

    test("pause/resume from a worker through the control port loses no sample", async ({ page }) => {
      await open(page, query);
      const r = await run(page, "pauses", { cycles: 4, seed: 8, via: "port" });
      expect(r.fadeOuts).toBeGreaterThanOrEqual(3);
      expect(r.mismatches).toBe(0);
      expect(r.lost).toBe(0);
    });

    // The race the pause tokens exist for: the VAD worker's pause (on its own
    // channel) landing after the session's resume and the next reply's fence.
    // On the shared transport the late command comes both ways the worker
    // may send it: the control port and the shared control block.
    const vias = name === "shared" ? (["port", "shared"] as const) : (["port"] as const);
    for (const via of vias) {
      const by = via === "shared" ? "the shared control block" : "a control port";
      test(`a pause that arrives after a resume and a new generation is ignored by its token (late pause through ${by})`, async ({ page }) => {
        await open(page, query);
        const r = await run(page, "latePause", { via });
        expect(r.transport).toBe(name);
        expect(r.started).toBe(true);
        expect(r.ended).toBe(true);
        expect(r.heardNew).toBe(true);
        // g + 1 plays in full: every sample as written, none held, none faded.
        expect(r.mismatches).toBe(0);
        expect(r.silenceInside).toBe(0);
        expect(r.endedSamples).toBe(r.written);
        expect(r.position).toBe(r.written);
        expect(r.state).toBe("idle");
      });

      test(`a stale resume (token g) does not lift a pause of g + 1 (stale resume through ${by})`, async ({ page }) => {
        await open(page, query);
        const r = await run(page, "staleResume", { via, holdMs: 250 });
        expect(r.transport).toBe(name);
        // Held through the stale resumes: nothing rendered, still paused.
        expect(r.stateHeld).toBe("paused");
        expect(r.heldFrom).toBeGreaterThan(0);
        expect(r.heldTo).toBe(r.heldFrom);
        expect(r.silence).toBeGreaterThanOrEqual(r.holdSamples);
        // One pause, lifted once by its own token, and no sample lost.
        expect(r.fadeOuts).toBe(1);
        expect(r.fadeIns).toBe(1);
        expect(r.mismatches).toBe(0);
        expect(r.lost).toBe(0);
        expect(r.ended).toBe(true);
        expect(r.endedSamples).toBe(r.written);
      });
    }

    test("s16 at 24 kHz is resampled, `started` names the first audible frame, position counts it all", async ({ page }) => {
      await open(page, query);
      const r = await run(page, "startedAndResample");
      const expected = Math.ceil((12000 * r.rate) / 24000);
      expect(Math.abs(r.accepted - expected)).toBeLessThanOrEqual(2);
      // The first non-zero sample is within the filter's ramp-in of the started frame.
      expect(r.firstAudibleFrame - r.startedFrame).toBeGreaterThanOrEqual(0);
      expect(r.firstAudibleFrame - r.startedFrame).toBeLessThan(64);
      expect(r.peak, `the tone's level (recorder gaps ${r.gaps}, underruns ${r.underruns})`).toBeGreaterThan(0.23);
      expect(r.peak).toBeLessThan(0.26);
      expect(r.position).toBe(r.endedSamples);
      expect(r.generation).toBe(7);
      expect(r.endedSamples).toBeGreaterThanOrEqual(r.accepted - 2);
    });
  });
}

test("pause/resume from a worker through the shared control block loses no sample", async ({ page }) => {
  await open(page, "");
  const r = await run(page, "pauses", { cycles: 4, seed: 9, via: "shared" });
  expect(r.transport).toBe("shared");
  expect(r.fadeOuts).toBeGreaterThanOrEqual(3);
  expect(r.mismatches).toBe(0);
  expect(r.lost).toBe(0);
});

test("a missing playback worklet fails with an AssetLoadError naming the URL", async ({ page }) => {
  await open(page, "");
  const r = await run(page, "missingWorklet");
  expect(r.name).toBe("AssetLoadError");
  expect(r.url).toMatch(/\/dist\/missing\/playback-worklet\.js$/);
  expect(r.message).toContain(r.url);
  expect(r.message).toContain("assetsPath");
});
