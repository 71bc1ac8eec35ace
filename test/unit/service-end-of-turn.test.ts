/**
 * turn.serviceEndOfTurn: the STT service's own end of turn (Deepgram Flux
 * EndOfTurn, AssemblyAI end_of_turn) ends the user's turn once the VAD is
 * quiet, without waiting for vad.redemptionMs; a turn it ends is not held for
 * unfinished words. The pure machine (turn-machine.ts), its option
 * (turn-end.ts), and a whole session on the public fakes.
 */
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { serviceEndOfTurnOf, turnEndPolicyOf } from "../../src/session/turn-end.js";
import { holdOf, type TurnConfig, type TurnEvent } from "../../src/session/turn-machine.js";
import { fakeSession } from "../../src/testing/index.js";
import { BASE_CONFIG, effectKinds, runTurns } from "./turn-machine-helpers.js";
import { sleep } from "../lib/wait.mjs";

const CONFIG: TurnConfig = { ...BASE_CONFIG, turnEnd: turnEndPolicyOf(true), serviceEndOfTurn: { quietMs: 100 } };
const said = (...words: string[]): TurnEvent[] => [
  { kind: "listen" },
  { kind: "speechStart", pausedByWorker: false, at: 0, contextTime: 1 },
  ...words.map((text, i): TurnEvent => ({ kind: "word", text, at: 100 * (i + 1) })),
];

describe("the turn machine: sttEndOfTurn", () => {
  test("inside the VAD's utterance: the VAD is asked to end it once quiet 100 ms; its speechEnd ends the turn, and the flush answers it", () => {
    const asked = runTurns([...said("what", "time", "is", "it"), { kind: "sttEndOfTurn", eager: false, at: 600 }], undefined, CONFIG);
    expect(asked.effects.at(-1)).toEqual({ kind: "endVadWhenQuiet", quietMs: 100 });
    expect(asked.state.phase).toBe("user_speaking");
    const ended = runTurns([{ kind: "speechEnd", at: 700, voiceEnd: 1.5 }, { kind: "turnFlushed", missed: false, at: 750 }], asked.state, CONFIG);
    expect(effectKinds(ended.effects)).toEqual(["endUserTurn", "addUserMessage", "fence", "state:bot_thinking", "startReply"]);
    expect(ended.effects[0]).toEqual({ kind: "endUserTurn", voiceEnd: 1.5 });
  });

  test("a turn the service ended on \"to\" is answered at once: not held for unfinished words", () => {
    const { state } = runTurns([...said("i", "want", "to"), { kind: "sttEndOfTurn", eager: false, at: 600 }, { kind: "speechEnd", at: 700 }], undefined, CONFIG);
    const flushed = runTurns([{ kind: "turnFlushed", missed: false, at: 750 }], state, CONFIG);
    expect(holdOf(flushed.state.turn)).toBeUndefined();
    expect(flushed.effects).toContainEqual({ kind: "addUserMessage", text: "i want to" });
    // Without the service's word, the same turn is held 700 ms.
    const alone = runTurns([...said("i", "want", "to"), { kind: "speechEnd", at: 700 }, { kind: "turnFlushed", missed: false, at: 750 }], undefined, CONFIG);
    expect(holdOf(alone.state.turn)).toBe(1450);
    expect(effectKinds(alone.effects)).not.toContain("addUserMessage");
  });

  test("a turn held for unfinished words is answered when the service ends it, before the hold is over", () => {
    const held = runTurns([...said("i", "want", "to"), { kind: "speechEnd", at: 700 }, { kind: "turnFlushed", missed: false, at: 750 }], undefined, CONFIG);
    const { effects, state } = runTurns([{ kind: "sttEndOfTurn", eager: false, at: 900 }], held.state, CONFIG);
    expect(effects).toContainEqual({ kind: "addUserMessage", text: "i want to" });
    expect(state.phase).toBe("bot_thinking");
    expect(holdOf(state.turn)).toBeUndefined();
  });

  test("ignored: an eager end, no words yet, the bot's floor, push-to-talk, or the option off", () => {
    const kinds = (events: TurnEvent[], config = CONFIG) => effectKinds(runTurns(events, undefined, config).effects);
    const eot: TurnEvent = { kind: "sttEndOfTurn", eager: false, at: 600 };
    expect(kinds([...said("what", "time"), { kind: "sttEndOfTurn", eager: true, at: 600 }])).not.toContain("endVadWhenQuiet");
    expect(kinds([...said(), eot])).not.toContain("endVadWhenQuiet");
    expect(kinds([...said("what", "time"), eot], { ...CONFIG, pushToTalk: true })).not.toContain("endVadWhenQuiet");
    expect(kinds([...said("what", "time"), eot], { ...CONFIG, serviceEndOfTurn: undefined })).not.toContain("endVadWhenQuiet");
    const speaking = runTurns([...said("hello"), { kind: "speechEnd", at: 700 }, { kind: "turnFlushed", missed: false, at: 750 }, { kind: "replyAudible", generation: 1 }], undefined, CONFIG);
    expect(effectKinds(runTurns([eot], speaking.state, CONFIG).effects)).toEqual([]);
  });

  test("the service hears the user go on (TurnResumed): the turn is held for unfinished words again", () => {
    const { state } = runTurns([...said("i", "want", "to"), { kind: "sttEndOfTurn", eager: false, at: 600 }, { kind: "sttTurnResumed" }, { kind: "speechEnd", at: 900 }, { kind: "turnFlushed", missed: false, at: 950 }], undefined, CONFIG);
    expect(holdOf(state.turn)).toBe(1650);
  });
});

describe("turn.serviceEndOfTurn", () => {
  test("on by default with 100 ms of quiet; { quietMs } sets it; false turns it off; a bad value is a ConfigError naming it", () => {
    expect(serviceEndOfTurnOf(undefined)).toEqual({ quietMs: 100 });
    expect(serviceEndOfTurnOf({ quietMs: 200 })).toEqual({ quietMs: 200 });
    expect(serviceEndOfTurnOf(false)).toBeUndefined();
    expect(() => serviceEndOfTurnOf({ quietMs: -5 })).toThrow(/turn\.serviceEndOfTurn\.quietMs/);
    expect(() => fakeSession({ turn: { serviceEndOfTurn: "yes" as never } })).toThrow(ConfigError);
  });

  test("a whole session: the service's end of turn asks the VAD to end the utterance, and a turn ending on \"to\" is answered without the 700 ms hold", async () => {
    const rig = fakeSession({ replies: ["Sure."] });
    await rig.session.start();
    rig.user.startSpeaking();
    for (const w of ["i", "want", "to"]) await rig.user.word(w);
    rig.stt.endOfTurn();
    await sleep(20);
    expect(rig.user.vad.endRequests).toEqual([100]);
    const ended = performance.now();
    await rig.user.stopSpeaking();
    await rig.waitForState("bot_thinking");
    expect(performance.now() - ended).toBeLessThan(500);
    expect(rig.session.history.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["i want to"]);
    await rig.session.stop();
  });
});
