/**
 * Listening before the VAD's model is ready (issue #41), in Chromium on the real parts: the
 * capture worklet, the VAD worker with its level fallback, the reference backend's STT, LLM and
 * TTS. The model's response is held by a route, so Silero cannot be ready, and a question said
 * right after `listening` must still be answered, whole, with the session degraded throughout.
 * Released, the model takes over: `vad` ready, no longer degraded, and the next question is
 * Silero's. The sizes and times of a cold start on a throttled link are the coldstart bench's.
 */
import { expect, test } from "./backend-per-worker";

const QUESTION = ["weather", "like", "today"];

test("a question said right after `listening`, with the model held back, is answered whole on the level fallback; released, the model takes over", async ({ page }) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const modelRequests: string[] = [];
  // The VAD worker's fetch of the model waits here: the wasm comes, the model does not.
  await page.route("**/dist/silero_vad_v5.onnx", async (route) => {
    modelRequests.push(route.request().url());
    await held;
    await route.continue();
  });
  await page.goto("/test/browser/pages/session/session.html");
  await page.waitForFunction(() => (window as any).sessionPageReady);
  const early = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ sessionOptions: { vad: { waitForModel: false } } });
    const states: Array<{ state: string; degraded: boolean }> = [];
    const ready: Array<{ loadMs: number; contextTime: number; state: string }> = [];
    t.session.on("state", (e: any) => states.push({ state: e.state, degraded: e.degraded }));
    t.session.on("vad", (e: any) => e.kind === "ready" && ready.push({ loadMs: e.loadMs, contextTime: e.contextTime, state: t.session.state }));
    (window as any).cold = { t, states, ready };
    await t.session.start();
    const afterStart = { state: t.session.state, degraded: t.session.degraded };
    // Said at once: the first words come within 0.1 s of `listening` (the fixture's 0.5 s of lead-in, less).
    await t.say("weather-question", { fromOnset: true });
    await until(() => t.log.turns.length >= 1, 40000, "the first reply's turn report");
    await until(() => t.session.state === "listening", 20000, "listening after the first reply");
    return {
      afterStart,
      degraded: t.session.degraded,
      history: JSON.parse(JSON.stringify(t.session.history)),
      states: [...states],
      ready: [...ready],
      vad: [...t.log.vad],
      errors: [...t.log.errors],
      modelProgress: t.log.progress.model ?? null,
      wasmLoaded: t.log.progress.wasm?.loaded ?? 0,
    };
  });
  const said = `history ${JSON.stringify(early.history)}; vad ${early.vad.join(",")}; errors ${JSON.stringify(early.errors)}`;
  expect(early.errors, said).toEqual([]);
  expect(early.afterStart).toEqual({ state: "listening", degraded: true });
  // The model never arrived: its request is held, no byte of it came, and Silero never took over.
  expect(modelRequests).toHaveLength(1);
  expect(early.modelProgress?.loaded ?? 0).toBe(0);
  expect(early.ready).toEqual([]);
  expect(early.degraded).toBe(true);
  // One question, whole, in one user message, and one reply to it, heard to its end.
  expect(early.history.map((m: { role: string }) => m.role), said).toEqual(["user", "assistant"]);
  const heard = early.history[0].text.toLowerCase().split(/\s+/);
  for (const word of QUESTION) expect(heard, said).toContain(word);
  expect(early.history[1].interrupted).toBe(false);
  expect(early.history[1].text.split(" ").length).toBeGreaterThan(3);
  // Degraded in every state the turn went through; the VAD's events came from the fallback.
  expect(early.states.map((s: { state: string }) => s.state).slice(0, 6)).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening"]);
  expect(early.states.slice(1).every((s: { degraded: boolean }) => s.degraded)).toBe(true);
  expect(early.vad).toContain("speechStart");
  expect(early.vad).toContain("speechEnd");

  release();
  const late = await page.evaluate(async () => {
    const { until } = (window as any).sessionPage;
    const { t, states, ready } = (window as any).cold;
    await until(() => ready.length === 1, 30000, "the VAD's ready");
    const degradedAtReady = t.session.degraded;
    const before = states.length;
    await t.say("help-me", { fromOnset: true });
    await until(() => t.log.turns.length >= 2, 40000, "the second reply's turn report");
    await until(() => t.session.state === "listening", 20000, "listening after the second reply");
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { degradedAtReady, ready: [...ready], after: states.slice(before), history, errors: [...t.log.errors], model: t.log.progress.model };
  });
  expect(late.errors).toEqual([]);
  expect(late.ready).toHaveLength(1);
  expect(late.ready[0].state).toBe("listening");
  expect(late.ready[0].loadMs).toBeGreaterThan(0);
  // The fallback judged the audio up to there: the hand-over's place on the audio clock.
  expect(late.ready[0].contextTime).toBeGreaterThan(0);
  expect(late.degradedAtReady).toBe(false);
  expect(late.model.loaded).toBe(late.model.total);
  expect(late.after.slice(0, 4).map((s: { state: string }) => s.state)).toEqual(["user_speaking", "bot_thinking", "bot_speaking", "listening"]);
  expect(late.after.slice(0, 4).every((s: { degraded: boolean }) => !s.degraded)).toBe(true);
  expect(late.history.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  expect(late.history[2].text.toLowerCase()).toContain("help");
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});
