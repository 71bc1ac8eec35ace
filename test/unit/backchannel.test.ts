/**
 * The backchannel policy (bargeIn.backchannels, src/session/backchannel.ts):
 * the turn machine driven synchronously, then one VoiceSession on the public
 * fakes, whose player says whether the reply paused and went on.
 */
import { describe, expect, test } from "vitest";
import { BACKCHANNEL_WORDS_EN, backchannelPolicyOf, isBackchannel } from "../../src/session/backchannel.js";
import type { TurnConfig, TurnEvent, TurnState } from "../../src/session/turn-machine.js";
import { BASE_CONFIG, botSpeakingState, effectKinds, runTurns } from "./turn-machine-helpers.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { until } from "./session-setup.js";

const POLICY = backchannelPolicyOf(true)!;
const CONFIG: TurnConfig = { ...BASE_CONFIG, backchannel: POLICY };

const run = (events: TurnEvent[], state: TurnState, config = CONFIG) => runTurns(events, state, config);
const kinds = effectKinds;
const botSpeaking = (config = CONFIG) => botSpeakingState(config);

const ONSET = 2000;
const overBot = (words: string[], speechMs: number): TurnEvent[] => [
  { kind: "speechStart", pausedByWorker: false, at: ONSET },
  { kind: "speechRealStart", at: ONSET + 200 },
  ...words.map((text, i): TurnEvent => ({ kind: "word", text, at: ONSET + 250 + 50 * i })),
  { kind: "speechEnd", at: ONSET + speechMs },
];

describe("the backchannel policy's words", () => {
  test("compared lower-case, letters and digits only, a phrase word by word; no, wait and stop are not backchannels", () => {
    for (const w of ["Yeah.", "mm-hmm", "Mhm,", "OK", "uh-huh", "right?", "I see", "got it"]) expect(isBackchannel(POLICY, w), w).toBe(true);
    for (const w of ["no", "wait", "stop", "what", "but", "I need"]) expect(isBackchannel(POLICY, w), w).toBe(false);
    const custom = backchannelPolicyOf({ words: ["genau", "ja"] })!;
    expect(isBackchannel(custom, "Genau!")).toBe(true);
    expect(isBackchannel(custom, "yeah")).toBe(false);
    expect(BACKCHANNEL_WORDS_EN).not.toContain("no");
  });

  test("off unless asked; bad values fail naming the option", () => {
    expect(backchannelPolicyOf(undefined)).toBeUndefined();
    expect(backchannelPolicyOf(false)).toBeUndefined();
    expect(backchannelPolicyOf({ maxMs: 500 })).toMatchObject({ maxMs: 500, wordWaitMs: 700 });
    expect(() => backchannelPolicyOf({ maxMs: -1 })).toThrow(/bargeIn\.backchannels\.maxMs/);
    expect(() => backchannelPolicyOf({ words: "yeah" as never })).toThrow(/bargeIn\.backchannels\.words/);
    expect(() => new VoiceSession({ stt: fakeStt().provider, llm: fakeLlm().provider, tts: fakeTts().provider, bargeIn: { backchannels: { wordWaitMs: Number.NaN } } })).toThrow(/wordWaitMs/);
  });
});

describe("turn machine with backchannels", () => {
  test('"yeah" over the bot: paused at the onset, not confirmed by speech or the word, resumed once its words had time to come; no user turn', () => {
    const said = run(overBot(["yeah"], 400), botSpeaking());
    expect(kinds(said.effects)).toEqual(["pausePlayback", "armBargeInTimer", "armBargeInTimer"]);
    expect(said.state.phase).toBe("bot_speaking");
    expect(said.effects.at(-1)).toEqual({ kind: "armBargeInTimer", at: ONSET + 400 + POLICY.wordWaitMs });
    // The first timer (the onset's maxMs) is stale once the speech ended: nothing.
    expect(run([{ kind: "bargeInTimer", at: ONSET + POLICY.maxMs }], said.state).effects).toEqual([]);
    const after = run([{ kind: "bargeInTimer", at: ONSET + 400 + POLICY.wordWaitMs }], said.state);
    expect(after.effects).toEqual([
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: ["yeah"], speechMs: 400 },
    ]);
    expect(after.state.phase).toBe("bot_speaking");
    expect(after.state.userWords).toEqual([]);
    expect(after.state.bargeIn.kind).toBe("idle");
    // Its word arriving after the resume is no user turn either.
    const late = run([{ kind: "word", text: "okay", at: ONSET + 1500 }], after.state);
    expect(late.effects).toEqual([]);
    expect(late.state.userWords).toEqual([]);
  });

  test('"wait" over the bot confirms at its word; a backchannel before it joins the turn ("yeah wait")', () => {
    const { state, effects } = run(overBot(["yeah", "wait"], 400), botSpeaking());
    expect(kinds(effects)).toContain("announceInterruption");
    const announce = effects.find((e) => e.kind === "announceInterruption");
    expect(announce).toMatchObject({ reason: "words", speechStartToConfirmMs: 300 });
    expect(state.phase).toBe("user_speaking");
    expect(state.userWords).toEqual(["yeah", "wait"]);
    expect(effects.filter((e) => e.kind === "userTranscript").at(-1)).toEqual({ kind: "userTranscript", text: "yeah wait" });
    expect(kinds(effects)).not.toContain("backchannel");
  });

  test("speech over the bot that lasts maxMs confirms at that moment, whatever its words; its held backchannels are the user's", () => {
    const talking = run(overBot(["yeah"], 5000).slice(0, -1), botSpeaking()).state; // still speaking
    const { state, effects } = run([{ kind: "bargeInTimer", at: ONSET + POLICY.maxMs }], talking);
    expect(effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech", speechStartToConfirmMs: POLICY.maxMs });
    expect(state.userWords).toEqual(["yeah"]);
    // Speech that ended past maxMs confirms at its end.
    const long = run(overBot([], POLICY.maxMs + 100), botSpeaking());
    expect(long.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech" });
  });

  test("a second utterance before the first one's words decided it keeps the one pause and is timed on its own", () => {
    const first = run(overBot(["mm"], 300), botSpeaking()).state;
    const again = run([{ kind: "speechStart", pausedByWorker: false, at: ONSET + 500 }], first);
    expect(again.effects).toEqual([{ kind: "armBargeInTimer", at: ONSET + 500 + POLICY.maxMs }]);
    // The first utterance's word wait is stale now; the second is still going at its maxMs: confirmed.
    expect(run([{ kind: "bargeInTimer", at: ONSET + 300 + POLICY.wordWaitMs }], again.state).effects).toEqual([]);
    expect(kinds(run([{ kind: "bargeInTimer", at: ONSET + 500 + POLICY.maxMs }], again.state).effects)).toContain("announceInterruption");
  });

  test("without the policy, the same \"yeah\" interrupts at its word (today's default)", () => {
    const plain: TurnConfig = { ...CONFIG, backchannel: undefined };
    const { effects } = run(overBot(["yeah"], 400), botSpeaking(plain), plain);
    expect(effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech", speechStartToConfirmMs: 200 });
  });
});

test("a VoiceSession with bargeIn.backchannels: a backchannel resumes the reply with no interruption and no user turn; a real word interrupts", async () => {
  const stt = fakeStt();
  const player = new VirtualPlayer();
  const vad = new VirtualVad();
  const capture = new Emitter<any>();
  const components: SessionComponents = { player, vad, capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
  const session = new VoiceSession({
    stt: stt.provider,
    llm: fakeLlm({ reply: () => "here is a long answer with many words in it", msPerWord: 1 }).provider,
    tts: fakeTts({ secondsPerWord: 1 }).provider,
    components: async () => components,
    bargeIn: { backchannels: { wordWaitMs: 100 } },
  });
  const seen: string[] = [];
  session.on("backchannel", (e) => seen.push(`backchannel ${e.words.join(" ")}`));
  session.on("interruption", (e) => seen.push(`interruption ${e.reason}`));
  await session.start();
  try {
    vad.emit("speechStart");
    stt.word("tell");
    stt.word("me");
    vad.emit("speechEnd");
    await until(() => session.state === "bot_speaking");
    vad.emit("speechStart");
    expect(player.paused).toBe(true);
    stt.word("yeah");
    vad.emit("speechEnd");
    await until(() => seen.length > 0);
    expect(seen).toEqual(["backchannel yeah"]);
    expect(player.paused).toBe(false);
    expect(session.state).toBe("bot_speaking");
    expect(session.history.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["tell me"]);
    vad.emit("speechStart");
    stt.word("stop");
    await until(() => seen.length > 1);
    expect(seen).toEqual(["backchannel yeah", "interruption words"]);
    expect(session.state).toBe("user_speaking");
  } finally {
    await session.stop();
  }
});
