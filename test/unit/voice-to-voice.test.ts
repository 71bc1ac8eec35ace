/**
 * voiceToVoiceMs: from the end of the user's last speech frame to the reply's
 * first sample heard, both on the AudioContext's clock (the VAD frame's and
 * the playback worklet's), so no main-thread timer sits in between. Here on
 * the public fakes (the FakeUser's VAD names its last speech frame, the
 * FakePlayer reports the first sample on the same FakeClock). The turn
 * machine's part (the voice's end carried from the VAD to the end of the
 * turn) is in test/unit/turn-machine.test.ts.
 */
import { describe, expect, test } from "vitest";
import type { TurnMetrics } from "../../src/index.js";
import { fakeSession } from "../../src/testing/index.js";
import { sleep } from "../lib/wait.mjs";

/** A fake session that has had one spoken turn, its reply heard to the end; `turns` collects the turn events. */
async function afterOneSpokenTurn(options: Parameters<typeof fakeSession>[0], redemptionMs = 0) {
  const rig = fakeSession(options);
  rig.user.redemptionMs = redemptionMs;
  const turns: TurnMetrics[] = [];
  rig.session.on("turn", (t) => turns.push(t));
  await rig.session.start();
  await rig.user.says("can you help me");
  await rig.waitForState("bot_speaking");
  await rig.player.play();
  return { ...rig, turns };
}

describe("session: voiceToVoiceMs on the turn event", () => {
  test("it counts the VAD's wait for silence and the output latency: 600 ms redemption + 40 ms output = 640 ms on the fake clock", async () => {
    const { session, turns } = await afterOneSpokenTurn({ replies: ["Sure."], outputLatency: 0.04 }, 600);
    expect(turns).toHaveLength(1);
    const [turn] = turns;
    expect(turn.voiceToVoiceMs).toBeCloseTo(640, 6);
    // Its parts: voice end → decision, then the decision-based figures.
    expect(turn.voiceEndToDecisionMs! + turn.speechEndToFirstAudibleMs!).toBeCloseTo(turn.voiceToVoiceMs!, 6);
    await session.stop();
  });

  test("a typed turn has no voice to measure from, and its clock starts at sendText(), not at the last spoken turn", async () => {
    const { session, player, waitForState, turns } = await afterOneSpokenTurn({ replies: ["Sure.", "Okay."] });
    // Real time passes between the turns: a stale clock would count it.
    await sleep(150);
    const typedAt = performance.now();
    session.sendText("what time is it");
    await waitForState("bot_speaking");
    const bound = performance.now() - typedAt;
    await player.play();
    expect(turns).toHaveLength(2);
    expect(turns[0].voiceToVoiceMs).toBeDefined();
    expect(turns[1].voiceToVoiceMs).toBeUndefined();
    expect(turns[1].speechEndToSttFinalMs).toBeUndefined();
    expect(turns[1].speechEndToFirstAudibleMs).toBeLessThanOrEqual(bound);
    await session.stop();
  });
});
