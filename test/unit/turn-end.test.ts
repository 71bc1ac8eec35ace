/**
 * The end of a turn by its words (turn.holdUnfinished, src/session/turn-end.ts):
 * the turn machine holds a flushed turn whose last word leaves it unfinished,
 * lets the user go on in the same turn, answers it when the hold is over, and
 * answers a finished one at once. Driven synchronously, no timers.
 */
import { describe, expect, test } from "vitest";
import { CONTINUATION_WORDS_EN, looksUnfinished, turnEndPolicyOf } from "../../src/session/turn-end.js";
import { holdOf, INITIAL_TURN_STATE, type TurnConfig, type TurnEvent, type TurnState } from "../../src/session/turn-machine.js";
import { ConfigError } from "../../src/index.js";
import { fakeSession } from "../../src/testing/index.js";
import { BASE_CONFIG, effectKinds, runTurns } from "./turn-machine-helpers.js";

const POLICY = turnEndPolicyOf(true)!;
const CONFIG: TurnConfig = { ...BASE_CONFIG, turnEnd: POLICY };
const run = (events: TurnEvent[], state: TurnState = INITIAL_TURN_STATE, config = CONFIG) => runTurns(events, state, config);
const words = (text: string, from: number): TurnEvent[] => text.split(" ").map((w, i) => ({ kind: "word", text: w, at: from + 100 * i }));
/** Listening, then `text` said, its speech end, and the flush done at `flushedAt`. */
const said = (text: string, flushedAt = 1000, config = CONFIG) =>
  run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "speechRealStart", at: 200 }, ...words(text, 100), { kind: "speechEnd", at: 900 }, { kind: "turnFlushed", missed: false, at: flushedAt }], INITIAL_TURN_STATE, config);
const replies = (effects: ReturnType<typeof run>["effects"]) => effects.filter((e) => e.kind === "addUserMessage").map((e) => (e as { text: string }).text);

describe("looksUnfinished", () => {
  test("a last word that leaves the sentence open, lower-cased and without punctuation", () => {
    for (const text of ["i want to go to", "apples and", "can you tell me the", "um", "so I was thinking, Uh", "it's in my"]) expect(looksUnfinished(POLICY, text), text).toBe(true);
    for (const text of ["what is the weather like today", "turn on the lights", "stop", "yes please", "", "Paris."]) expect(looksUnfinished(POLICY, text), text).toBe(false);
  });

  test("another language's words replace the list", () => {
    const french = turnEndPolicyOf({ words: ["et", "le", "de"] })!;
    expect(looksUnfinished(french, "je voudrais du pain et")).toBe(true);
    expect(looksUnfinished(french, "i want to")).toBe(false);
    expect(CONTINUATION_WORDS_EN).toContain("and");
  });

  test("bad options are ConfigErrors naming turn.holdUnfinished", () => {
    expect(() => turnEndPolicyOf({ holdMs: -1 })).toThrow(/turn\.holdUnfinished\.holdMs/);
    expect(() => turnEndPolicyOf({ words: [1 as unknown as string] })).toThrow(/turn\.holdUnfinished\.words/);
    expect(() => fakeSession({ turn: { holdUnfinished: "yes" as never } })).toThrow(ConfigError);
    expect(turnEndPolicyOf(false)).toBeUndefined();
    expect(turnEndPolicyOf(undefined)).toBeUndefined();
  });
});

describe("the turn machine with turn.holdUnfinished", () => {
  test("a finished turn is answered at once, as without the policy", () => {
    const { effects } = said("what is the weather like today");
    expect(replies(effects)).toEqual(["what is the weather like today"]);
    expect(effects.some((e) => e.kind === "armTimer")).toBe(false);
  });

  test("an unfinished turn is held holdMs (700) after its flush; the user goes on, and it is one turn", () => {
    const held = said("i want to go to");
    expect(replies(held.effects)).toEqual([]);
    expect(holdOf(held.state.turn)).toBe(1700);
    expect(held.effects.at(-1)).toEqual({ kind: "armTimer", at: 1700 });
    expect(held.state.phase).toBe("user_speaking");
    const goesOn = run(
      [
        { kind: "speechStart", pausedByWorker: false, at: 1300 },
        { kind: "speechRealStart", at: 1500 },
        ...words("paris", 1400),
        // The old timer comes while the user speaks: nothing.
        { kind: "timer", at: 1700 },
        { kind: "speechEnd", at: 2200 },
      ],
      held.state,
    );
    expect(replies(goesOn.effects)).toEqual([]);
    expect(effectKinds(goesOn.effects)).toContain("endUserTurn");
    const answered = run([{ kind: "turnFlushed", missed: false, at: 2300 }], goesOn.state);
    expect(replies(answered.effects)).toEqual(["i want to go to paris"]);
    expect(holdOf(answered.state.turn)).toBeUndefined();
  });

  test("an unfinished turn with no more speech is answered when its hold is over, as it stands", () => {
    const held = said("can you tell me the");
    expect(replies(run([{ kind: "timer", at: 1699 }], held.state).effects)).toEqual([]);
    const answered = run([{ kind: "timer", at: 1700 }], held.state);
    expect(replies(answered.effects)).toEqual(["can you tell me the"]);
    expect(answered.state.phase).toBe("bot_thinking");
  });

  test("the STT's pause probability during the hold neither flushes again nor moves the hold", () => {
    const held = said("i want to go to");
    const paused = run([{ kind: "sttPause", probability: 0.95 }, { kind: "sttPause", probability: 0.99 }], held.state);
    expect(paused.effects).toEqual([]);
    expect(holdOf(paused.state.turn)).toBe(1700);
  });

  test("a cough in the hold (a misfire) keeps it: the timer is asked again and answers the turn", () => {
    const held = said("apples and");
    const cough = run([{ kind: "speechStart", pausedByWorker: false, at: 1200 }, { kind: "misfire", resumedByWorker: false }], held.state);
    expect(cough.effects.at(-1)).toEqual({ kind: "armTimer", at: 1700 });
    expect(replies(run([{ kind: "timer", at: 1700 }], cough.state).effects)).toEqual(["apples and"]);
  });

  test("speech already going on when the flush ends keeps the turn open, finished words or not", () => {
    const state = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, ...words("turn on the lights", 100), { kind: "speechEnd", at: 900 }, { kind: "speechStart", pausedByWorker: false, at: 950 }]).state;
    const flushed = run([{ kind: "turnFlushed", missed: false, at: 1000 }], state);
    expect(replies(flushed.effects)).toEqual([]);
    const more = run([...words("please", 1100), { kind: "speechEnd", at: 1600 }, { kind: "turnFlushed", missed: false, at: 1700 }], flushed.state);
    expect(replies(more.effects)).toEqual(["turn on the lights please"]);
  });

  test("a typed turn during the hold joins the held words, and the hold ends", () => {
    const held = said("i would like");
    const typed = run([{ kind: "text", text: "a coffee" }], held.state);
    expect(replies(typed.effects)).toEqual(["i would like a coffee"]);
    expect(holdOf(typed.state.turn)).toBeUndefined();
  });

  test("without the policy, or with push-to-talk, an unfinished turn is answered at once", () => {
    expect(replies(said("i want to go to", 1000, BASE_CONFIG).effects)).toEqual(["i want to go to"]);
    const ptt = { ...CONFIG, pushToTalk: true };
    const pushed = run([{ kind: "listen" }, { kind: "pushStart" }, ...words("i want to", 100), { kind: "pushEnd" }, { kind: "turnFlushed", missed: false, at: 500 }], INITIAL_TURN_STATE, ptt);
    expect(replies(pushed.effects)).toEqual(["i want to"]);
  });
});
