/**
 * turn.detector in the pure turn machine and its options: the model's verdict
 * on the utterance decides the hold instead of the last word, and a flush that
 * comes first waits for it (however slow the model is on a loaded machine: the
 * browser suite caught the race); a held turn it calls over is answered at once; a verdict is
 * about the utterance that ended (speech since clears it). Options are
 * checked with errors that name them.
 */
import { describe, expect, test } from "vitest";
import { holdOf, verdictOf, type TurnConfig, type TurnEvent } from "../../src/session/turn-machine.js";
import { holdMsFor, turnDetectorPolicyOf, turnEndPolicyOf } from "../../src/session/turn-end.js";
import { checkTurnDetectorOptions } from "../../src/vad/turn-detector.js";
import { checkSessionOptions } from "../../src/session/session-options.js";
import { BASE_CONFIG, effectKinds, runTurns } from "./turn-machine-helpers.js";

const CONFIG: TurnConfig = { ...BASE_CONFIG, turnEnd: turnEndPolicyOf(true), turnDetector: turnDetectorPolicyOf({ threshold: 0.5, holdMs: 900 }) };

/**
 * A user turn of `words`, its VAD end at 1000 ms, then `between` (the verdict, or none), then the flush at 1100 ms.
 * `verdictDue`: the VAD's end says the detector is judging the utterance (without it: no model loaded yet).
 */
function turn(words: string[], between: TurnEvent[], config = CONFIG, verdictDue = false) {
  return runTurns(
    [
      { kind: "listen" },
      { kind: "speechStart", pausedByWorker: false, at: 0 },
      ...words.map((text, i): TurnEvent => ({ kind: "word", text, at: 100 + i * 100 })),
      { kind: "speechEnd", at: 1000, verdictDue },
      ...between,
      { kind: "turnFlushed", missed: false, at: 1100 },
    ],
    undefined,
    config,
  );
}

describe("turn machine: turn.detector", () => {
  test("finished words the model calls unfinished are held for its holdMs, not answered", () => {
    const r = turn(["what's", "the", "weather"], [{ kind: "turnPredicted", at: 1050, probability: 0.2 }]);
    expect(effectKinds(r.effects)).not.toContain("startReply");
    expect(holdOf(r.state.turn)).toBe(1100 + 900);
    expect(r.effects.at(-1)).toEqual({ kind: "armTimer", at: 2000 });
  });

  test("unfinished words (\"…to the\") the model calls over are answered at once", () => {
    const r = turn(["take", "me", "to", "the"], [{ kind: "turnPredicted", at: 1050, probability: 0.9 }]);
    expect(effectKinds(r.effects)).toContain("startReply");
    expect(r.effects).toContainEqual({ kind: "addUserMessage", text: "take me to the" });
    expect(holdOf(r.state.turn)).toBeUndefined();
  });

  test("a verdict still due at the flush holds the turn for it: \"not over\" keeps the hold and the timer answers; \"over\" answers when it comes", () => {
    const waiting = turn(["what's", "the", "weather"], [], CONFIG, true);
    expect(effectKinds(waiting.effects)).not.toContain("startReply");
    expect(holdOf(waiting.state.turn)).toBe(1100 + 900);
    const notOver = runTurns([{ kind: "turnPredicted", at: 1300, probability: 0.1 }], waiting.state, CONFIG);
    expect(effectKinds(notOver.effects)).not.toContain("startReply");
    expect(effectKinds(runTurns([{ kind: "timer", at: 2000 }], notOver.state, CONFIG).effects)).toContain("startReply");
    const over = runTurns([{ kind: "turnPredicted", at: 1300, probability: 0.9 }], waiting.state, CONFIG);
    expect(effectKinds(over.effects)).toEqual(["addUserMessage", "fence", "state:bot_thinking", "startReply"]);
    expect(over.effects[0]).toEqual({ kind: "addUserMessage", text: "what's the weather" });
  });

  test("a verdict due that the detector could not give: the words decide then (answered on \"weather\", held on \"to\")", () => {
    const noVerdict: TurnEvent = { kind: "turnPredicted", at: 1300, probability: undefined };
    const finished = turn(["what's", "the", "weather"], [], CONFIG, true);
    expect(effectKinds(runTurns([noVerdict], finished.state, CONFIG).effects)).toContain("startReply");
    const unfinished = turn(["take", "me", "to"], [], CONFIG, true);
    const r = runTurns([noVerdict], unfinished.state, CONFIG);
    expect(effectKinds(r.effects)).not.toContain("startReply");
    expect(holdOf(r.state.turn)).toBe(1100 + 900);
  });

  test("a verdict that came before the flush is not waited for again", () => {
    const r = turn(["what's", "the", "weather"], [{ kind: "turnPredicted", at: 1050, probability: 0.9 }], CONFIG, true);
    expect(effectKinds(r.effects)).toContain("startReply");
  });

  test("no verdict due (no model loaded yet) and none by the flush: the last word decides (held on \"to\", answered on \"weather\")", () => {
    expect(holdOf(turn(["take", "me", "to"], []).state.turn)).toBe(1100 + 700);
    expect(effectKinds(turn(["what's", "the", "weather"], []).effects)).toContain("startReply");
  });

  test("a verdict of \"over\" during the hold answers the held turn then, with its words", () => {
    const held = turn(["take", "me", "to"], []);
    const r = runTurns([{ kind: "turnPredicted", at: 1200, probability: 0.7 }], held.state, CONFIG);
    expect(effectKinds(r.effects)).toEqual(["addUserMessage", "fence", "state:bot_thinking", "startReply"]);
    expect(r.effects[0]).toEqual({ kind: "addUserMessage", text: "take me to" });
  });

  test("a verdict of \"not over\" during the hold keeps it; the timer answers it", () => {
    const held = turn(["take", "me", "to"], []);
    const r = runTurns([{ kind: "turnPredicted", at: 1200, probability: 0.1 }, { kind: "timer", at: 1800 }], held.state, CONFIG);
    expect(effectKinds(r.effects)).toContain("startReply");
  });

  test("speech since the utterance ended: its verdict is dropped, the next utterance is judged afresh", () => {
    const r = turn(
      ["what's", "the", "weather"],
      [
        { kind: "turnPredicted", at: 1050, probability: 0.1 },
        { kind: "speechStart", pausedByWorker: false, at: 1060 },
        { kind: "speechEnd", at: 1080 },
      ],
    );
    // The stale "not over" no longer holds a turn whose words read as finished.
    expect(verdictOf(r.state.voice)).toBeUndefined();
    expect(effectKinds(r.effects)).toContain("startReply");
  });

  test("a verdict while the user speaks is ignored; without turn.detector verdicts do nothing", () => {
    const speaking = runTurns([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "turnPredicted", at: 10, probability: 0.1 }], undefined, CONFIG);
    expect(verdictOf(speaking.state.voice)).toBeUndefined();
    const off = turn(["what's", "the", "weather"], [{ kind: "turnPredicted", at: 1050, probability: 0.1 }], { ...CONFIG, turnDetector: undefined });
    expect(effectKinds(off.effects)).toContain("startReply");
  });

  test("the detector alone (holdUnfinished off) still holds what it calls unfinished", () => {
    const r = turn(["what's", "the", "weather"], [{ kind: "turnPredicted", at: 1050, probability: 0.3 }], { ...CONFIG, turnEnd: undefined });
    expect(holdOf(r.state.turn)).toBe(2000);
  });

  test("holdMsFor: the verdict, then the words", () => {
    const config = { turnEnd: turnEndPolicyOf(true), turnDetector: turnDetectorPolicyOf({}) };
    expect(holdMsFor(config, 0.49, "what time is it")).toBe(700);
    expect(holdMsFor(config, 0.5, "go to the")).toBeUndefined();
    expect(holdMsFor(config, undefined, "go to the")).toBe(700);
    expect(holdMsFor(config, "due", "what time is it")).toBe(700);
    expect(holdMsFor({ turnEnd: undefined }, undefined, "go to the")).toBeUndefined();
  });
});

describe("turn.detector options", () => {
  test("bad values fail with a ConfigError naming the option", () => {
    expect(() => turnDetectorPolicyOf({ threshold: 1.5 })).toThrow(/turn\.detector\.threshold.*0 to 1/);
    expect(() => turnDetectorPolicyOf({ holdMs: -1 })).toThrow(/turn\.detector\.holdMs/);
    expect(() => checkTurnDetectorOptions("VadWorker: `turnDetector`", { options: {} })).toThrow(/turnDetector` must be \{ module/);
    expect(() => checkTurnDetectorOptions("x", { module: "d.js", options: { f: () => 1 } })).toThrow(/x\.options must be an object of plain data/);
    expect(checkTurnDetectorOptions("x", { module: "d.js", options: { a: 1 } })).toEqual({ module: "d.js", options: { a: 1 } });
  });

  test("the session checks turn.detector at construction, and refuses it with realtime", () => {
    const stt = {} as never;
    expect(() => checkSessionOptions({ stt, llm: stt, tts: stt, turn: { detector: { module: "" } } } as never)).toThrow(/turn\.detector` must be \{ module/);
    expect(() => checkSessionOptions({ stt, llm: stt, tts: stt, turn: { detector: { module: "d.js", threshold: 2 } } } as never)).toThrow(/threshold/);
    expect(() => checkSessionOptions({ realtime: { stt, llm: stt, tts: stt }, turn: { detector: { module: "d.js" } } } as never)).toThrow(/realtime/);
  });
});
