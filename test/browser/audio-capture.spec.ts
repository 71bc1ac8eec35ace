// The capture path in real Chromium: the fake microphone through
// getUserMedia, and known clicks injected through `input` whose positions in
// the 16 kHz VAD frames and 24 kHz uplink frames are checked against the
// resampler's stated delay.
import { expect, test, type Page } from "./backend-per-worker";
import { openPage } from "./open-page";

async function open(page: Page, query = "") {
  await openPage(page, `/test/browser/pages/audio/capture.html${query}`, "audioReady");
}

const run = (page: Page, scenario: string, args: object = {}) =>
  page.evaluate(([s, a]) => (window as any).audio[s](a), [scenario, args] as const);

test("the fake microphone gives non-silent 16 kHz VAD frames of 512 samples, uplink frames and levels", async ({ page }) => {
  await open(page);
  const r = await run(page, "fakeMicrophone", { ms: 1200 });
  // ~1.2 s of 32 ms frames, minus start-up.
  expect(r.frames).toBeGreaterThanOrEqual(25);
  expect(r.kinds).toEqual(["vad-frame"]);
  expect(r.lengths).toEqual([512]);
  expect(r.types).toEqual(["Float32Array"]);
  expect(r.contiguous).toBe(true);
  expect(r.loudFrames).toBeGreaterThan(3); // Chromium's fake device beeps
  expect(r.uplinkLengths).toEqual([320]); // 20 ms at 16 kHz, s16
  expect(r.uplinkTypes).toEqual(["Int16Array"]);
  expect(r.uplinkFrames).toBeGreaterThanOrEqual(40);
  expect(r.levels).toBeGreaterThanOrEqual(15); // one per ~50 ms while the meter is on
  expect(r.maxLevel).toBeGreaterThan(0.01);
  expect(r.echoCancellation).toBe(true);
  expect(r.noiseSuppression).toBe(true);
  expect(r.autoGainControl).toBe(true);
  expect(r.trackStates).toEqual(["ended"]); // stop() released the device
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});

for (const query of ["", "?isolated=0"]) {
  test(`injected clicks land in the VAD and uplink frames at the resampler's stated delay${query}`, async ({ page }) => {
    await open(page, query);
    // Quanta the browser skipped are counted as silence by the capture and placed by frame by the recorder, but
    // on a loaded machine the two have seen different skips (CI, 2026-12-05: the capture one of 384 frames, the
    // recorder 4, and a click 140 samples off): a run the machine disturbed so measures the machine, not the
    // resampler's delay. Up to three runs; the first undisturbed one is judged (the last one if none is).
    let r: any;
    for (let attempt = 1; attempt <= 3; attempt++) {
      r = await run(page, "injectedClicks", { clicks: 4 });
      if (!r.gaps.length && !r.recorderGaps) break;
      console.log(`run ${attempt}: skipped quanta: capture ${JSON.stringify(r.gaps)}, recorder ${r.recorderGaps}`);
    }
    expect(r.uplinkLengths).toEqual([1920]); // 80 ms at 24 kHz, the Kyutai frame
    expect(r.vad.delaySeconds).toBeGreaterThan(0);
    for (const stream of [r.vad, r.uplink]) {
      expect(stream.peaks).toHaveLength(4);
      for (let i = 0; i < 4; i++) {
        // A click between two output samples peaks at the nearer one.
        expect(Math.abs(stream.peaks[i] - stream.expected[i])).toBeLessThanOrEqual(1);
      }
    }
  });
}

test("a missing capture worklet fails with an AssetLoadError naming the URL", async ({ page }) => {
  await open(page);
  const r = await run(page, "missingWorklet");
  expect(r.name).toBe("AssetLoadError");
  expect(r.url).toMatch(/\/nowhere\/capture-worklet\.js$/);
  expect(r.message).toContain(r.url);
});

test("a context that cannot run fails with an AudioContextError that says what to do", async ({ page }) => {
  await open(page);
  const r = await run(page, "closedContext");
  expect(r.name).toBe("AudioContextError");
  expect(r.message).toMatch(/closed.*new AudioContext/);
});
