// The reference backend's pure cores (demo/server/core/): word stability, utterance
// cutting, phrase cutting and send pacing, each tested without audio, sockets or timers.
import { describe, expect, test } from "vitest";
import { rememberHypothesis, stableWordCount } from "../../demo/server/core/word-stability.mjs";
import { cutFrame, frameRms, initialCutterState, pauseProbabilities } from "../../demo/server/core/utterance-cutter.mjs";
import { appendText, nextPhrase } from "../../demo/server/core/phrase-cutter.mjs";
import { frameDueAt } from "../../demo/server/core/send-pacing.mjs";

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
