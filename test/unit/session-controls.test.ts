/**
 * The session's controls beyond start/stop/interrupt: mute() / unmute() and
 * sendText(), on the public fakes (bargein/testing), whose microphone sends
 * silence when muted as the capture worklet does. The worklet's own silence
 * is tested in Chromium (test/browser/controls.spec.ts).
 */
import { describe, expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import { ConfigError, StateError, type InterruptionEvent, type MuteEvent } from "../../src/index.js";

/** The user asks `question`; the bot answers, and `heardMs` of its reply plays. */
async function askAndHear(t: ReturnType<typeof fakeSession>, question: string, heardMs: number): Promise<void> {
  await t.user.says(question);
  await t.waitForState("bot_speaking");
  await t.waitForReply();
  await t.player.play(heardMs);
}

describe("mute() and unmute()", () => {
  test("speech while muted reaches neither the VAD nor the STT: no turn, no barge-in; unmuted, the next words are a turn", async () => {
    const t = fakeSession({ replies: ["one two three four five six seven eight", "Okay."] });
    const { session, user, player, clock, waitForState } = t;
    const mutes: MuteEvent[] = [];
    const interruptions: InterruptionEvent[] = [];
    session.on("mute", (e) => mutes.push(e));
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    await askAndHear(t, "hello", 250);
    session.mute();
    expect(session.muted).toBe(true);
    expect(user.mic.muted).toBe(true); // the capture was told: it sends silence
    await user.says("this is private"); // over the bot: no pause, no barge-in
    expect(player.paused).toBe(false);
    expect(interruptions).toEqual([]);
    expect(session.state).toBe("bot_speaking");
    await player.play();
    expect(session.state).toBe("listening");
    await user.says("still private");
    expect(session.state).toBe("listening");
    expect(session.history.map((m) => m.text)).toEqual(["hello", "one two three four five six seven eight"]);
    await clock.sleep(300);
    expect(session.metrics.mic.muted).toBe(true);
    session.unmute();
    expect(session.metrics.mic).toEqual({ muted: false, mutedMs: expect.any(Number) });
    expect(session.metrics.mic.mutedMs).toBeGreaterThan(0);
    await user.says("okay now");
    await waitForState("bot_speaking");
    expect(session.history[2]).toMatchObject({ role: "user", text: "okay now" });
    expect(mutes).toEqual([{ muted: true }, { muted: false }]);
    // Muting twice is one change, one event.
    session.mute();
    session.mute();
    expect(mutes).toHaveLength(3);
    await session.stop();
  });

  test("muted before start(), the session starts muted; the state carries over a stop() and start()", async () => {
    const { session, user } = fakeSession();
    session.mute();
    await session.start();
    expect(user.mic.muted).toBe(true);
    await user.says("hello");
    expect(session.state).toBe("listening");
    expect(session.history).toEqual([]);
    await session.stop();
    expect(session.muted).toBe(true);
  });

  test("components without capture.setMuted: mute() is a ConfigError that says what to add, and nothing changes", async () => {
    const { session, user } = fakeSession();
    (user.mic as { setMuted?: unknown }).setMuted = undefined;
    await session.start();
    expect(() => session.mute()).toThrow(ConfigError);
    expect(() => session.mute()).toThrow(/capture\.setMuted/);
    expect(session.muted).toBe(false);
    await session.stop();
  });
});

describe("push-to-talk (turn.mode)", () => {
  test("the microphone is open only while the button is held; a pause in speech does not end the turn, the release does", async () => {
    const { session, user, llm, waitForState } = fakeSession({ turn: { mode: "push-to-talk" }, replies: ["Sure."] });
    await session.start();
    expect(user.mic.muted).toBe(true); // button up: the microphone sends silence
    await user.says("not heard");
    expect(session.state).toBe("listening");
    session.startTurn();
    expect(user.mic.muted).toBe(false);
    expect(session.state).toBe("user_speaking");
    await user.says("what is");
    await user.says("the time"); // a pause between the two: still one turn
    expect(session.state).toBe("user_speaking");
    session.endTurn();
    expect(user.mic.muted).toBe(true);
    await waitForState("bot_speaking");
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "what is the time" });
    expect(session.muted).toBe(false); // the app's own switch is untouched
    await session.stop();
  });

  test("holding the button over the bot interrupts nothing by itself; speaking then barges in as usual, and the release ends that turn", async () => {
    const { session, user, player, waitForState, waitForReply } = fakeSession({ turn: { mode: "push-to-talk" }, replies: ["one two three four five six seven eight", "Okay."] });
    const interruptions: InterruptionEvent[] = [];
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    session.startTurn();
    await user.says("hello");
    session.endTurn();
    await waitForState("bot_speaking");
    await waitForReply();
    await player.play(500);
    session.startTurn();
    expect(session.state).toBe("bot_speaking");
    expect(interruptions).toEqual([]);
    await user.says("wait");
    expect(interruptions).toMatchObject([{ reason: "speech", heardText: "one two" }]);
    session.endTurn();
    await waitForState("bot_speaking");
    expect(session.history.map((m) => m.text)).toEqual(["hello", "one two", "wait", "Okay."]);
    await session.stop();
  });

  test("startTurn() without turn.mode 'push-to-talk' is a ConfigError; the app's mute() keeps the microphone shut while the button is held", async () => {
    const plain = fakeSession();
    await plain.session.start();
    expect(() => plain.session.startTurn()).toThrow(/push-to-talk/);
    await plain.session.stop();
    const { session, user } = fakeSession({ turn: { mode: "push-to-talk" } });
    await session.start();
    session.mute();
    session.startTurn();
    expect(user.mic.muted).toBe(true);
    session.unmute();
    expect(user.mic.muted).toBe(false);
    session.endTurn();
    expect(user.mic.muted).toBe(true);
    await session.stop();
  });
});

describe("sendText()", () => {
  test("a typed turn goes into the history and gets a reply by the same path as speech", async () => {
    const { session, llm, waitForState, player } = fakeSession({ replies: ["Sure."] });
    await session.start();
    session.sendText("  what time is it ");
    await waitForState("bot_speaking");
    expect(llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "what time is it" });
    await player.play();
    expect(session.history).toEqual([
      { id: "u1", role: "user", text: "what time is it" },
      { id: "a2", role: "assistant", text: "Sure.", interrupted: false, unheardText: "" },
    ]);
    await session.stop();
  });

  test("typed while the bot speaks, it interrupts the reply (reason 'text'), the history keeps what was heard, and the text is answered", async () => {
    const t = fakeSession({ replies: ["Sure, I can help. What do you need?", "Okay."] });
    const { session, player, waitForState } = t;
    const interruptions: InterruptionEvent[] = [];
    const states: string[] = [];
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    await askAndHear(t, "can you help me", 1000);
    session.on("state", (e) => states.push(e.state));
    session.sendText("never mind");
    expect(interruptions).toMatchObject([{ reason: "text", heardText: "Sure, I can help.", unheardText: "What do you need?" }]);
    // The floor goes straight to the reply to the text.
    expect(states).toEqual(["bot_thinking"]);
    await waitForState("bot_speaking");
    await player.play();
    expect(session.history.map((m) => [m.role, m.text])).toEqual([
      ["user", "can you help me"],
      ["assistant", "Sure, I can help."],
      ["user", "never mind"],
      ["assistant", "Okay."],
    ]);
    await session.stop();
  });

  test("empty text is a ConfigError; before start() a StateError", async () => {
    const { session } = fakeSession();
    expect(() => session.sendText("hello")).toThrow(StateError);
    await session.start();
    expect(() => session.sendText("   ")).toThrow(ConfigError);
    await session.stop();
  });
});

describe("history: seeded and exported", () => {
  test("an exported history seeds a new session: the LLM gets it first, history holds it, new ids count on after it", async () => {
    const first = fakeSession({ replies: ["Sure, I can help. What do you need?"] });
    await first.session.start();
    await askAndHear(first, "can you help me", 1000);
    await first.session.stop();
    const exported = JSON.parse(JSON.stringify(first.session.history));
    expect(exported).toEqual([
      { id: "u1", role: "user", text: "can you help me" },
      { id: "a2", role: "assistant", text: "Sure, I can help.", interrupted: true, unheardText: "What do you need?" },
    ]);

    const next = fakeSession({ history: exported, instructions: "Be brief.", replies: ["Okay."] });
    expect(next.session.history).toEqual(exported);
    await next.session.start();
    await next.user.says("go on");
    await next.waitForState("bot_speaking");
    expect(next.llm.requests[0].messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "can you help me" },
      { role: "assistant", content: "Sure, I can help." },
      { role: "user", content: "go on" },
    ]);
    expect(next.session.history.slice(2).map((m) => m.id)).toEqual(["u3", "a4"]);
    await next.session.stop();
  });

  test("plain { role, text } entries get ids; a malformed entry is a ConfigError naming it", () => {
    const { session } = fakeSession({ history: [{ role: "user", text: "hi" }, { role: "assistant", text: "Hello." }] });
    expect(session.history).toEqual([
      { id: "u1", role: "user", text: "hi" },
      { id: "a2", role: "assistant", text: "Hello.", interrupted: false, unheardText: "" },
    ]);
    expect(() => fakeSession({ history: [{ role: "user", text: "ok" }, { role: "system", text: "x" } as never] })).toThrow(/history\[1\]/);
    expect(() => fakeSession({ history: "hello" as never })).toThrow(ConfigError);
  });
});
