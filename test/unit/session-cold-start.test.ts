/**
 * Listening before the VAD's model is ready (`vad.waitForModel: false`, issue #41), on the
 * public fakes: fakeSession's `modelLoading` starts the session with its VAD's model still
 * loading, as the browser's VadWorker does while its level fallback judges the frames, and
 * `user.vad.modelLoaded()` is the worker's `ready`. The level fallback and the hand-over inside
 * the worker are tested on their own (test/unit/level-voice.test.ts) and in Chromium
 * (test/browser/cold-start.spec.ts).
 */
import { describe, expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import type { InterruptionEvent, SessionErrorEvent, SessionStateEvent, VadEvent } from "../../src/index.js";
import { AssetLoadError } from "../../src/index.js";

/** A session on the fakes, its model still loading, half a second into a long reply. */
async function storyPlaying({ modelLoadsWhileBotSpeaks = false } = {}) {
  const t = fakeSession({ modelLoading: true, replies: ["one two three four five six seven eight nine ten"] });
  const log = record(t.session);
  await t.session.start();
  await t.user.says("tell me a story");
  await t.waitForState("bot_speaking");
  if (modelLoadsWhileBotSpeaks) t.user.vad.modelLoaded();
  await t.waitForReply();
  await t.player.play(500);
  return { t, log };
}

function record(session: ReturnType<typeof fakeSession>["session"]) {
  const states: SessionStateEvent[] = [];
  const vad: VadEvent[] = [];
  const interruptions: InterruptionEvent[] = [];
  const errors: SessionErrorEvent[] = [];
  session.on("state", (e) => states.push(e));
  session.on("vad", (e) => vad.push(e));
  session.on("interruption", (e) => interruptions.push(e));
  session.on("error", (e) => errors.push(e));
  return { states, vad, interruptions, errors };
}

describe("before the VAD's model is ready", () => {
  test("start() resolves and the session listens, degraded; a question asked at once is answered whole, still degraded", async () => {
    const t = fakeSession({ modelLoading: true, replies: ["It is sunny."] });
    const log = record(t.session);
    await t.session.start();
    expect(t.session.state).toBe("listening");
    expect(t.session.degraded).toBe(true);
    expect(log.states[1]).toEqual({ state: "listening", previous: "connecting", degraded: true });
    // The level fallback's utterance (the fake VAD's events) ends the turn as the model's would.
    await t.user.says("what is the weather like today");
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    await t.player.play();
    await t.waitForState("listening");
    expect(t.session.history.map((m) => [m.role, m.text])).toEqual([
      ["user", "what is the weather like today"],
      ["assistant", "It is sunny."],
    ]);
    expect(log.states.map((e) => [e.state, e.degraded])).toEqual([
      ["connecting", false],
      ["listening", true],
      ["user_speaking", true],
      ["bot_thinking", true],
      ["bot_speaking", true],
      ["listening", true],
    ]);
    expect(log.vad.filter((e) => e.kind === "ready")).toEqual([]);
    await t.session.stop();
    expect(t.session.degraded).toBe(false);
  });

  test("the `vad` ready event comes after the session stopped being degraded: a handler reading `degraded` reads false", async () => {
    const t = fakeSession({ modelLoading: true });
    const seen: boolean[] = [];
    t.session.on("vad", (e) => e.kind === "ready" && seen.push(t.session.degraded));
    await t.session.start();
    // Listening with no state change to come: the ready event is the app's only cue (the demo's loading bar stayed up).
    t.user.vad.modelLoaded();
    expect(seen).toEqual([false]);
    await t.session.stop();
  });

  test("the STT service's end of turn ends it: the session asks the VAD to end its utterance once quiet, as with the model", async () => {
    const t = fakeSession({ modelLoading: true, replies: ["Sure."] });
    await t.session.start();
    t.user.startSpeaking();
    await t.user.word("book");
    await t.user.word("a");
    await t.user.word("table");
    t.stt.endOfTurn();
    await new Promise((r) => setTimeout(r, 0));
    expect(t.user.vad.endRequests).toEqual([100]);
    await t.user.stopSpeaking(); // the fallback's end, asked for early
    await t.waitForState("bot_thinking");
    expect(t.session.history[0]).toMatchObject({ role: "user", text: "book a table" });
    expect(t.session.degraded).toBe(true);
    await t.session.stop();
  });

  test("over the bot, the fallback's speech pauses it but its real start and its end confirm nothing: the bot plays on", async () => {
    const { t, log } = await storyPlaying();
    // A cough, a door, the bot's own echo: loud past minSpeechMs, no words.
    const pausedAtRealStart: boolean[] = [];
    t.session.on("vad", (e) => e.kind === "speechRealStart" && pausedAtRealStart.push(t.player.paused));
    await t.user.noise(400);
    expect(pausedAtRealStart).toEqual([true]); // paused at the fallback's speech start, and held through its real start
    expect(log.interruptions).toEqual([]);
    expect(t.player.paused).toBe(false); // its end: the bot plays on
    expect(t.session.state).toBe("bot_speaking");
    await t.player.play();
    expect(t.session.history.at(-1)).toMatchObject({ role: "assistant", interrupted: false });
    await t.session.stop();
  });

  test("over the bot, the user's words confirm the interruption (reason `words`), while degraded", async () => {
    const t = fakeSession({ modelLoading: true, replies: ["one two three four five six seven eight nine ten", "Okay."] });
    const log = record(t.session);
    await t.session.start();
    await t.user.says("tell me a story");
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    await t.player.play(500);
    await t.user.says("stop");
    expect(log.interruptions.map((e) => e.reason)).toEqual(["words"]);
    await t.waitForState("bot_thinking");
    expect(t.session.history.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["tell me a story", "stop"]);
    await t.session.stop();
  });

  test("a model that fails to load is an error event, not fatal: the session goes on, degraded", async () => {
    const t = fakeSession({ modelLoading: true, replies: ["Yes."] });
    const log = record(t.session);
    await t.session.start();
    const failure = new AssetLoadError("VAD could not load /dist/silero_vad_v5.onnx: HTTP 404", { service: "vad", url: "/dist/silero_vad_v5.onnx" });
    t.user.vad.modelFailed(failure);
    expect(log.errors).toEqual([{ error: failure, fatal: false }]);
    expect(t.session.state).toBe("listening");
    expect(t.session.degraded).toBe(true);
    await t.user.says("are you there");
    await t.waitForState("bot_thinking");
    await t.session.stop();
  });
});

describe("the model takes over", () => {
  test("inside an utterance: the turn is neither cut nor doubled; one message, one reply; `vad` ready once, then no longer degraded", async () => {
    const t = fakeSession({ modelLoading: true, replies: ["It is sunny."] });
    const log = record(t.session);
    await t.session.start();
    t.user.startSpeaking();
    await t.user.word("what");
    await t.user.word("is");
    t.user.vad.modelLoaded(1234, 0);
    expect(t.session.degraded).toBe(false);
    expect(t.session.state).toBe("user_speaking");
    await t.user.word("the");
    await t.user.word("weather");
    await t.user.stopSpeaking();
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    await t.player.play();
    await t.waitForState("listening");
    expect(t.session.history.map((m) => [m.role, m.text])).toEqual([
      ["user", "what is the weather"],
      ["assistant", "It is sunny."],
    ]);
    expect(log.vad.filter((e) => e.kind === "ready")).toEqual([{ kind: "ready", loadMs: 1234, contextTime: 0 }]);
    // No state event for the hand-over itself: the user kept the floor through it.
    expect(log.states.map((e) => [e.state, e.degraded])).toEqual([
      ["connecting", false],
      ["listening", true],
      ["user_speaking", true],
      ["bot_thinking", false],
      ["bot_speaking", false],
      ["listening", false],
    ]);
    expect(t.llm.requests).toHaveLength(1);
    await t.session.stop();
  });

  test("then the VAD's real start confirms a barge-in again, as it did not while degraded", async () => {
    const { t, log } = await storyPlaying({ modelLoadsWhileBotSpeaks: true });
    await t.user.noise(400);
    expect(log.interruptions.map((e) => e.reason)).toEqual(["speech"]);
    await t.session.stop();
  });

  test("a model ready before the session listens (a warm start): not degraded from the first `listening`, no `ready` event", async () => {
    const t = fakeSession({ replies: ["Hi."] });
    const log = record(t.session);
    await t.session.start();
    expect(log.states[1]).toEqual({ state: "listening", previous: "connecting", degraded: false });
    expect(t.session.degraded).toBe(false);
    expect(log.vad).toEqual([]);
    await t.session.stop();
  });
});
