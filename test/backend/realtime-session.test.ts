/**
 * `openaiRealtime` on the emulator, the turns that go to their end (the rig,
 * the backend and what they are: realtime-session-setup.ts): a full turn on a
 * session seeded with history, a tool call, a refused key and server turn
 * detection. The barge-ins are in realtime-session-barge-in.test.ts.
 */
import { expect, test } from "vitest";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { KEY, STORY, useRealtimeBackend } from "./realtime-session-setup.js";

const { rig, realtimeLog } = useRealtimeBackend();

test("a full turn on a session seeded with history: the model reads that history first; the history holds the question as the service heard it, and the reply the model spoke", { timeout: 60_000 }, async () => {
  const seed = [
    { role: "user" as const, text: "my name is Ann" },
    { role: "assistant" as const, text: "Hello Ann." },
  ];
  const r = rig({ history: seed });
  try {
    await r.session.start();
    await r.say(STORY);
    // The story is 17 s of audio: 20 s to play it out ran short beside five other files on a slow machine.
    await r.until("the reply to play out", () => r.session.history.length === 4 && r.session.state === "listening", 40_000);
    const [, , user, bot] = r.session.history;
    // The service's conversation starts empty: the seeded turns went in first, before the spoken question.
    const read = (await realtimeLog()).responses[0].input.map((i: any) => [i.role, i.text]);
    expect(read).toEqual([["user", "my name is Ann"], ["assistant", "Hello Ann."], ["user", user!.text]]);
    expect(user).toMatchObject({ role: "user" });
    expect(user!.text.toLowerCase()).toContain("story");
    expect(bot).toMatchObject({ role: "assistant", text: elizaReply(user!.text) });
    expect(r.player.writtenSeconds).toBeGreaterThan(3);
    const log = await realtimeLog();
    expect(log.truncates).toEqual([]);
    expect(log.responses).toHaveLength(1);
    expect(log.responses[0].status).toBe("completed");
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("a tool call: the model's function_call goes through the session's tool handler, and its output comes back for the spoken answer", { timeout: 40_000 }, async () => {
  const r = rig({ tools: { definitions: [{ name: "get_time", description: "The time now", parameters: { type: "object", properties: {} } }] } });
  const calls: string[] = [];
  r.session.handleTool("get_time", async (call) => {
    calls.push(call.name);
    return { time: "ten past two" };
  });
  try {
    await r.session.start();
    r.session.sendText("what time is it");
    await r.until("the answer to play out", () => r.session.history.length === 2 && r.session.state === "listening");
    expect(calls).toEqual(["get_time"]);
    expect(r.session.history[0]).toMatchObject({ role: "user", text: "what time is it" });
    expect(r.session.history[1]).toMatchObject({ role: "assistant", text: "The time is ten past two." });
    const log = await realtimeLog();
    expect(log.responses.map((x: any) => x.plan.kind)).toEqual(["function_call", "message"]);
    expect(log.responses[1].input.at(-1)).toEqual({ role: "function_call_output", text: JSON.stringify({ time: "ten past two" }) });
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("a refused key fails start() with the service's own words, as a ProtocolError", { timeout: 20_000 }, async () => {
  const r = rig({}, async () => "sk-wrong-key-0000");
  try {
    const failed = await r.session.start().then(() => null, (e: Error) => e);
    expect(failed?.name).toBe("ProtocolError");
    expect(failed?.message).toContain("Incorrect API key provided");
    expect(failed?.message).toContain("invalid_api_key");
    expect(r.session.state).toBe("idle");
  } finally {
    await r.close();
  }
});

test("server turn detection: the service commits the turn on its own VAD, and the session replies to its transcript", { timeout: 60_000 }, async () => {
  const r = rig({}, async () => KEY, { turnDetection: "server_vad" });
  try {
    await r.session.start();
    await r.say(STORY);
    // The story is 17 s of audio: as in the full turn above, 20 s to play it out ran short under load.
    await r.until("the reply to play out", () => r.session.history.length === 2 && r.session.state === "listening", 40_000);
    const [user, bot] = r.session.history;
    expect(user!.text.toLowerCase()).toContain("story");
    expect(bot).toMatchObject({ role: "assistant", text: elizaReply(user!.text) });
    const log = await realtimeLog();
    // One response, the client's: the server's VAD did not create or cancel one by itself.
    expect(log.responses).toHaveLength(1);
    expect(log.responses[0].status).toBe("completed");
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});
