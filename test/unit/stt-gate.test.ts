/**
 * SttGate: the STT's transcript events kept behind what the VAD has heard. A starved VAD worker can
 * lag the capture by seconds while the STT keeps up (the flake finder caught a reply begun on the
 * STT's pause before the VAD's speech start for the same speech, then cut by that late start).
 */
import { describe, expect, test } from "vitest";
import { SttGate } from "../../src/session/stt-gate.js";

const gate = () => new SttGate<string>({ behindMs: 300, maxHoldMs: 3000 });

describe("SttGate", () => {
  test("a VAD that keeps up holds nothing: each event goes on as it arrives", () => {
    const g = gate();
    g.captured(10.0);
    g.judged(9.9, 0);
    expect(g.arrive("word", 0)).toEqual(["word"]);
    expect(g.arrive("pause", 1)).toEqual(["pause"]);
    expect(g.holding).toBe(0);
  });

  test("a VAD that never says how far it judged holds nothing", () => {
    const g = gate();
    g.captured(10.0);
    expect(g.arrive("pause", 0)).toEqual(["pause"]);
  });

  test("a VAD 2 s behind: the events wait, in order, until it has judged the audio captured when each arrived", () => {
    const g = gate();
    g.judged(8.0, 0);
    g.captured(10.0);
    expect(g.arrive("word", 0)).toEqual([]);
    g.captured(10.5);
    expect(g.arrive("pause", 500)).toEqual([]);
    expect(g.holding).toBe(2);
    expect(g.judged(9.0, 600)).toEqual([]);
    expect(g.judged(10.0, 700)).toEqual(["word"]);
    // Behind no more, but an event still waits: a new one keeps its place after it.
    g.captured(10.6);
    expect(g.arrive("end", 750)).toEqual([]);
    expect(g.judged(10.6, 800)).toEqual(["pause", "end"]);
    expect(g.holding).toBe(0);
  });

  test("a VAD that stops judging holds an event for maxHoldMs at most, and those after it with it once theirs is up", () => {
    const g = gate();
    g.judged(5.0, 0);
    g.captured(10.0);
    expect(g.arrive("word", 1000)).toEqual([]);
    expect(g.arrive("pause", 2000)).toEqual([]);
    expect(g.tick(3999)).toEqual([]);
    expect(g.tick(4000)).toEqual(["word"]);
    expect(g.tick(5000)).toEqual(["pause"]);
  });

  test("releaseAll (the STT's flush came back) lets every waiting event go, in order; clear drops them", () => {
    const g = gate();
    g.judged(5.0, 0);
    g.captured(10.0);
    g.arrive("a", 0);
    g.arrive("b", 0);
    expect(g.releaseAll()).toEqual(["a", "b"]);
    g.arrive("c", 0);
    g.clear();
    expect(g.holding).toBe(0);
    expect(g.judged(10.0, 1)).toEqual([]);
  });

  test("after clear (a new start, a new AudioContext from 0 s) the old clocks are forgotten: a VAD behind on the new clock still holds", () => {
    const g = gate();
    g.judged(100.0, 0);
    g.captured(100.1);
    g.clear();
    g.judged(0.5, 10);
    g.captured(2.5);
    expect(g.arrive("pause", 10)).toEqual([]);
    expect(g.judged(2.5, 20)).toEqual(["pause"]);
  });
});
