// The reference backend's pure cores (demo/server/core/): word stability, utterance
// cutting, phrase cutting, send pacing and Flux's turns, each tested without audio, sockets or timers.
import { describe, expect, test } from "vitest";
import { rememberHypothesis, stableWordCount } from "../../demo/server/core/word-stability.mjs";
import { cutFrame, frameRms, initialCutterState, pauseProbabilities } from "../../demo/server/core/utterance-cutter.mjs";
import { appendText, nextPhrase } from "../../demo/server/core/phrase-cutter.mjs";
import { frameDueAt } from "../../demo/server/core/send-pacing.mjs";
import { forceEndTurn, initialTurnState, turnFrame, type TurnFrame, type TurnState } from "../../demo/server/core/flux-turns.mjs";

describe("word stability", () => {
  const feed = (hypotheses: string[][], frames = 4) => {
    let recent: string[][] = [];
    const counts: number[] = [];
    for (const h of hypotheses) {
      recent = rememberHypothesis(recent, h, frames);
      counts.push(stableWordCount(recent, frames, false));
    }
    return { recent, counts };
  };

  test("a word is stable once it and the word after it have held for 4 hypotheses", () => {
    const h = ["what", "is", "the"];
    const { counts } = feed([h, h, h, h]);
    // Nothing before 4 hypotheses; then "what" and "is" (the last word "the" waits for a successor).
    expect(counts).toEqual([0, 0, 0, 2]);
  });

  test("a revised word ('to' → 'tomorrow') is not stable until the revision has held", () => {
    const { counts } = feed([
      ["see", "you", "to"],
      ["see", "you", "to"],
      ["see", "you", "tomorrow"],
      ["see", "you", "tomorrow", "then"],
      ["see", "you", "tomorrow", "then"],
      ["see", "you", "tomorrow", "then"],
      ["see", "you", "tomorrow", "then"],
    ]);
    // "see" is out once 4 hypotheses agree on "see you"; "you" waits until the 4 newest all say
    // "tomorrow" after it (hypothesis 5), and "tomorrow" until they all say "then" (hypothesis 6).
    expect(counts).toEqual([0, 0, 0, 1, 1, 2, 3]);
  });

  test("at the end of the utterance every word counts", () => {
    const recent = rememberHypothesis([], ["thank", "you"], 4);
    expect(stableWordCount(recent, 4, true)).toBe(2);
    expect(stableWordCount(recent, 4, false)).toBe(0);
  });

  test("only the newest hypotheses are kept, and the input is not changed", () => {
    const recent = [["a"], ["b"]];
    const next = rememberHypothesis(recent, ["c"], 2);
    expect(next).toEqual([["b"], ["c"]]);
    expect(recent).toEqual([["a"], ["b"]]);
  });
});

describe("utterance cutter", () => {
  const run = (silences: boolean[], endpointFrames = 3, canStart = true) => {
    let state = initialCutterState();
    const events: (string | null)[] = [];
    for (const silent of silences) {
      const step = cutFrame(state, { silent, canStart }, endpointFrames);
      state = step.state;
      events.push(step.event);
    }
    return { state, events };
  };

  test("a loud frame starts an utterance and endpointFrames quiet frames end it", () => {
    const { events } = run([true, false, false, true, true, true, true]);
    expect(events).toEqual([null, "start", null, null, null, "end", null]);
  });

  test("a short pause inside speech does not end the utterance", () => {
    const { events, state } = run([false, true, true, false, true]);
    expect(events).toEqual(["start", null, null, null, null]);
    expect(state).toEqual({ inUtterance: true, silentRun: 1 });
  });

  test("without a recogniser no utterance starts, but silence is still counted", () => {
    const { events, state } = run([false, true, true], 3, false);
    expect(events).toEqual([null, null, null]);
    expect(state.silentRun).toBe(2);
  });

  test("RMS and pause probabilities", () => {
    expect(frameRms(new Float32Array([0.5, -0.5, 0.5, -0.5]))).toBeCloseTo(0.5, 6);
    expect(frameRms(new Float32Array(0))).toBe(0);
    expect(pauseProbabilities(0.4, [0.2, 0.8, 1.6])).toEqual([1, 0.5, 0.25]);
  });
});

describe("phrase cutter", () => {
  test("a sentence end closes a phrase once the next word has begun", () => {
    expect(nextPhrase("Hello there.", false, 6)).toBeNull(); // "there." may still grow
    expect(nextPhrase("Hello there. How", false, 6)).toEqual({ phrase: "Hello there.", rest: "How" });
    expect(nextPhrase("Hello there. ", false, 6)).toEqual({ phrase: "Hello there.", rest: "" });
  });

  test("a comma closes a phrase only from the third word on", () => {
    expect(nextPhrase("Yes, I think so, really ", false, 10)).toEqual({ phrase: "Yes, I think so,", rest: "really " });
  });

  test("without punctuation a phrase is cut after chunkWords words", () => {
    expect(nextPhrase("one two three four five ", false, 3)).toEqual({ phrase: "one two three", rest: "four five " });
  });

  test("at the end of the input whatever is left is one phrase", () => {
    expect(nextPhrase("and then", false, 6)).toBeNull();
    expect(nextPhrase("and then", true, 6)).toEqual({ phrase: "and then", rest: "" });
    expect(nextPhrase("   ", true, 6)).toBeNull();
  });

  test("streamed pieces are joined with one space when neither side has one", () => {
    expect(appendText("", "Hi")).toBe("Hi");
    expect(appendText("Hi", "there")).toBe("Hi there");
    expect(appendText("Hi ", "there")).toBe("Hi there");
    expect(appendText("Hi", " there")).toBe("Hi there");
  });
});

describe("send pacing", () => {
  test("the burst goes at once, then audio goes at pace × real time", () => {
    const at = (sentSeconds: number, pace = 2) => frameDueAt({ firstAt: 1000, sentSeconds, burstS: 0.5, pace });
    expect(at(0)).toBe(1000);
    expect(at(0.5)).toBe(1000);
    expect(at(1.5)).toBe(1500); // 1 s past the burst at 2× real time
    expect(at(1.5, 0)).toBe(1000); // pace 0: as fast as synthesised
  });
});

describe("Flux turns", () => {
  const config = { eotThreshold: 0.7, eagerThreshold: 0.4 as number | null, eotTimeoutS: 5, horizonS: 1, updateFrames: 3 };
  const w = (word: string, start: number) => ({ word, start, end: start + 0.2 });
  const frame = (over: Partial<TurnFrame>): TurnFrame => ({
    started: false, ended: false, inUtterance: true, silent: false, silentSeconds: 0, words: [], nowS: 0, utteranceStartS: 0.1, ...over,
  });
  const run = (frames: Partial<TurnFrame>[], c = config) => {
    let state: TurnState = initialTurnState();
    const events: string[] = [];
    for (const f of frames) {
      const step = turnFrame(state, frame(f), c);
      state = step.state;
      events.push(...step.events.map((e) => `${e.event}:${e.words.map((x) => x.word).join(" ")}`));
    }
    return { state, events };
  };
  const hello = [w("hello", 0.1), w("there", 0.4)];

  test("a turn: StartOfTurn, EagerEndOfTurn as the silence grows, EndOfTurn once the words are final", () => {
    const { events, state } = run([
      { started: true },
      { words: hello },
      { words: hello, silent: true, silentSeconds: 0.24 },
      { words: hello, silent: true, silentSeconds: 0.48 }, // confidence 0.48 ≥ eager 0.4
      { words: hello, silent: true, silentSeconds: 0.56, inUtterance: false, ended: true }, // utterance closed
      { silent: true, silentSeconds: 0.72, inUtterance: false }, // 0.72 ≥ 0.7: the turn ends
    ]);
    expect(events).toEqual(["StartOfTurn:", "Update:hello there", "EagerEndOfTurn:hello there", "EndOfTurn:hello there"]);
    expect(state).toMatchObject({ phase: "Initial", turnIndex: 1, doneWords: [] });
  });

  test("speech after an eager end resumes the turn; a transcript that changed does too", () => {
    const resumed = run([
      { started: true },
      { words: hello, silent: true, silentSeconds: 0.5 },
      { words: [...hello, w("friend", 0.9)] },
    ]);
    expect(resumed.events).toEqual(["StartOfTurn:", "EagerEndOfTurn:hello there", "TurnResumed:hello there friend"]);
    const changed = run([
      { started: true },
      { words: hello, silent: true, silentSeconds: 0.5 },
      { words: [w("hello", 0.1), w("their", 0.4)], silent: true, silentSeconds: 0.58, inUtterance: false, ended: true },
    ]);
    expect(changed.events.at(-1)).toBe("TurnResumed:hello their");
  });

  test("no eager events without eager_eot_threshold, and a turn with no words ends at eot_timeout_ms", () => {
    const { events } = run(
      [{ started: true }, { silent: true, silentSeconds: 4.9, inUtterance: false }, { silent: true, silentSeconds: 5, inUtterance: false }],
      { ...config, eagerThreshold: null, updateFrames: 100 },
    );
    expect(events).toEqual(["StartOfTurn:", "EndOfTurn:"]);
  });

  test("ForceEndTurn ends the open turn (trigger manual) with the words it made final; with none open, an Update", () => {
    const open = turnFrame(initialTurnState(), frame({ started: true }), config).state;
    const forced = forceEndTurn(open, [w("stop", 0.2)], 0.6);
    expect(forced.events).toEqual([{ event: "EndOfTurn", turnIndex: 0, windowStartS: 0.1, words: [w("stop", 0.2)], confidence: 1, trigger: "manual" }]);
    expect(forced.state.turnIndex).toBe(1);
    expect(forceEndTurn(forced.state, [], 0.9).events).toEqual([{ event: "Update", turnIndex: 1, windowStartS: 0.9, words: [], confidence: 0 }]);
  });
});
