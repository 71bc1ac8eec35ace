/**
 * A turn resumed before its reply was heard stays one turn (turn.resumeUnheard,
 * src/session/turn-machine.ts `interrupt`, src/session/user-messages.ts): the
 * user's speech cutting a reply none of which was audible brings back their
 * last words as the start of the turn, and the message it ends with replaces
 * the last one. The pure machine first, then a session on scripted parts:
 * the history, the transcript ids and what the LLM was asked.
 */
import { describe, expect, test } from "vitest";
import { INITIAL_TURN_STATE, type TurnConfig, type TurnEffect, type TurnEvent } from "../../src/session/turn-machine.js";
import { BASE_CONFIG, runTurns } from "./turn-machine-helpers.js";
import { setup } from "./session-setup.js";
import { until } from "../lib/wait.mjs";
import { ConversationHistory } from "../../src/session/history.js";

const CONFIG: TurnConfig = { ...BASE_CONFIG, resumeUnheard: true };
const words = (text: string, from: number): TurnEvent[] => text.split(" ").map((w, i) => ({ kind: "word", text: w, at: from + 10 * i }));
/** "i need a taxi" said and answered: the reply (generation 1) started, nothing of it audible yet. */
const answered: TurnEvent[] = [
  { kind: "listen" },
  { kind: "speechStart", pausedByWorker: false, at: 0 },
  { kind: "speechRealStart", at: 100 },
  ...words("i need a taxi", 200),
  { kind: "speechEnd", at: 900 },
  { kind: "turnFlushed", missed: false, at: 1000 },
];
/** The user goes on: "to the airport", its end and flush. */
const goesOn: TurnEvent[] = [
  { kind: "speechStart", pausedByWorker: true, at: 1200 },
  { kind: "speechRealStart", at: 1300 },
  ...words("to the airport", 1400),
  { kind: "speechEnd", at: 2000 },
  { kind: "turnFlushed", missed: false, at: 2100 },
];
const messages = (effects: TurnEffect[]) => effects.filter((e) => e.kind === "addUserMessage");

describe("the turn machine with turn.resumeUnheard", () => {
  test("speech cutting an unheard reply resumes the turn: its words lead the new ones, and its message replaces the last", () => {
    const { state, effects } = runTurns([...answered, ...goesOn], INITIAL_TURN_STATE, CONFIG);
    expect(messages(effects)).toEqual([
      { kind: "addUserMessage", text: "i need a taxi" },
      { kind: "addUserMessage", text: "i need a taxi to the airport", resumed: true },
    ]);
    const announce = effects.find((e) => e.kind === "announceInterruption");
    expect(announce).toMatchObject({ generation: 1, reason: "speech", userTurnResumed: true });
    // The ordered interrupt as always, then the turn resumed.
    const kinds = effects.map((e) => e.kind);
    expect(kinds.indexOf("resumeUserTurn")).toBe(kinds.indexOf("cancelReply") + 1);
    expect(effects.filter((e) => e.kind === "startReply").map((e) => (e as { generation: number }).generation)).toEqual([1, 3]);
    expect(state.turn.resumed ?? false).toBe(false);
    expect(state.phase).toBe("bot_thinking");
  });

  test("while the user goes on, their words so far are the turn's (the partial transcript shows all of them)", () => {
    const { state, effects } = runTurns([...answered, ...goesOn.slice(0, 3)], INITIAL_TURN_STATE, CONFIG);
    expect(state.userWords).toEqual(["i need a taxi", "to"]);
    expect(state.turn.resumed ?? false).toBe(true);
    expect(effects.at(-1)).toEqual({ kind: "userTranscript", text: "i need a taxi to" });
  });

  test("a reply that became audible after the user's onset (its pause holding it), or only just before, was not heard: the turn resumes", () => {
    const onset = { ...goesOn[0], contextTime: 5.0 } as TurnEvent;
    const after = runTurns([...answered, onset, { kind: "replyAudible", generation: 1, contextTime: 5.02 }, ...goesOn.slice(1)], INITIAL_TURN_STATE, CONFIG);
    expect(messages(after.effects).map((e) => e.text)).toEqual(["i need a taxi", "i need a taxi to the airport"]);
    // Audible 100 ms (UNHEARD_LEAD_MS) before the onset still counts as unheard; 150 ms does not.
    const justBefore = runTurns([...answered, { kind: "replyAudible", generation: 1, contextTime: 4.9 }, onset, ...goesOn.slice(1)], INITIAL_TURN_STATE, CONFIG);
    expect(messages(justBefore.effects).map((e) => e.text)).toEqual(["i need a taxi", "i need a taxi to the airport"]);
    const before = runTurns([...answered, { kind: "replyAudible", generation: 1, contextTime: 4.85 }, onset, ...goesOn.slice(1)], INITIAL_TURN_STATE, CONFIG);
    expect(messages(before.effects).map((e) => e.text)).toEqual(["i need a taxi", "to the airport"]);
  });

  test("once the reply was audible, speech over it is a barge-in: a new user message", () => {
    const { effects } = runTurns([...answered, { kind: "replyAudible", generation: 1 }, ...goesOn], INITIAL_TURN_STATE, CONFIG);
    expect(messages(effects).map((e) => e.text)).toEqual(["i need a taxi", "to the airport"]);
    expect(effects.some((e) => e.kind === "resumeUserTurn")).toBe(false);
    expect(effects.find((e) => e.kind === "announceInterruption")).not.toHaveProperty("userTurnResumed");
  });

  test("off (resumeUnheard false), a reply to typed text, or a stop button: no resume", () => {
    const off = runTurns([...answered, ...goesOn], INITIAL_TURN_STATE, BASE_CONFIG);
    expect(messages(off.effects).map((e) => e.text)).toEqual(["i need a taxi", "to the airport"]);
    const typed = runTurns([{ kind: "listen" }, { kind: "text", text: "i need a taxi" }, ...goesOn], INITIAL_TURN_STATE, CONFIG);
    expect(messages(typed.effects)).toEqual([
      { kind: "addUserMessage", text: "i need a taxi" },
      { kind: "addUserMessage", text: "to the airport" },
    ]);
    const api = runTurns([...answered, { kind: "interrupt", reason: "api" }], INITIAL_TURN_STATE, CONFIG);
    expect(api.state.turn.resumed ?? false).toBe(false);
    expect(api.state.userWords).toEqual([]);
  });

  test("stop() during a resumed turn keeps all the words said, replacing the last message", () => {
    const { effects } = runTurns([...answered, ...goesOn.slice(0, 3), { kind: "stop" }], INITIAL_TURN_STATE, CONFIG);
    expect(effects.filter((e) => e.kind === "keepUserWords")).toEqual([{ kind: "keepUserWords", text: "i need a taxi to", resumed: true }]);
  });
});

describe("a session whose user goes on before the reply is heard", () => {
  test("one user message (its final revised, same id), the unheard reply out of the history, and one LLM request with all the words", async () => {
    const t = setup({ llmMsPerWord: 400 });
    const log: string[] = [];
    t.session.on("transcript", (e) => log.push(`${e.id} ${e.final ? "final" : e.revised ? "revised" : "partial"} ${e.text}`));
    t.session.on("state", (e) => log.push(`state ${e.state}`));
    t.session.on("interruption", (e) => log.push(`interruption ${e.reason}${e.userTurnResumed ? " resumed" : ""}`));
    t.session.on("turn", () => log.push("turn"));
    const interruptions: unknown[] = [];
    t.session.on("interruption", (e) => interruptions.push(e));
    await t.session.start();
    t.vad.emit("speechStart");
    for (const w of ["i", "need", "a", "taxi"]) t.stt.word(w);
    t.vad.emit("speechEnd");
    await until(() => t.session.state === "bot_thinking" && t.llm.requests.length === 1);
    t.vad.emit("speechStart", { pausedPlayback: true });
    t.vad.emit("speechRealStart");
    await until(() => t.session.state === "user_speaking");
    // The cut reply's report comes once its streams are closed (as on any barge-in).
    await until(() => log.includes("turn"));
    for (const w of ["to", "the", "airport"]) t.stt.word(w);
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 2);
    expect(interruptions).toEqual([{ reason: "speech", heardText: "", unheardText: "", heardMs: 0, speechStartToConfirmMs: expect.any(Number), userTurnResumed: true }]);
    expect(t.llm.requests[0].aborted).toBe(true);
    const asked = t.llm.requests[1].messages.filter((m) => m.role !== "system");
    expect(asked).toEqual([{ role: "user", content: "i need a taxi to the airport" }]);
    expect(t.session.history.map((m) => `${m.id} ${m.role} ${m.text}`)).toEqual(["u1 user i need a taxi to the airport", "a3 assistant "]);
    // The order the README's "Transcript events" gives for this path.
    const cut = log.indexOf("u1 final i need a taxi");
    expect(log.slice(cut).filter((l) => !/^a2 partial/.test(l))).toEqual([
      "u1 final i need a taxi",
      "state bot_thinking",
      "interruption speech resumed",
      "a2 final ",
      "state user_speaking",
      "turn",
      "u1 revised i need a taxi to the airport",
      "state bot_thinking",
    ]);
    expect(log.slice(0, cut).filter((l) => l.startsWith("u"))).toEqual(["u1 partial i", "u1 partial i need", "u1 partial i need a", "u1 partial i need a taxi"]);
    await t.session.stop();
  });
});

describe("ConversationHistory.dropUnheardAfter", () => {
  test("removes the replies after the message with nothing heard and no tool called; keeps the rest", () => {
    const history = new ConversationHistory();
    const user = history.addUser("u1", "i need a taxi");
    history.addAssistant("a2");
    const withTool = history.addAssistant("a3");
    history.addToolCall(withTool, { id: "c1", name: "book", rawArguments: "{}", arguments: {}, output: "booked" } as never);
    const heard = history.addAssistant("a4");
    heard.text = "Where to";
    history.dropUnheardAfter(user);
    expect(history.messages.map((m) => m.id)).toEqual(["u1", "a3", "a4"]);
    history.dropUnheardAfter({ id: "x", role: "user", text: "" });
    expect(history.messages).toHaveLength(3);
  });
});
