/**
 * turn.preemptive: the reply is prepared, held, once the VAD's utterance has
 * gone quiet (`speechQuiet`), released at the utterance's end, dropped when
 * the voice comes back. The pure machine (turn-machine.ts with preemptive.ts),
 * the option, and whole sessions on the public fakes: what is heard, what the
 * history keeps, what the LLM was asked.
 */
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { preemptiveOf } from "../../src/session/preemptive.js";
import { turnEndPolicyOf } from "../../src/session/turn-end.js";
import type { TurnConfig, TurnEvent } from "../../src/session/turn-machine.js";
import { fakeSession } from "../../src/testing/index.js";
import { BASE_CONFIG, effectKinds, runTurns } from "./turn-machine-helpers.js";
import { sleep } from "../lib/wait.mjs";

const CONFIG: TurnConfig = { ...BASE_CONFIG, turnEnd: turnEndPolicyOf(true), preemptive: { quietMs: 160 } };
const said = (...words: string[]): TurnEvent[] => [
  { kind: "listen" },
  { kind: "speechStart", pausedByWorker: false, at: 0, contextTime: 1 },
  { kind: "speechRealStart", at: 200 },
  ...words.map((text, i): TurnEvent => ({ kind: "word", text, at: 100 * (i + 1) })),
];
const quiet: TurnEvent = { kind: "speechQuiet", at: 1000, voiceEnd: 1.8 };
const flushed: TurnEvent = { kind: "turnFlushed", missed: false, at: 1100 };

describe("the turn machine: a preemptive reply", () => {
  test("quiet: the words are flushed and the reply starts held (no history, no fence, no state change); the utterance's end releases it with no second flush", () => {
    const asked = runTurns([...said("what", "time", "is", "it"), quiet], undefined, CONFIG);
    expect(asked.effects.at(-1)).toEqual({ kind: "endUserTurn", voiceEnd: 1.8 });
    const held = runTurns([flushed], asked.state, CONFIG);
    expect(held.effects).toEqual([{ kind: "startReply", generation: 1, held: { text: "what time is it" } }]);
    expect(held.state.phase).toBe("user_speaking");
    expect(held.state.userWords).toEqual(["what", "time", "is", "it"]);
    const released = runTurns([{ kind: "speechEnd", at: 1200, voiceEnd: 1.8 }], held.state, CONFIG);
    expect(effectKinds(released.effects)).toEqual(["addUserMessage", "fence", "state:bot_thinking", "releaseReply"]);
    expect(released.effects[0]).toEqual({ kind: "addUserMessage", text: "what time is it" });
    expect(released.state).toMatchObject({ phase: "bot_thinking", reply: { kind: "playing", generation: 1, audible: false }, userWords: [] });
    // It plays as any reply does.
    const playing = runTurns([{ kind: "replyAudible", generation: 1 }], released.state, CONFIG);
    expect(playing.state.phase).toBe("bot_speaking");
  });

  test("the voice comes back while it is held: dropped, and the turn goes on with its words; its end is then flushed and answered as usual", () => {
    const held = runTurns([...said("what", "time"), quiet, flushed], undefined, CONFIG);
    const resumed = runTurns([{ kind: "speechResumed", at: 1300 }], held.state, CONFIG);
    expect(resumed.effects).toEqual([{ kind: "dropHeldReply", generation: 1 }]);
    expect(resumed.state.userWords).toEqual(["what", "time"]);
    const more = runTurns([{ kind: "word", text: "is", at: 1400 }, { kind: "word", text: "it", at: 1500 }, { kind: "speechQuiet", at: 1900 }, { kind: "speechEnd", at: 2100, voiceEnd: 2.9 }], resumed.state, CONFIG);
    // One preemptive reply a turn: the second quiet starts none; the end flushes as usual.
    expect(effectKinds(more.effects)).toEqual(["userTranscript", "userTranscript", "endUserTurn"]);
    const answered = runTurns([{ kind: "turnFlushed", missed: false, at: 2200 }], more.state, CONFIG);
    expect(answered.effects).toContainEqual({ kind: "addUserMessage", text: "what time is it" });
    expect(answered.effects).toContainEqual({ kind: "startReply", generation: 2 });
    expect(answered.state.turn.speculated ?? false).toBe(false);
  });

  test("the voice comes back during the flush: no reply starts; the turn goes on", () => {
    const { state, effects } = runTurns([...said("what", "time"), quiet, { kind: "speechResumed", at: 1050 }, flushed], undefined, CONFIG);
    expect(effectKinds(effects)).not.toContain("startReply");
    expect(state).toMatchObject({ phase: "user_speaking", turn: { kind: "open" }, userWords: ["what", "time"], reply: { kind: "none" } });
  });

  test("the utterance ends during the flush: that flush is the turn's own, answered at once", () => {
    const { effects } = runTurns([...said("what", "time", "is", "it"), quiet, { kind: "speechEnd", at: 1060 }, flushed], undefined, CONFIG);
    expect(effectKinds(effects).filter((k) => k === "endUserTurn")).toHaveLength(1);
    expect(effects).toContainEqual({ kind: "startReply", generation: 1 });
    expect(effects).toContainEqual({ kind: "addUserMessage", text: "what time is it" });
  });

  test("new words by the utterance's end: the held reply is dropped and the turn is flushed again for all of them", () => {
    const held = runTurns([...said("what", "time"), quiet, flushed], undefined, CONFIG);
    const { effects } = runTurns([{ kind: "word", text: "now", at: 1150 }, { kind: "speechEnd", at: 1200 }], held.state, CONFIG);
    expect(effectKinds(effects)).toEqual(["userTranscript", "dropHeldReply", "endUserTurn"]);
  });

  test("no held reply for unfinished words, no words, a missed flush, push-to-talk, or the option off", () => {
    const kinds = (events: TurnEvent[], config = CONFIG) => effectKinds(runTurns(events, undefined, config).effects);
    expect(kinds([...said("i", "want", "to"), quiet, flushed])).not.toContain("startReply");
    expect(kinds([...said(), quiet, flushed])).not.toContain("startReply");
    expect(kinds([...said("what", "time"), quiet, { kind: "turnFlushed", missed: true, at: 1100 }])).not.toContain("startReply");
    expect(kinds([...said("what", "time"), quiet], { ...CONFIG, pushToTalk: true })).not.toContain("endUserTurn");
    expect(kinds([...said("what", "time"), quiet], { ...CONFIG, preemptive: undefined })).not.toContain("endUserTurn");
  });

  test("typed text or stop() while it is held: the held reply is dropped (stop keeps the spoken words)", () => {
    const held = runTurns([...said("what", "time"), quiet, flushed], undefined, CONFIG);
    const typed = runTurns([{ kind: "text", text: "is it" }], held.state, CONFIG);
    expect(effectKinds(typed.effects)).toEqual(["dropHeldReply", "addUserMessage", "fence", "state:bot_thinking", "startReply"]);
    expect(typed.effects[1]).toEqual({ kind: "addUserMessage", text: "what time is it" });
    const stopped = runTurns([{ kind: "stop" }], held.state, CONFIG);
    expect(stopped.effects).toEqual([{ kind: "dropHeldReply", generation: 1 }, { kind: "keepUserWords", text: "what time" }]);
  });
});

describe("turn.preemptive", () => {
  test("off by default; true is 160 ms of quiet; { quietMs } sets it; bad values, quietMs not under vad.redemptionMs, and realtime are ConfigErrors naming them", () => {
    expect(preemptiveOf(undefined)).toBeUndefined();
    expect(preemptiveOf(true)).toEqual({ quietMs: 160 });
    expect(preemptiveOf({ quietMs: 96 })).toEqual({ quietMs: 96 });
    expect(() => preemptiveOf({ quietMs: 0 })).toThrow(/turn\.preemptive\.quietMs/);
    expect(() => fakeSession({ turn: { preemptive: "yes" as never } })).toThrow(ConfigError);
    expect(() => fakeSession({ turn: { preemptive: { quietMs: 400 } }, vad: { redemptionMs: 300 } as never })).toThrow(/less than `vad\.redemptionMs` \(300\)/);
  });
});

/** A session on the fakes with turn.preemptive, its VAD asked to notice 160 ms of quiet. */
async function preemptiveSession() {
  const rig = fakeSession({ replies: ["It is noon.", "Sure."], turn: { preemptive: true } });
  await rig.session.start();
  expect(rig.user.vad.quietNoticeMs).toBe(160);
  const heard: string[] = [];
  rig.session.on("transcript", (e) => heard.push(`${e.role}${e.final ? "" : "~"}: ${e.text}`));
  return { rig, heard };
}

const tick = (ms = 30) => sleep(ms);

describe("a whole session with turn.preemptive", () => {
  test("released: the LLM is asked at the quiet, nothing shows or plays until the utterance's end, then the reply plays and the history is user, assistant", async () => {
    const { rig, heard } = await preemptiveSession();
    rig.user.startSpeaking();
    for (const w of ["what", "time", "is", "it"]) await rig.user.word(w);
    rig.user.vad.emit("speechQuiet", { contextTime: 0, lastSpeechContextTime: 0 });
    await tick(100);
    // The LLM was asked for the spoken words, as a speculative request; nothing of the reply is out.
    expect(rig.llm.requests).toHaveLength(1);
    expect(rig.llm.requests[0]!.messages.at(-1)).toEqual({ role: "user", content: "what time is it" });
    expect(rig.session.metrics.llm.speculative).toBe(1);
    expect(rig.session.state).toBe("user_speaking");
    expect(rig.session.history).toEqual([]);
    expect(heard.filter((h) => h.startsWith("assistant"))).toEqual([]);
    expect(rig.player.writtenSeconds).toBe(0);
    await rig.user.stopSpeaking();
    await rig.waitForReply();
    await rig.player.play();
    expect(rig.session.history.map((m) => `${m.role}: ${m.text}`)).toEqual(["user: what time is it", "assistant: It is noon."]);
    expect(rig.llm.requests).toHaveLength(1);
    expect(rig.session.metrics.preemptive).toEqual({ started: 1, released: 1, dropped: 0 });
    expect(heard.at(-1)).toBe("assistant: It is noon.");
    await rig.session.stop();
  });

  test("dropped: the user goes on; the held reply's streams are closed, none of it is heard, and the whole turn is answered once", async () => {
    const { rig, heard } = await preemptiveSession();
    rig.user.startSpeaking();
    for (const w of ["what", "time"]) await rig.user.word(w);
    rig.user.vad.emit("speechQuiet", { contextTime: 0 });
    await tick(100);
    expect(rig.llm.requests).toHaveLength(1);
    rig.user.vad.emit("speechResumed", { contextTime: 0 });
    await tick();
    expect(rig.session.liveQuests).toEqual(["stt"]);
    for (const w of ["is", "it"]) await rig.user.word(w);
    await rig.user.stopSpeaking();
    await rig.waitForReply();
    await rig.player.play();
    expect(rig.session.history.map((m) => `${m.role}: ${m.text}`)).toEqual(["user: what time is it", "assistant: Sure."]);
    expect(rig.llm.requests.map((r) => r.messages.at(-1)!.content)).toEqual(["what time", "what time is it"]);
    expect(heard.filter((h) => h.startsWith("assistant")).join("|")).not.toContain("noon");
    expect(rig.session.metrics.preemptive).toEqual({ started: 1, released: 0, dropped: 1 });
    await rig.session.stop();
  });
});

describe("the turn machine: a preemptive reply on the service's eager end of turn (Flux EagerEndOfTurn)", () => {
  const speaking: TurnEvent[] = [{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0, contextTime: 1 }, { kind: "speechRealStart", at: 200 }];
  const eager = (text: string): TurnEvent => ({ kind: "sttEndOfTurn", eager: true, at: 900, text });
  const finalWords = (...words: string[]): TurnEvent[] => words.map((text, i): TurnEvent => ({ kind: "word", text, at: 1000 + i }));

  test("eager: the reply starts held for its words at once (no flush); EndOfTurn's same words and the VAD's end release it, with the VAD's voice end", () => {
    const held = runTurns([eager("What time is it?")], runTurns(speaking, undefined, CONFIG).state, CONFIG);
    expect(held.effects).toEqual([{ kind: "startReply", generation: 1, held: { text: "What time is it?" } }]);
    expect(held.state.reply).toEqual({ kind: "speculative", generation: 1, text: "What time is it?", eager: true });
    const serviceEnd: TurnEvent[] = [...finalWords("what", "time", "is", "it"), { kind: "sttEndOfTurn", eager: false, at: 1100 }];
    const asked = runTurns(serviceEnd, held.state, { ...CONFIG, serviceEndOfTurn: { quietMs: 100 } });
    expect(asked.effects.at(-1)).toEqual({ kind: "endVadWhenQuiet", quietMs: 100 });
    const released = runTurns([{ kind: "speechEnd", at: 1200, voiceEnd: 1.85 }], asked.state, CONFIG);
    expect(effectKinds(released.effects)).toEqual(["addUserMessage", "fence", "state:bot_thinking", "releaseReply"]);
    expect(released.effects[0]).toEqual({ kind: "addUserMessage", text: "what time is it" });
    expect(released.effects.at(-1)).toEqual({ kind: "releaseReply", generation: 1, voiceEnd: 1.85 });
  });

  test("the VAD ends first (no words yet): the held reply waits for the turn's flush, whose words release it", () => {
    const held = runTurns([...speaking, eager("turn on the lights")], undefined, CONFIG);
    const ended = runTurns([{ kind: "speechEnd", at: 1000, voiceEnd: 1.7 }], held.state, CONFIG);
    expect(effectKinds(ended.effects)).toEqual(["endUserTurn"]);
    expect(ended.state.reply.kind).toBe("speculative");
    const released = runTurns([...finalWords("turn", "on", "the", "lights"), { kind: "turnFlushed", missed: false, at: 1300 }], ended.state, CONFIG);
    expect(released.effects).toContainEqual({ kind: "releaseReply", generation: 1, voiceEnd: 1.7 });
    expect(released.effects).toContainEqual({ kind: "addUserMessage", text: "turn on the lights" });
    expect(effectKinds(released.effects)).not.toContain("startReply");
  });

  test("TurnResumed drops it; the turn goes on and its end starts a new reply", () => {
    const held = runTurns([...speaking, eager("what time")], undefined, CONFIG);
    const resumed = runTurns([{ kind: "sttTurnResumed" }], held.state, CONFIG);
    expect(resumed.effects).toEqual([{ kind: "dropHeldReply", generation: 1 }]);
    expect(resumed.state.reply.kind).toBe("none");
    const answered = runTurns([...finalWords("what", "time", "is", "it"), { kind: "speechEnd", at: 1500, voiceEnd: 2.2 }, { kind: "turnFlushed", missed: false, at: 1600 }], resumed.state, CONFIG);
    expect(answered.effects).toContainEqual({ kind: "startReply", generation: 2 });
    expect(answered.effects).toContainEqual({ kind: "addUserMessage", text: "what time is it" });
  });

  test("other final words than the eager ones: dropped at the flush, and the turn is answered with its own words", () => {
    const held = runTurns([...speaking, eager("what time")], undefined, CONFIG);
    const r = runTurns([{ kind: "speechEnd", at: 1000, voiceEnd: 1.7 }, ...finalWords("what", "time", "is", "it"), { kind: "turnFlushed", missed: false, at: 1300 }], held.state, CONFIG);
    expect(effectKinds(r.effects)).toEqual(["endUserTurn", "userTranscript", "userTranscript", "userTranscript", "userTranscript", "dropHeldReply", "addUserMessage", "fence", "state:bot_thinking", "startReply"]);
    expect(r.effects).toContainEqual({ kind: "startReply", generation: 2 });
  });

  test("not without turn.preemptive, not for unfinished words, not twice a turn", () => {
    const user = runTurns(speaking, undefined, CONFIG).state;
    expect(effectKinds(runTurns([eager("what time is it")], user, { ...CONFIG, preemptive: undefined }).effects)).toEqual([]);
    expect(effectKinds(runTurns([eager("take me to the")], user, CONFIG).effects)).toEqual([]);
    const twice = runTurns([eager("what time"), { kind: "sttTurnResumed" }, eager("what time is it")], user, CONFIG);
    expect(effectKinds(twice.effects)).toEqual(["startReply", "dropHeldReply"]);
  });
});
