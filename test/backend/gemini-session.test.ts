/**
 * `geminiLive` on the emulator, the replies that play out whole (the rig, the
 * backend and what they are: gemini-session-setup.ts): a full turn on a
 * session seeded with history, a main-thread stall at the onset, a misfire
 * over the reply, a tool call, a refused token and server turn detection.
 * The barge-ins are in gemini-session-barge-in.test.ts.
 */
import { expect, test } from "vitest";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { useGeminiBackend, WEATHER } from "./gemini-session-setup.js";

const { mintToken, rig, geminiLog } = useGeminiBackend();

test("a full turn on a session seeded with history: the context gets that history first; activityStart at the onset, activityEnd at the end; the history holds the question as the service heard it, and the reply it spoke", { timeout: 40_000 }, async () => {
  const r = rig({ history: [{ role: "user", text: "my name is Ann" }, { role: "assistant", text: "Hello Ann." }] });
  try {
    await r.session.start();
    await r.say(WEATHER);
    await r.until("the reply to play out", () => r.session.history.length === 4 && r.session.state === "listening");
    const [, , user, bot] = r.session.history;
    expect(user!.text.toLowerCase()).toContain("weather");
    expect(bot).toMatchObject({ role: "assistant", text: elizaReply(user!.text) });
    expect(r.player.writtenSeconds).toBeGreaterThan(3);
    const log = await geminiLog();
    expect(log).toMatchObject({ automaticActivityDetection: false, activityStarts: 1, activityEnds: 1 });
    // One clientContent, before any audio: the seeded turns, asking no reply.
    expect(log.clientContents.map((c: any) => ({ turns: c.turns, turnComplete: c.turnComplete }))).toEqual([
      { turns: [{ role: "user", text: "my name is Ann" }, { role: "model", text: "Hello Ann." }], turnComplete: false },
    ]);
    expect(log.turns).toHaveLength(1);
    expect(log.turns[0].status).toBe("completed");
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("the main thread stalls 600 ms at the onset: the turn still opens with the speech since the onset, by the audio's clock, and the service hears the question whole", { timeout: 40_000 }, async () => {
  const r = rig();
  try {
    await r.session.start();
    await r.say(WEATHER, { stallAtOnsetMs: 600 });
    await r.until("the reply", () => r.session.history.length === 2 && r.session.state === "listening");
    // By the main thread's clock alone the onset was "now", and the service heard "today" (2026-12-05).
    const words = r.session.history[0]!.text.toLowerCase().split(/\W+/);
    expect(["what", "is", "the", "like", "today"].filter((w) => words.includes(w)), r.session.history[0]!.text).toHaveLength(5);
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("a misfire over the reply sends nothing: no clientContent, no activityStart, and the whole reply is kept", { timeout: 40_000 }, async () => {
  const r = rig();
  try {
    await r.session.start();
    await r.say(WEATHER);
    await r.until("1 s of the reply to play", () => r.session.state === "bot_speaking" && r.player.renderedSeconds() > 1);
    await r.say("ah", { misfire: true });
    await r.until("the reply to play out", () => r.session.history.length === 2 && r.session.state === "listening", 30_000);
    const log = await geminiLog();
    expect(log).toMatchObject({ activityStarts: 1, activityEnds: 1, clientContents: [] });
    expect(log.turns).toHaveLength(1);
    expect(log.turns[0].status).toBe("completed");
    expect(r.session.history[1]).toMatchObject({ role: "assistant", text: elizaReply(r.session.history[0]!.text) });
    expect(r.session.history[1]).not.toHaveProperty("interrupted", true);
  } finally {
    await r.close();
  }
});

test("a tool call: the setup declares the session's tools, the toolCall goes through the handler, and its result comes back as a toolResponse", { timeout: 40_000 }, async () => {
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
    expect(r.session.history[1]).toMatchObject({ role: "assistant", text: "The time is ten past two." });
    const log = await geminiLog();
    expect(log.clientContents).toEqual([expect.objectContaining({ turns: [{ role: "user", text: "what time is it" }], turnComplete: true })]);
    expect(log.turns.map((t: any) => t.plan.kind)).toEqual(["function_call", "message"]);
    expect(log.turns[1].input.at(-1)).toEqual({ role: "tool", text: JSON.stringify({ time: "ten past two" }) });
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("a refused token fails start() with the service's close reason, as a ProtocolError", { timeout: 20_000 }, async () => {
  const r = rig({}, async () => "auth_tokens/not-minted-here");
  try {
    const failed = await r.session.start().then(() => null, (e: Error) => e);
    expect(failed?.name).toBe("ProtocolError");
    expect(failed?.message).toContain("API key not valid. Please pass a valid API key.");
    expect(failed?.message).toContain("close 1007");
    expect(failed?.message).not.toContain("not-minted-here");
    expect(r.session.state).toBe("idle");
  } finally {
    await r.close();
  }
});

test("server turn detection: the service's own activity detection ends the turn and answers it; the session replies with that answer", { timeout: 40_000 }, async () => {
  const r = rig({}, mintToken, { turnDetection: "server" });
  try {
    await r.session.start();
    await r.say(WEATHER);
    await r.until("the reply to play out", () => r.session.history.length === 2 && r.session.state === "listening");
    const [user, bot] = r.session.history;
    expect(user!.text.toLowerCase()).toContain("weather");
    expect(bot).toMatchObject({ role: "assistant", text: elizaReply(user!.text) });
    const log = await geminiLog();
    expect(log).toMatchObject({ automaticActivityDetection: true, activityStarts: 0, activityEnds: 0, clientContents: [] });
    expect(log.turns).toHaveLength(1);
    expect(log.turns[0].status).toBe("completed");
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});
