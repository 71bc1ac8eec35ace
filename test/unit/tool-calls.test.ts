/**
 * Client tool calls on the cascaded path, on the public fakes (bargein/testing):
 * the fake LLM scripts the model's call as a real one streams it (text, then
 * the calls, then the end of the message), and the session under test is the
 * real one. The wire formats are tested against the providers' own servers
 * (providers-openai-chat, providers-websocket-llm) and the reference LLM
 * (test/backend/llm-tools.test.ts).
 */
import { describe, expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import { ConfigError, type ToolCallEvent, type ToolResultEvent, type WarningEvent } from "../../src/index.js";
import { sleep, until } from "../lib/wait.mjs";

const GET_TIME = {
  name: "get_time",
  description: "The time now, where the user is.",
  parameters: { type: "object", properties: { timezone: { type: "string" } }, required: [] },
};

/** A session whose model calls get_time for the first turn, then answers with the tool's message. */
function timeSession(options: { timeoutMs?: number } = {}) {
  const t = fakeSession({
    tools: { definitions: [GET_TIME], ...options },
    replies: [{ toolCalls: [{ id: "call_1", name: "get_time", arguments: { timezone: "Europe/Paris" } }] }],
  });
  // Past the scripted turn, the model reads the tool's answer back.
  const calls: ToolCallEvent[] = [];
  const results: ToolResultEvent[] = [];
  const warnings: WarningEvent[] = [];
  t.session.on("toolCall", (e) => calls.push(e));
  t.session.on("toolResult", (e) => results.push(e));
  t.session.on("warning", (e) => warnings.push(e));
  return { ...t, calls, results, warnings };
}

describe("tool calls", () => {
  test("a call is emitted with its parsed arguments, its result reaches the model's next request, and the reply goes on and is heard", async () => {
    const t = timeSession();
    const { session, user, player, llm, waitForState, waitForReply, calls, results } = t;
    const seen: { args: Record<string, unknown>; state: string }[] = [];
    session.handleTool("get_time", async (call, { signal }) => {
      seen.push({ args: call.arguments, state: session.state });
      expect(signal.aborted).toBe(false);
      return "ten past nine";
    });
    await session.start();
    await user.says("what time is it");
    await waitForState("bot_speaking");
    await waitForReply();
    await player.play();
    expect(session.state).toBe("listening");

    // The handler ran while the reply waited in bot_thinking, with the arguments parsed.
    expect(seen).toEqual([{ args: { timezone: "Europe/Paris" }, state: "bot_thinking" }]);
    expect(calls).toEqual([
      { messageId: "a2", call: { id: "call_1", name: "get_time", arguments: { timezone: "Europe/Paris" }, rawArguments: '{"timezone":"Europe/Paris"}' } },
    ]);
    expect(results).toMatchObject([{ messageId: "a2", id: "call_1", name: "get_time", status: "ok", output: "ten past nine" }]);

    // Both requests offered the tool; the second carried the call and its result after the user's turn.
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[0].tools).toEqual([GET_TIME]);
    expect(llm.requests[1].messages).toEqual([
      { role: "user", content: "what time is it" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "get_time", rawArguments: '{"timezone":"Europe/Paris"}' }] },
      { role: "tool", content: "ten past nine", toolCallId: "call_1", name: "get_time" },
    ]);
    // The same reply went on: one assistant message, one TTS stream, and all of it was heard.
    expect(t.tts.streams).toHaveLength(1);
    expect(t.tts.streams[0].texts.join(" ")).toBe("You said what time is it.");
    expect(session.history).toEqual([
      { id: "u1", role: "user", text: "what time is it" },
      {
        id: "a2",
        role: "assistant",
        text: "You said what time is it.",
        interrupted: false,
        unheardText: "",
        toolCalls: [{ id: "call_1", name: "get_time", arguments: { timezone: "Europe/Paris" }, rawArguments: '{"timezone":"Europe/Paris"}', status: "ok", output: "ten past nine" }],
      },
    ]);

    // The next turn's request carries the call and its result from the history.
    await user.says("thanks");
    await waitForState("bot_speaking");
    expect(llm.requests[2].messages).toEqual([
      { role: "user", content: "what time is it" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "get_time", rawArguments: '{"timezone":"Europe/Paris"}' }] },
      { role: "tool", content: "ten past nine", toolCallId: "call_1", name: "get_time" },
      { role: "assistant", content: "You said what time is it." },
      { role: "user", content: "thanks" },
    ]);
    await session.stop();
  });

  test("a barge-in while the tool runs aborts the handler's signal; nothing is sent to the model, and the late answer is dropped", async () => {
    const t = timeSession();
    const { session, user, llm, waitForState, results } = t;
    let signal: AbortSignal | undefined;
    let finish: ((v: string) => void) | undefined;
    session.handleTool("get_time", (_call, context) => {
      signal = context.signal;
      // A slow tool that ignores its signal: the session must not wait for it.
      return new Promise<string>((resolve) => (finish = resolve));
    });
    await session.start();
    await user.says("what time is it");
    await waitForState("bot_thinking");
    await until(() => signal !== undefined);
    expect(session.state).toBe("bot_thinking");

    await user.says("never mind");
    expect(signal!.aborted).toBe(true);
    finish!("too late");
    await waitForState("bot_speaking");
    // The first reply made one request only: no result went out after the cancel.
    const toolMessages = llm.requests.flatMap((r) => r.messages.filter((m) => m.role === "tool"));
    expect(toolMessages).toEqual([]);
    expect(results).toMatchObject([{ id: "call_1", status: "cancelled" }]);
    expect(results[0].output).toBeUndefined();
    const first = session.history[1];
    expect(first).toMatchObject({ role: "assistant", toolCalls: [{ id: "call_1", status: "cancelled" }] });
    await session.stop();
    expect(session.liveQuests).toEqual([]);
  });

  test("a handler that throws: the model reads an error result, a warning says so, and the reply goes on", async () => {
    const t = timeSession();
    const { session, user, player, llm, waitForState, waitForReply, results, warnings } = t;
    session.handleTool("get_time", () => {
      throw new Error("the clock service is down");
    });
    await session.start();
    await user.says("what time is it");
    await waitForState("bot_speaking");
    await waitForReply();
    await player.play();
    const error = JSON.stringify({ error: "the tool get_time failed: the clock service is down" });
    expect(llm.requests[1].messages.at(-1)).toEqual({ role: "tool", content: error, toolCallId: "call_1", name: "get_time" });
    expect(results).toMatchObject([{ status: "error", output: error }]);
    expect(warnings).toEqual([
      { service: "tool", message: "the tool get_time failed: the clock service is down; the model was told so", cause: expect.any(Error) },
    ]);
    expect(session.history[1]).toMatchObject({ text: "You said what time is it.", interrupted: false, toolCalls: [{ status: "error", output: error }] });
    expect(session.state).toBe("listening");
    await session.stop();
  });

  test("a handler past tools.timeoutMs is aborted and the model is told it timed out", async () => {
    const t = timeSession({ timeoutMs: 30 });
    const { session, user, llm, waitForState, results, warnings } = t;
    let aborted: unknown;
    session.handleTool("get_time", (_call, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject((aborted = signal.reason)))));
    await session.start();
    await user.says("what time is it");
    await waitForState("bot_speaking");
    expect((aborted as Error).name).toBe("TimeoutError");
    expect(results).toMatchObject([{ status: "timeout" }]);
    expect(JSON.parse(llm.requests[1].messages.at(-1)!.content)).toEqual({ error: "the tool get_time did not answer within 30 ms (tools.timeoutMs)" });
    expect(warnings.map((w) => w.service)).toEqual(["tool"]);
    await session.stop();
  });

  test("a call with no handler, and arguments that are not JSON, are answered with errors, not a dead session", async () => {
    const t = fakeSession({
      tools: { definitions: [GET_TIME] },
      replies: [{ toolCalls: [{ id: "c1", name: "get_time", arguments: "{not json" }, { id: "c2", name: "get_time" }] }, "Sorry.", { toolCalls: [{ id: "c3", name: "get_time" }] }, "Okay."],
    });
    const warnings: WarningEvent[] = [];
    t.session.on("warning", (w) => warnings.push(w));
    let ran = 0;
    const off = t.session.handleTool("get_time", () => ++ran);
    await t.session.start();
    await t.user.says("what time is it");
    await t.waitForState("bot_speaking");
    const tools = t.llm.requests[1].messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(tools[0]).toMatch(/^\{"error":"the arguments of get_time are not a JSON object/);
    expect(tools[1]).toBe("1");
    expect(ran).toBe(1);
    expect(warnings).toHaveLength(1);
    off();
    await t.waitForReply();
    await t.player.play();
    await t.user.says("what time is it");
    await t.waitForState("bot_speaking");
    // No handler now: the model is told so, and the reply still goes on.
    expect(t.llm.requests[3].messages.at(-1)).toEqual({
      role: "tool",
      content: JSON.stringify({ error: "the tool get_time has no handler (session.handleTool)" }),
      toolCallId: "c3",
      name: "get_time",
    });
    expect(warnings.map((w) => w.message)).toContain("the tool get_time has no handler (session.handleTool); the model was told so");
    await t.session.stop();
  });

  test("words before the call are spoken while the tool runs, and the answer goes on from them in the same message", async () => {
    const t = fakeSession({
      tools: { definitions: [GET_TIME] },
      replies: [{ text: "Let me check.", toolCalls: [{ id: "c1", name: "get_time" }] }, "It is noon."],
    });
    const states: string[] = [];
    t.session.handleTool("get_time", async () => {
      states.push(t.session.state);
      await sleep(20);
      return "noon";
    });
    await t.session.start();
    await t.user.says("what time is it");
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    await t.player.play();
    expect(t.tts.streams).toHaveLength(1);
    expect(t.tts.streams[0].texts.join(" ")).toBe("Let me check. It is noon.");
    // "Let me check." reached the TTS before the tool ran: its audio was playing meanwhile.
    expect(states).toEqual(["bot_speaking"]);
    expect(t.llm.requests[1].messages.slice(-2)).toEqual([
      { role: "assistant", content: "Let me check.", toolCalls: [{ id: "c1", name: "get_time", rawArguments: "{}" }] },
      { role: "tool", content: "noon", toolCallId: "c1", name: "get_time" },
    ]);
    expect(t.session.history[1]).toMatchObject({ text: "Let me check. It is noon.", interrupted: false });
    expect(t.session.state).toBe("listening");
    await t.session.stop();
  });

  test("a tool slower than turn.replyStallMs does not stall the reply: the watchdog waits for the tool", async () => {
    const t = fakeSession({
      tools: { definitions: [GET_TIME] },
      turn: { replyStallMs: 40 },
      replies: [{ toolCalls: [{ id: "c1", name: "get_time" }] }, "It is late."],
    });
    const interruptions: string[] = [];
    t.session.on("interruption", (e) => interruptions.push(e.reason));
    t.session.handleTool("get_time", () => new Promise((r) => setTimeout(() => r("late"), 150)));
    await t.session.start();
    await t.user.says("what time is it");
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    await t.player.play();
    expect(interruptions).toEqual([]);
    expect(t.session.history[1]).toMatchObject({ text: "It is late.", interrupted: false });
    await t.session.stop();
  });

  test("a model that keeps calling gets maxRoundsPerReply answers; then the reply ends with a warning", async () => {
    const again = { toolCalls: [{ name: "get_time" }] };
    const t = fakeSession({ tools: { definitions: [GET_TIME], maxRoundsPerReply: 2 }, replies: [again, again, again, again] });
    const warnings: WarningEvent[] = [];
    t.session.on("warning", (w) => warnings.push(w));
    let ran = 0;
    t.session.handleTool("get_time", () => ++ran);
    await t.session.start();
    await t.user.says("what time is it");
    await until(() => warnings.length > 0);
    await t.waitForState("listening");
    expect(ran).toBe(2);
    expect(t.llm.requests).toHaveLength(3);
    expect(warnings[0]).toMatchObject({ service: "tool", message: expect.stringMatching(/after 2 rounds.*tools\.maxRoundsPerReply/) });
    await t.session.stop();
  });

  test("stop() while a tool runs aborts its signal and ends the session cleanly, with the call recorded as cancelled", async () => {
    const t = timeSession();
    let signal: AbortSignal | undefined;
    t.session.handleTool("get_time", (_call, context) => {
      signal = context.signal;
      return new Promise(() => {}); // never answers
    });
    await t.session.start();
    await t.user.says("what time is it");
    await until(() => signal !== undefined);
    await t.session.stop();
    expect(signal!.aborted).toBe(true);
    expect(t.session.state).toBe("idle");
    expect(t.session.liveQuests).toEqual([]);
    expect(t.results).toMatchObject([{ status: "cancelled" }]);
    expect(t.llm.requests).toHaveLength(1);
    expect(t.session.history[1]).toMatchObject({ role: "assistant", toolCalls: [{ status: "cancelled" }] });
  });

  test("handleTool names a defined tool, once; without the tools option it is a ConfigError", () => {
    const { session } = fakeSession({ tools: { definitions: [GET_TIME] } });
    expect(() => session.handleTool("get_weather", () => 1)).toThrow(/no tool named "get_weather".*defined: get_time/);
    const off = session.handleTool("get_time", () => 1);
    expect(() => session.handleTool("get_time", () => 2)).toThrow(ConfigError);
    off();
    session.handleTool("get_time", () => 2);
    expect(() => fakeSession().session.handleTool("get_time", () => 1)).toThrow(/has no tools/);
    expect(() => fakeSession({ tools: { definitions: [{ name: "bad name", parameters: {} }] } })).toThrow(ConfigError);
  });

  test("a history with tool calls seeds a new session: its first request carries them", async () => {
    const first = timeSession();
    first.session.handleTool("get_time", () => "noon");
    await first.session.start();
    await first.user.says("what time is it");
    await first.waitForState("bot_speaking");
    await first.waitForReply();
    await first.player.play();
    await first.session.stop();
    const exported = JSON.parse(JSON.stringify(first.session.history));

    const second = fakeSession({ history: exported, replies: ["Still noon."] });
    await second.session.start();
    await second.user.says("and now");
    await second.waitForState("bot_speaking");
    expect(second.llm.requests[0].messages.filter((m) => m.role === "tool")).toEqual([{ role: "tool", content: "noon", toolCallId: "call_1", name: "get_time" }]);
    await second.session.stop();
  });
});
