// The VAD worker in real Chromium: Silero through onnxruntime-web's wasm in a
// module worker, under the strict CSP, on known audio from test/fixtures/vad/
// (made by scripts/make-vad-fixtures.mjs, onsets labelled there).
import { readFileSync } from "node:fs";
import { expect, test, type Page } from "./backend-per-worker";
// @ts-ignore: a plain ESM module shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";
import { openPage } from "./open-page";

// This file's tests are independent of each other: they spread over the workers (it is one of the
// slowest files, and run as a whole it was the suite's tail).
test.describe.configure({ mode: "parallel" });

// measureUserAgentSpecificMemory answers at once with this flag (otherwise at
// the next GC, up to 20 s later); --expose-gc lets the page collect first.
test.use({
  launchOptions: {
    executablePath: CHROMIUM_PATH,
    args: testChromiumArgs({ args: ["--enable-blink-features=ForceEagerMeasureMemory"], jsFlags: ["--expose-gc"] }),
  },
});

const FRAME = 512;

interface VadEventRecord {
  kind: string;
  sampleIndex: number;
  probability?: number;
  audioLength?: number;
  audioStartIndex?: number;
  message?: string;
  lastSpeechSampleIndex?: number;
  error?: string;
  inferenceMs?: number;
  audioSamples?: number;
}
interface Label {
  utterances: { onsetSample: number; offsetSample: number; text: string }[];
}

async function openVadPage(page: Page): Promise<void> {
  await openPage(page, "/test/browser/pages/vad/vad.html", "vadReady");
}

const feed = (page: Page, name: string, options: object = {}) =>
  page.evaluate(([n, o]) => (window as any).vadTest.feedFixture(n, o), [name, options] as const) as Promise<{
    label: Label;
    events: VadEventRecord[];
    loadMs: number;
    progress: { model: any; wasm: any; count: number };
  }>;

const ofKind = (events: VadEventRecord[], kind: string) => events.filter((e) => e.kind === kind);

test.describe("VadWorker", () => {
  test.beforeEach(async ({ page }) => openVadPage(page));

  for (const name of ["speech-slt", "speech-rms", "speech-two"]) {
    test(`${name}: speech starts within 2 frames of the labelled onset, and each utterance ends once`, async ({ page }) => {
      const { label, events } = await feed(page, name, { speechEndAudio: true });
      const starts = ofKind(events, "speechStart");
      const ends = ofKind(events, "speechEnd");
      expect(ofKind(events, "error")).toEqual([]);
      expect(ofKind(events, "misfire")).toEqual([]);
      expect(starts).toHaveLength(label.utterances.length);
      expect(ends).toHaveLength(label.utterances.length);
      label.utterances.forEach((u, i) => {
        // The frame that fired ends no more than 2 frames before or after the onset.
        const frameEnd = starts[i].sampleIndex + FRAME;
        expect(Math.abs(frameEnd - u.onsetSample), `${u.text}: fired on frame ${starts[i].sampleIndex}, onset ${u.onsetSample}`).toBeLessThanOrEqual(2 * FRAME);
        expect(starts[i].probability).toBeGreaterThanOrEqual(0.3);
        // speechEnd comes after the labelled end of speech plus most of redemptionMs (1400 ms).
        expect(ends[i].sampleIndex).toBeGreaterThan(u.offsetSample + 1000 * 16);
        // Its audio covers the utterance, the pre-speech pad (800 ms = 25 frames) included.
        expect(ends[i].audioStartIndex).toBe(starts[i].sampleIndex - 25 * FRAME);
        expect(ends[i].audioLength).toBe(ends[i].sampleIndex + FRAME - ends[i].audioStartIndex!);
      });
      // speechRealStart: after minSpeechMs (400 ms = 12 speech frames) of speech.
      const realStarts = ofKind(events, "speechRealStart");
      expect(realStarts).toHaveLength(label.utterances.length);
      realStarts.forEach((r, i) => expect(r.sampleIndex).toBeGreaterThanOrEqual(starts[i].sampleIndex + 11 * FRAME));
    });
  }

  for (const name of ["silence", "noise-white", "noise-pink"]) {
    test(`${name}: no speech events at all`, async ({ page }) => {
      const { events } = await feed(page, name);
      expect(events).toEqual([]);
    });
  }

  test("endWhenQuiet(100) after the speech: the utterance ends 100 ms into its quiet, not redemptionMs (1400) later, and once", async ({ page }) => {
    const label: Label = JSON.parse(readFileSync(new URL("../fixtures/vad/speech-slt.json", import.meta.url), "utf8"));
    const u = label.utterances[0];
    const { events } = await feed(page, "speech-slt", { endWhenQuiet: { atSample: u.offsetSample + 16 * 150, quietMs: 100 } });
    const ends = ofKind(events, "speechEnd");
    expect(ends).toHaveLength(1);
    expect(ofKind(events, "misfire")).toEqual([]);
    // Asked 150 ms after the labelled end of speech, it ended on the next frame or so: within 250 ms, not 1,400.
    expect(ends[0].sampleIndex).toBeGreaterThan(u.offsetSample);
    expect(ends[0].sampleIndex - u.offsetSample, `ended ${(ends[0].sampleIndex - u.offsetSample) / 16} ms after the labelled end`).toBeLessThan(16 * 400);
  });

  test("noticeQuiet(96): speechQuiet 96 ms into the quiet after the speech, naming its last speech frame, before the speechEnd redemptionMs later; a quiet the voice breaks is followed by speechResumed", async ({ page }) => {
    const { label, events } = await feed(page, "speech-slt", { noticeQuiet: 96, redemptionMs: 600 });
    const u = label.utterances[0];
    const kinds = events.filter((e) => e.kind !== "probability").map((e) => e.kind);
    expect(kinds[0]).toBe("speechStart");
    expect(kinds.at(-1)).toBe("speechEnd");
    // Every quiet inside the utterance (a sentence's pause) is broken by the voice; the last one is not.
    const quiets = ofKind(events, "speechQuiet");
    expect(quiets.length).toBeGreaterThanOrEqual(1);
    expect(ofKind(events, "speechResumed")).toHaveLength(quiets.length - 1);
    expect(kinds.filter((k) => k === "speechQuiet" || k === "speechResumed").at(-1)).toBe("speechQuiet");
    const last = quiets.at(-1)!;
    const end = ofKind(events, "speechEnd")[0];
    // The last speech frame it names is the speechEnd's; the quiet is 3 frames (96 ms) past it, the end 600 ms.
    expect(Math.abs(last.lastSpeechSampleIndex! - u.offsetSample), "last speech frame vs the labelled end").toBeLessThanOrEqual(4 * FRAME);
    expect(last.sampleIndex - last.lastSpeechSampleIndex!).toBe(3 * FRAME);
    expect(end.lastSpeechSampleIndex).toBe(last.lastSpeechSampleIndex);
    expect(end.sampleIndex - last.sampleIndex).toBe((Math.floor(600 / 32) - 3) * FRAME);
  });

  test("turnDetector: the app's module runs a real ONNX model on each utterance's audio in the worker, and its verdict follows that utterance's speechEnd", async ({ page }) => {
    const module = "/test/browser/pages/turn-detector/silero-tail-detector.js";
    const { events } = await feed(page, "speech-slt", { turnDetector: { module }, speechEndAudio: true, redemptionMs: 600 });
    const kinds = events.filter((e) => e.kind === "speechEnd" || e.kind === "turnPrediction").map((e) => e.kind);
    expect(kinds.length).toBeGreaterThanOrEqual(2);
    // One verdict per utterance, each right after its speechEnd.
    expect(kinds).toEqual(kinds.map((_, i) => (i % 2 === 0 ? "speechEnd" : "turnPrediction")));
    const ends = ofKind(events, "speechEnd");
    const verdicts = ofKind(events, "turnPrediction");
    verdicts.forEach((v, i) => {
      expect(v.error).toBeUndefined();
      expect(v.lastSpeechSampleIndex).toBe(ends[i].lastSpeechSampleIndex);
      // The whole utterance (pad, speech, the quiet that ended it), up to 8 s: the same audio speechEnd carries.
      expect(v.audioSamples).toBe(Math.min(ends[i].audioLength!, 8 * 16000));
      // Silero on the utterance's last frame, the silence that ended it: a low speech probability, so "over".
      expect(v.probability!).toBeGreaterThan(0.5);
      expect(v.inferenceMs!).toBeGreaterThan(0);
    });
    // A verdict the module fixes is passed on as it is.
    const fixed = await feed(page, "speech-slt", { turnDetector: { module, options: { fixed: 0.125 } }, redemptionMs: 600 });
    expect(ofKind(fixed.events, "turnPrediction").map((v) => v.probability)).toEqual(ofKind(fixed.events, "speechEnd").map(() => 0.125));
  });

  test("turnDetector failures: a missing or wrong module fails start() naming it; a predict() that throws gives a verdict-less turnPrediction and the VAD goes on", async ({ page }) => {
    const fail = (options: object) => page.evaluate((o) => (window as any).vadTest.startFailure(o), options);
    const missing = await fail({ turnDetector: { module: "/test/browser/pages/turn-detector/missing.js" } });
    expect(missing.name).toBe("AssetLoadError");
    expect(missing.url).toMatch(/turn-detector\/missing\.js$/);
    expect(missing.message).toMatch(/turn detector module .*missing\.js could not be imported/);
    expect(missing.state).toBe("stopped");
    const noExport = await fail({ turnDetector: { module: "/test/browser/pages/vad/fixtures.js" } });
    expect(noExport.message).toMatch(/does not export a createTurnDetector/);
    const create = await fail({ turnDetector: { module: "/test/browser/pages/turn-detector/silero-tail-detector.js", options: { fail: "create" } } });
    expect(create.message).toMatch(/failed in createTurnDetector: test detector told to fail at create/);
    const { events } = await feed(page, "speech-slt", { turnDetector: { module: "/test/browser/pages/turn-detector/silero-tail-detector.js", options: { fail: "predict" } }, redemptionMs: 600 });
    const verdicts = ofKind(events, "turnPrediction");
    expect(verdicts.length).toBe(ofKind(events, "speechEnd").length);
    for (const v of verdicts) {
      expect(v.probability).toBeUndefined();
      expect(v.error).toMatch(/predict\(\) threw: test detector told to fail at predict/);
    }
    expect(ofKind(events, "error")).toEqual([]);
  });

  test("pause() drops the utterance in progress and ignores frames until resume()", async ({ page }) => {
    const dropped = await page.evaluate(() => (window as any).vadTest.pauseResume({}));
    expect(dropped.events).toEqual(["speechStart", "speechRealStart", "-- paused", "-- resumed", "speechStart", "speechRealStart", "speechEnd"]);
    // After resume the model starts fresh: the second onset is found where it is.
    expect(Math.abs(dropped.starts[1] + FRAME - dropped.secondOnset)).toBeLessThanOrEqual(2 * FRAME);
    // submitUserSpeechOnPause: the utterance in progress ends at the pause instead.
    const submitted = await page.evaluate(() => (window as any).vadTest.pauseResume({ submitUserSpeechOnPause: true }));
    expect(submitted.events).toEqual(["speechStart", "speechRealStart", "-- paused", "speechEnd", "-- resumed", "speechStart", "speechRealStart", "speechEnd"]);
  });

  test("v6 and legacy models load and find the same utterance", async ({ page }) => {
    for (const model of ["v6", "legacy"]) {
      const { label, events, progress } = await feed(page, "speech-slt", { model });
      expect(progress.model.url).toContain(model === "v6" ? "silero_vad_v6.onnx" : "silero_vad_legacy.onnx");
      const starts = ofKind(events, "speechStart");
      expect(starts.length, model).toBeGreaterThanOrEqual(1);
      expect(Math.abs(starts[0].sampleIndex + FRAME - label.utterances[0].onsetSample), model).toBeLessThanOrEqual(3 * FRAME);
    }
  });

  test("start() reports load progress in bytes for the model and the wasm, and loads nothing else", async ({ page }) => {
    const requests: string[] = [];
    page.on("request", (r) => requests.push(new URL(r.url()).pathname));
    const { progress } = await feed(page, "silence");
    expect(progress.model.loaded).toBe(2327524);
    expect(progress.model.total).toBe(2327524);
    expect(progress.wasm.loaded).toBe(14239897);
    expect(progress.wasm.total).toBe(14239897);
    expect(progress.count).toBeGreaterThan(4);
    // The worker's own fetches are seen too: only our files, from our origin (no CDN, no .mjs glue).
    expect(requests.filter((p) => p.startsWith("/dist/")).sort()).toEqual([
      "/dist/ort-wasm-simd-threaded.wasm",
      "/dist/silero_vad_v5.onnx",
      "/dist/vad-worker.js",
    ]);
    expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
  });

  test("a missing or wrong asset rejects start() with AssetLoadError naming the URL", async ({ page }) => {
    const missing = await page.evaluate(() => (window as any).vadTest.startFailure({ assetsPath: "/test/fixtures/vad/" }));
    expect(missing.name).toBe("AssetLoadError");
    expect(missing.url).toMatch(/\/test\/fixtures\/vad\/vad-worker\.js$/);
    expect(missing.state).toBe("stopped");
    const fail = (options: object) => page.evaluate((o) => (window as any).vadTest.startFailure(o), options);
    const notFound = await fail({ assetsPath: "/dist/", modelUrl: "silero_vad_v9.onnx" });
    expect(notFound).toMatchObject({ name: "AssetLoadError", state: "stopped" });
    expect(notFound.url).toMatch(/\/dist\/silero_vad_v9\.onnx$/);
    expect(notFound.message).toContain("404");
    // Files that exist but are not what they claim to be.
    const notAModel = await fail({ assetsPath: "/dist/", modelUrl: "/test/fixtures/vad/silence.wav" });
    expect(notAModel.name).toBe("AssetLoadError");
    expect(notAModel.url).toMatch(/\/test\/fixtures\/vad\/silence\.wav$/);
    const notWasm = await fail({ assetsPath: "/dist/", wasmUrl: "/test/fixtures/vad/silence.json" });
    expect(notWasm.name).toBe("AssetLoadError");
    expect(notWasm.url).toMatch(/\/test\/fixtures\/vad\/silence\.json$/);
    expect(notWasm.message).toContain("not a WebAssembly file");
    expect(await page.evaluate(() => (window as any).vadTest.registry)).toMatchObject({ created: 4, terminated: 4 });
  });

  test("invalid options throw ConfigError naming the option", async ({ page }) => {
    const cases = await page.evaluate(() =>
      [
        { assetsPath: "" },
        { assetsPath: "/dist/", model: "v7" },
        { assetsPath: "/dist/", positiveSpeechThreshold: 1.5 },
        { assetsPath: "/dist/", positiveSpeechThreshold: 0.3, negativeSpeechThreshold: 0.5 },
        { assetsPath: "/dist/", redemptionMs: -1 },
      ].map((o) => (window as any).vadTest.configError(o)),
    );
    expect(cases.map((c: any) => c.name)).toEqual(Array(5).fill("ConfigError"));
    expect(cases[0].message).toContain("assetsPath");
    expect(cases[1].message).toContain("model");
    expect(cases[2].message).toContain("positiveSpeechThreshold");
    expect(cases[3].message).toContain("negativeSpeechThreshold");
    expect(cases[4].message).toContain("redemptionMs");
  });

  test("frames from another thread reach the worker without the main thread: only speech events arrive", async ({ page }) => {
    const run = (meter: boolean) =>
      page.evaluate((m) => (window as any).vadTest.streamFixture("speech-two", { meter: m }), meter) as Promise<{
        frames: number;
        events: VadEventRecord[];
        messages: number;
      }>;
    const quiet = await run(false);
    expect(quiet.frames).toBe(231);
    // Two utterances: start, real start, end each, and not one message more.
    expect(quiet.events.map((e) => e.kind)).toEqual([
      "speechStart", "speechRealStart", "speechEnd", "speechStart", "speechRealStart", "speechEnd",
    ]);
    expect(quiet.messages).toBe(6);
    // With the meter on: probabilities at most every 100 ms of audio (every 4th 32 ms frame).
    const metered = await run(true);
    const probabilities = ofKind(metered.events, "probability");
    expect(probabilities.length).toBe(Math.ceil(231 / 4));
    expect(probabilities[1].sampleIndex - probabilities[0].sampleIndex).toBe(4 * FRAME);
    expect(metered.messages).toBe(probabilities.length + 6);
  });
});

test("the real capture worklet feeds the worker directly: onset within 2 frames, only speech events on the main thread", async ({ page }) => {
  await openVadPage(page);
  for (const name of ["speech-slt", "speech-rms"]) {
    const r = await page.evaluate((n) => (window as any).vadTest.captureFixture(n), name);
    const starts = r.events.filter((e: any) => e.kind === "speechStart");
    expect(starts, name).toHaveLength(1);
    // Mapped back to the fixture (by where the returned utterance audio lines
    // up with it, which takes in the MediaStream hop's varying latency): frame
    // end vs the labelled onset.
    expect(r.correlation, `${name}: the worker's utterance audio matches the fixture`).toBeGreaterThan(0.9);
    const frameEnd = starts[0].fixtureSampleIndex + FRAME;
    expect(Math.abs(frameEnd - r.label.utterances[0].onsetSample), `${name} at ${r.contextRate} Hz`).toBeLessThanOrEqual(2 * FRAME);
    expect(r.events.map((e: any) => e.kind)).toEqual(["speechStart", "speechRealStart", "speechEnd"]);
    // About 160 frames went worklet → worker; the main thread got the 3 events and nothing else.
    expect(r.messages).toBe(3);
  }
});

test("armed auto-pause posts pause on speech start and resume on the misfire that follows", async ({ page }) => {
  await openVadPage(page);
  // The level cue off: this is the speech start's own pause (the cue is the next test's).
  const run = (options: object) => page.evaluate((o) => (window as any).vadTest.autoPause("speech-slt", { onsetPause: false, ...o }), options);
  // minSpeechMs longer than the utterance: it ends as a misfire, so playback resumes.
  const misfire = await run({ minSpeechMs: 5000 });
  expect(misfire.events.map((e: any) => e.kind)).toEqual(["speechStart", "misfire"]);
  expect(misfire.events[0].pausedPlayback).toBe(true);
  expect(misfire.events[1].resumedPlayback).toBe(true);
  expect(misfire.commands).toEqual([
    { kind: "pause", token: 1, sampleIndex: misfire.events[0].sampleIndex },
    { kind: "resume", token: 1, sampleIndex: misfire.events[1].sampleIndex },
  ]);
  // A real utterance: pause, and no resume (the session confirms the interruption).
  const confirmed = await run({});
  expect(confirmed.events.map((e: any) => e.kind)).toEqual(["speechStart", "speechEnd"]);
  expect(confirmed.commands).toEqual([{ kind: "pause", token: 1, sampleIndex: confirmed.events[0].sampleIndex }]);
  // Disarmed (the bot is not speaking): nothing is posted.
  const disarmed = await run({ armed: false, minSpeechMs: 5000 });
  expect(disarmed.events[0].pausedPlayback).toBe(false);
  expect(disarmed.commands).toEqual([]);
});

test("the onset cue pauses on the utterance's rise, at or before Silero's speech start, and that speech keeps the pause", async ({ page }) => {
  await openVadPage(page);
  const run = (options: object) => page.evaluate((o) => (window as any).vadTest.autoPause("speech-slt", o), options);
  const cued = await run({ minSpeechMs: 5000 });
  expect(cued.events.map((e: any) => e.kind)).toEqual(["speechStart", "misfire"]);
  expect(cued.events[0].pausedPlayback).toBe(true);
  // One pause, on a frame no later than the speech start's, and one resume, at the misfire.
  expect(cued.commands.map((c: any) => c.kind)).toEqual(["pause", "resume"]);
  expect(cued.commands[0].sampleIndex).toBeLessThanOrEqual(cued.events[0].sampleIndex);
  expect(cued.commands[1].sampleIndex).toBe(cued.events[1].sampleIndex);
  const speechStartOnly = await run({ minSpeechMs: 5000, onsetPause: false });
  console.log(`onset cue: paused at sample ${cued.commands[0].sampleIndex}, speech start at ${speechStartOnly.events[0].sampleIndex}`);
  expect(speechStartOnly.commands[0].sampleIndex).toBe(speechStartOnly.events[0].sampleIndex);
});

// 15 cycles: a leak of one model (2 MB) per cycle shows in 10; the memory
// measurement forces a GC each time and is slow, so more belongs in a bench.
test("15 start/stop cycles leave no worker and no memory growth behind", async ({ page }) => {
  test.setTimeout(90_000);
  await openVadPage(page);
  const result = await page.evaluate(() => (window as any).vadTest.cycles(15, 5));
  expect(result.registry.created).toBe(15);
  expect(result.registry.terminated).toBe(15);
  expect(result.isolated).toBe(true);
  // While one ran, the measurement saw its memory; after the last stop, none is left.
  expect(result.live.vadBytes).toBeGreaterThan(1_000_000);
  expect(result.end.vadBytes).toBe(0);
  // The page's own heap does not grow with cycles (10 cycles after warm-up).
  expect(result.end.bytes - result.warm.bytes).toBeLessThan(1_000_000);
});
