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
  test('"yeah" over the bot: paused at the onset, confirmed neither by speech nor by its word; at the speech\'s end the bot goes on, and it is no user turn', () => {
    const said = run(overBot(["yeah"], 400), botSpeaking());
    expect(said.effects).toEqual([
      { kind: "pausePlayback", token: 1 },
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: ["yeah"], speechMs: 400 },
    ]);
    expect(said.state.phase).toBe("bot_speaking");
    expect(said.state.userWords).toEqual([]);
    expect(said.state.bargeIn.kind).toBe("idle");
    // A backchannel word arriving after the resume is no user turn either.
    const late = run([{ kind: "word", text: "okay", at: ONSET + 1500 }], said.state);
    expect(late.effects).toEqual([]);
    expect(late.state.userWords).toEqual([]);
  });

  test("speech that ends before any word waits wordWaitMs for one: a backchannel then lets the bot go on at once, none lets it go on when the wait is over", () => {
    const ended = run(overBot([], 300), botSpeaking());
    expect(ended.effects.at(-1)).toEqual({ kind: "armTimer", at: ONSET + 300 + POLICY.wordWaitMs });
    expect(run([{ kind: "word", text: "mhm", at: ONSET + 500 }], ended.state).effects).toEqual([
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: ["mhm"], speechMs: 300 },
    ]);
    expect(run([{ kind: "timer", at: ONSET + 300 + POLICY.wordWaitMs - 1 }], ended.state).effects).toEqual([]);
    expect(run([{ kind: "timer", at: ONSET + 300 + POLICY.wordWaitMs }], ended.state).effects).toEqual([
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: [], speechMs: 300 },
    ]);
    // A real word in the wait interrupts.
    expect(run([{ kind: "word", text: "no", at: ONSET + 500 }], ended.state).effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "words" });
  });

  test('"wait" over the bot confirms at its word; a backchannel before it joins the turn ("yeah wait")', () => {
    const { state, effects } = run(overBot(["yeah", "wait"], 400), botSpeaking());
    const announce = effects.find((e) => e.kind === "announceInterruption");
    expect(announce).toMatchObject({ reason: "words", speechStartToConfirmMs: 300 });
    expect(state.phase).toBe("user_speaking");
    expect(state.userWords).toEqual(["yeah", "wait"]);
    expect(effects.filter((e) => e.kind === "userTranscript").at(-1)).toEqual({ kind: "userTranscript", text: "yeah wait" });
    expect(effectKinds(effects)).not.toContain("backchannel");
  });

  test("the length that confirms is the voiced speech (its last speech frame less its onset, in context time), not the VAD's end, which comes redemptionMs later", () => {
    const start: TurnEvent = { kind: "speechStart", pausedByWorker: false, at: ONSET, contextTime: 10 };
    const word: TurnEvent = { kind: "word", text: "yeah", at: ONSET + 300 };
    // Voiced 400 ms, ended by the VAD 600 ms later: a backchannel.
    const short = run([start, word, { kind: "speechEnd", at: ONSET + 1000, voiceEnd: 10.4 }], botSpeaking());
    expect(short.effects.at(-1)).toEqual({ kind: "backchannel", words: ["yeah"], speechMs: 400 });
    // Voiced past maxMs: an interruption, whatever its words, and the held "yeah" is the user's.
    const long = run([start, word, { kind: "speechEnd", at: ONSET + 1300, voiceEnd: 10 + POLICY.maxMs / 1000 + 0.05 }], botSpeaking());
    expect(long.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech" });
    expect(long.state.userWords).toEqual(["yeah"]);
  });

  test("a second utterance while the first one waits for its words keeps the one pause; the first one's wait no longer applies", () => {
    const first = run(overBot([], 300), botSpeaking()).state;
    const again = run([{ kind: "speechStart", pausedByWorker: false, at: ONSET + 500 }], first);
    expect(again.effects).toEqual([]);
    expect(run([{ kind: "timer", at: ONSET + 300 + POLICY.wordWaitMs }], again.state).effects).toEqual([]);
    const done = run([{ kind: "word", text: "yeah", at: ONSET + 700 }, { kind: "speechEnd", at: ONSET + 900 }], again.state);
    expect(done.effects).toEqual([
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: ["yeah"], speechMs: 400 },
    ]);
  });

  test('without the policy, the same "yeah" interrupts at the VAD\'s real start (today\'s default)', () => {
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
