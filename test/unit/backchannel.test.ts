/**
 * The backchannel policy (bargeIn.backchannels, src/session/backchannel.ts):
 * the turn machine driven synchronously, then one VoiceSession on the public
 * fakes, whose player says whether the reply paused and went on.
 */
import { describe, expect, test } from "vitest";
import { BACKCHANNEL_WORDS_EN, backchannelPolicyOf, INTERRUPT_WORDS_EN, isBackchannel, wordsVerdict } from "../../src/session/backchannel.js";
import type { TurnConfig, TurnEvent, TurnState } from "../../src/session/turn-machine.js";
import { BASE_CONFIG, botSpeakingState, effectKinds, runTurns } from "./turn-machine-helpers.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { until } from "../lib/wait.mjs";

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

  test("a verdict on the words so far: an interrupting word or minWords others interrupt, all backchannels are one, else unsure", () => {
    expect(wordsVerdict(POLICY, ["yeah", "Wait."])).toBe("interrupt");
    expect(wordsVerdict(POLICY, ["excuse", "me"])).toBe("interrupt");
    expect(wordsVerdict(POLICY, ["tell", "me", "more"])).toBe("interrupt");
    expect(wordsVerdict(POLICY, ["okay", "I see"])).toBe("backchannel");
    // What the reference STT made of flite's "sure", "got it", "yeah": too few to be more than a misheard backchannel.
    for (const misheard of [["share"], ["go", "to"], ["you", "have"]]) expect(wordsVerdict(POLICY, misheard), misheard.join(" ")).toBe("unsure");
    expect(wordsVerdict(POLICY, [])).toBe("unsure");
    // A word on both lists is a backchannel; minWords counts only the others.
    const custom = backchannelPolicyOf({ interruptWords: ["nein", "yeah"], minWords: 2 })!;
    expect(wordsVerdict(custom, ["Nein!"])).toBe("interrupt");
    expect(wordsVerdict(custom, ["yeah"])).toBe("backchannel");
    expect(wordsVerdict(custom, ["go", "to"])).toBe("interrupt");
    expect(INTERRUPT_WORDS_EN.filter((w) => BACKCHANNEL_WORDS_EN.includes(w))).toEqual([]);
  });

  test("off unless asked; bad values fail naming the option", () => {
    expect(backchannelPolicyOf(undefined)).toBeUndefined();
    expect(backchannelPolicyOf(false)).toBeUndefined();
    expect(backchannelPolicyOf({ maxMs: 500 })).toMatchObject({ maxMs: 500, wordWaitMs: 700 });
    expect(() => backchannelPolicyOf({ maxMs: -1 })).toThrow(/bargeIn\.backchannels\.maxMs/);
    expect(() => backchannelPolicyOf({ words: "yeah" as never })).toThrow(/bargeIn\.backchannels\.words/);
    expect(() => backchannelPolicyOf({ interruptWords: [1] as never })).toThrow(/bargeIn\.backchannels\.interruptWords/);
    expect(() => backchannelPolicyOf({ minWords: 0 })).toThrow(/bargeIn\.backchannels\.minWords/);
    expect(() => backchannelPolicyOf({ minWords: 1.5 })).toThrow(/minWords/);
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

  test("a word or two that is neither a backchannel nor an interrupting one (a misheard \"sure\") confirms nothing: short speech resumes when the word wait is over, and a third word or an interrupting one confirms", () => {
    const ended = run(overBot(["go", "to"], 400), botSpeaking());
    expect(effectKinds(ended.effects)).toEqual(["pausePlayback", "armTimer"]);
    expect(ended.state.userWords).toEqual([]);
    expect(run([{ kind: "timer", at: ONSET + 400 + POLICY.wordWaitMs }], ended.state).effects).toEqual([
      { kind: "resumePlayback", token: 1 },
      { kind: "backchannel", words: ["go", "to"], speechMs: 400 },
    ]);
    // A backchannel among them does not settle it early: the others may be the start of a sentence.
    expect(effectKinds(run([{ kind: "word", text: "yeah", at: ONSET + 500 }], ended.state).effects)).toEqual([]);
    for (const next of ["there", "stop"]) {
      const cut = run([{ kind: "word", text: next, at: ONSET + 500 }], ended.state);
      expect(cut.effects.find((e) => e.kind === "announceInterruption"), next).toMatchObject({ reason: "words", speechStartToConfirmMs: 500 });
      expect(cut.state.userWords).toEqual(["go", "to", next]);
    }
    // Voiced past maxMs, the same two words interrupt at the speech's end.
    const long = run(overBot(["go", "to"], POLICY.maxMs + 100), botSpeaking());
    expect(long.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech" });
    expect(long.state.userWords).toEqual(["go", "to"]);
  });

  test('a burst the VAD calls a misfire ("wait", too short for minSpeechMs): the bot plays on, and its words are awaited wordWaitMs; only an interrupting one cuts the reply', () => {
    const burst: TurnEvent[] = [{ kind: "speechStart", pausedByWorker: false, at: ONSET }, { kind: "misfire", resumedByWorker: false, at: ONSET + 600 }];
    const missed = run(burst, botSpeaking());
    expect(missed.effects).toEqual([
      { kind: "pausePlayback", token: 1 },
      { kind: "resumePlayback", token: 1 },
      { kind: "armTimer", at: ONSET + 600 + POLICY.wordWaitMs },
    ]);
    const cut = run([{ kind: "word", text: "wait", at: ONSET + 900 }], missed.state);
    expect(cut.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "words", speechStartToConfirmMs: 900 });
    expect(cut.state.userWords).toEqual(["wait"]);
    // A backchannel or a misheard word does not; when the wait is over the misfire stays one, with no event.
    const heard = run([{ kind: "word", text: "share", at: ONSET + 900 }, { kind: "word", text: "yeah", at: ONSET + 1000 }], missed.state);
    expect(heard.effects).toEqual([]);
    const over = run([{ kind: "timer", at: ONSET + 600 + POLICY.wordWaitMs }], heard.state);
    expect(over.effects).toEqual([]);
    expect(over.state.bargeIn.kind).toBe("idle");
    expect(over.state.userWords).toEqual([]);
    // The worker resumed it: nothing to resume; speech again in the wait pauses the bot again.
    const byWorker = run([burst[0], { kind: "misfire", resumedByWorker: true, at: ONSET + 600 }], botSpeaking());
    expect(effectKinds(byWorker.effects)).toEqual(["pausePlayback", "armTimer"]);
    expect(run([{ kind: "speechStart", pausedByWorker: false, at: ONSET + 800 }], missed.state).effects).toEqual([{ kind: "pausePlayback", token: 1 }]);
    // Without the policy a misfire resumes and ends the barge-in at once, as before.
    const plain: TurnConfig = { ...CONFIG, backchannel: undefined };
    const old = run(burst, botSpeaking(plain), plain);
    expect(effectKinds(old.effects)).toEqual(["pausePlayback", "resumePlayback"]);
    expect(old.state.bargeIn.kind).toBe("idle");
  });

  test("speech over the bot voiced past maxMs interrupts while it goes on (the VAD's speechVoiced), its held words the user's; not once it has ended, nor without the policy", () => {
    const going = run([{ kind: "speechStart", pausedByWorker: false, at: ONSET }, { kind: "speechRealStart", at: ONSET + 200 }, { kind: "word", text: "go", at: ONSET + 600 }], botSpeaking());
    const cut = run([{ kind: "speechVoiced", at: ONSET + 720 }], going.state);
    expect(cut.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech", speechStartToConfirmMs: 720 });
    expect(cut.state.userWords).toEqual(["go"]);
    const ended = run([{ kind: "speechEnd", at: ONSET + 500 }], going.state);
    expect(ended.state.bargeIn.kind).toBe("pending");
    expect(run([{ kind: "speechVoiced", at: ONSET + 720 }], ended.state).effects).toEqual([]);
    const plain: TurnConfig = { ...CONFIG, backchannel: undefined };
    expect(run([{ kind: "speechVoiced", at: ONSET + 720 }], botSpeaking(plain), plain).effects).toEqual([]);
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
