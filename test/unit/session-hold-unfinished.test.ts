/**
 * turn.holdUnfinished through a whole VoiceSession on the public fakes: a
 * turn that ends on "to" waits for the user to go on, and what they say next
 * joins it (one user message, one reply); with no more speech it is answered
 * when the hold is over; a finished turn is answered at once.
 */
import { describe, expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import { sleep } from "../lib/wait.mjs";

const userTexts = (history: readonly { role: string; text: string }[]) => history.filter((m) => m.role === "user").map((m) => m.text);

describe("session: turn.holdUnfinished", () => {
  test("\"i want to\", a pause, then \"go home\": one turn \"i want to go home\" and one reply", async () => {
    const rig = fakeSession({ replies: ["Sure.", "Again."], turn: { holdUnfinished: { holdMs: 400 } } });
    await rig.session.start();
    await rig.user.says("i want to");
    await sleep(150);
    expect(rig.session.state).toBe("user_speaking");
    expect(userTexts(rig.session.history)).toEqual([]);
    await rig.user.says("go home");
    await rig.waitForState("bot_speaking");
    await rig.player.play();
    expect(userTexts(rig.session.history)).toEqual(["i want to go home"]);
    expect(rig.session.history.filter((m) => m.role === "assistant")).toHaveLength(1);
    await rig.session.stop();
  });

  test("an unfinished turn with nothing more is answered once the hold is over, as it stands", async () => {
    const rig = fakeSession({ replies: ["Sure."], turn: { holdUnfinished: { holdMs: 300 } } });
    await rig.session.start();
    const ended = performance.now();
    await rig.user.says("can you tell me the");
    await rig.waitForState("bot_thinking");
    expect(performance.now() - ended).toBeGreaterThanOrEqual(290);
    expect(userTexts(rig.session.history)).toEqual(["can you tell me the"]);
    await rig.session.stop();
  });

  test("a finished turn is answered at once, well before the hold", async () => {
    const rig = fakeSession({ replies: ["Sure."], turn: { holdUnfinished: { holdMs: 2000 } } });
    await rig.session.start();
    const ended = performance.now();
    await rig.user.says("what time is it");
    await rig.waitForState("bot_thinking");
    expect(performance.now() - ended).toBeLessThan(1000);
    expect(userTexts(rig.session.history)).toEqual(["what time is it"]);
    await rig.session.stop();
  });
});
