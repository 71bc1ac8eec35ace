/**
 * turn.detector through a whole VoiceSession on the public fakes: the VAD's
 * `turnPrediction` (here emitted by the test as the worker would, right after
 * the utterance's speechEnd) decides the hold; a verdict-less one is a warning
 * and the words decide. The model itself runs in the worker: the browser
 * tests (vad.spec, session.spec) run a real one.
 */
import { describe, expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import { sleep } from "../lib/wait.mjs";

const userTexts = (history: readonly { role: string; text: string }[]) => history.filter((m) => m.role === "user").map((m) => m.text);

/** After each speechEnd, the VAD's verdict on it (what the worker posts after running the model). */
function verdictAfterEachEnd(rig: ReturnType<typeof fakeSession>, verdict: { probability?: number; error?: string }) {
  rig.user.vad.on("speechEnd", (e) => rig.user.vad.emit("turnPrediction", { ...verdict, inferenceMs: 12, contextTime: e.contextTime }));
}

describe("session: turn.detector", () => {
  test("a finished sentence the model calls unfinished is held, and what the user says next joins it: one turn, one reply", async () => {
    const rig = fakeSession({ replies: ["Sure."], turn: { detector: { module: "unused-with-fakes.js", holdMs: 400 } } });
    const verdicts: number[] = [];
    rig.session.on("vad", (e) => e.kind === "turnPrediction" && verdicts.push(e.probability));
    await rig.session.start();
    verdictAfterEachEnd(rig, { probability: 0.2 });
    await rig.user.says("what time is it");
    await sleep(150);
    expect(rig.session.state).toBe("user_speaking");
    expect(userTexts(rig.session.history)).toEqual([]);
    await rig.user.says("in tokyo");
    await rig.waitForState("bot_speaking");
    expect(userTexts(rig.session.history)).toEqual(["what time is it in tokyo"]);
    expect(verdicts).toEqual([0.2, 0.2]);
    await rig.session.stop();
  });

  test("unfinished words the model calls over are answered at once, not held", async () => {
    const rig = fakeSession({ replies: ["Sure."], turn: { detector: { module: "unused-with-fakes.js" }, holdUnfinished: { holdMs: 5000 } } });
    await rig.session.start();
    verdictAfterEachEnd(rig, { probability: 0.9 });
    await rig.user.says("take me to the");
    await rig.waitForState("bot_thinking", 1000);
    expect(userTexts(rig.session.history)).toEqual(["take me to the"]);
    await rig.session.stop();
  });

  test("a verdict-less prediction (the model threw) is a warning naming the turn detector; the words decide, the session goes on", async () => {
    const rig = fakeSession({ replies: ["Sure."], turn: { detector: { module: "unused-with-fakes.js", holdMs: 5000 } } });
    const warnings: string[] = [];
    rig.session.on("warning", (w) => warnings.push(`${w.service}: ${w.message}`));
    await rig.session.start();
    verdictAfterEachEnd(rig, { error: "predict() threw: out of memory" });
    await rig.user.says("what time is it");
    await rig.waitForState("bot_thinking", 1000);
    expect(warnings).toEqual(["vad: the turn detector gave no verdict on the last utterance (predict() threw: out of memory); its words decide the turn"]);
    expect(userTexts(rig.session.history)).toEqual(["what time is it"]);
    await rig.session.stop();
  });
});
