/**
 * A VoiceSession on `openaiRealtime` against the reference backend's OpenAI
 * Realtime emulator (real pocketsphinx hears, ELIZA answers, flite speaks),
 * with client turn detection: a full turn, a barge-in (cancel + truncate
 * with the rendered ms of the item, as the emulator's /__realtime/log
 * shows) and a VAD misfire (nothing sent).
 *
 * The audio parts are bargein/testing's public fakes: a FakePlayer on a
 * FakeClock that runs with real time (it "renders" what the session
 * writes), a FakeVad whose speech events the test emits where its speech
 * is, and a FakeMicrophone that the test feeds with real speech (flite's
 * words, 24 kHz s16) and silence in 20 ms frames at real-time pace. The real
 * worklets and VAD worker run in test/browser/realtime.spec.ts.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { speechToSpeechRig, type RigOptions } from "./speech-to-speech-rig.js";

const KEY = "realtime-session-key";
const STORY = "tell me a long story";
let backend: ReferenceBackend;

beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

/**
 * One session on the emulator (test/backend/speech-to-speech-rig.ts), with the fakes; the mic streams
 * silence until `say`. `token`: the key the session is given; `query`: fault knobs on the socket's URL;
 * `provider`: openaiRealtime's other options.
 */
function rig(session: RigOptions["session"] = {}, token: () => Promise<string> = async () => KEY, { query = "", ...provider }: { query?: string; turnDetection?: string } = {}) {
  const r = speechToSpeechRig(backend, "openai", KEY, { session, token, knobs: query.replace(/^\?/, ""), provider });
  return { ...r, errors: r.seen.errors };
}

async function realtimeLog(): Promise<any> {
  const res = await fetch(`${backend.url}/__realtime/log`);
  const { sessions } = await res.json();
  return sessions.at(-1);
}

test("a full turn on a session seeded with history: the model reads that history first; the history holds the question as the service heard it, and the reply the model spoke", { timeout: 40_000 }, async () => {
  const seed = [
    { role: "user" as const, text: "my name is Ann" },
    { role: "assistant" as const, text: "Hello Ann." },
  ];
  const r = rig({ history: seed });
  try {
    await r.session.start();
    await r.say(STORY);
    await r.until("the reply to play out", () => r.session.history.length === 4 && r.session.state === "listening");
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

test("a barge-in: the reply is cancelled and its item truncated at the rendered ms, and the next response reads only the heard words", { timeout: 45_000 }, async () => {
  const r = rig();
  try {
    await r.session.start();
    await r.say(STORY);
    await r.until("2 s of the reply to play", () => r.session.state === "bot_speaking" && r.player.renderedSeconds() > 2);
    let renderedAtCut = NaN;
    r.session.on("interruption", (e) => (renderedAtCut = e.heardMs));
    await r.say("please stop");
    await r.until("the reply to the barge-in", () => r.session.history.length === 4 && r.session.state === "listening", 30_000);
    const log = await realtimeLog();
    expect(log.truncates).toHaveLength(1);
    const cut = log.truncates[0];
    expect(cut).toMatchObject({ content_index: 0, accepted: true });
    expect(cut.audio_end_ms).toBeLessThanOrEqual(cut.audioSentMs);
    // The FakePlayer has no output latency: the heard ms is the rendered ms, floored to whole ms.
    expect(Math.abs(cut.audio_end_ms - renderedAtCut)).toBeLessThan(1);
    expect(log.responses[0]).toMatchObject({ status: "cancelled", reason: "client_cancelled" });
    const heardByModel = log.responses[1].input.find((i: any) => i.role === "assistant").text as string;
    const story = elizaReply(STORY);
    expect(story.startsWith(heardByModel)).toBe(true);
    expect(heardByModel.length).toBeLessThan(story.length);
    const bot = r.session.history[1]!;
    expect(bot).toMatchObject({ role: "assistant", interrupted: true });
    // The client's estimate of the heard words (no word timings on the wire) against the service's cut.
    const ours = bot.text.split(/\s+/).filter(Boolean);
    const theirs = heardByModel.split(/\s+/).filter(Boolean);
    expect(story.startsWith(bot.text)).toBe(true);
    expect(Math.abs(ours.length - theirs.length)).toBeLessThanOrEqual(1);
    expect(r.errors).toEqual([]);
  } finally {
    await r.close();
  }
});

test("a misfire over the reply sends nothing: no cancel, no truncate, and the whole reply is kept", { timeout: 40_000 }, async () => {
  const r = rig();
  try {
    await r.session.start();
    await r.say(STORY);
    await r.until("1 s of the reply to play", () => r.session.state === "bot_speaking" && r.player.renderedSeconds() > 1);
    await r.say("ah", { misfire: true });
    await r.until("the reply to play out", () => r.session.history.length === 2 && r.session.state === "listening", 30_000);
    const log = await realtimeLog();
    expect(log.truncates).toEqual([]);
    expect(log.responses).toHaveLength(1);
    expect(log.responses[0].status).toBe("completed");
    expect(r.session.history[1]).toMatchObject({ role: "assistant", text: elizaReply(STORY) });
    expect(r.session.history[1]).not.toHaveProperty("interrupted", true);
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

test("server turn detection: the service commits the turn on its own VAD, and the session replies to its transcript", { timeout: 40_000 }, async () => {
  const r = rig({}, async () => KEY, { turnDetection: "server_vad" });
  try {
    await r.session.start();
    await r.say(STORY);
    await r.until("the reply to play out", () => r.session.history.length === 2 && r.session.state === "listening");
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

test("the socket drops mid-reply: the reply ends with a ConnectionClosedError, the session reconnects with a fresh key, puts the conversation back and answers the next turn", { timeout: 60_000 }, async () => {
  let tokens = 0;
  // Every connection drops after 60 server events: mid-way through the story's audio, after a short reply's.
  const r = rig({}, async () => (tokens++, KEY), { query: "?drop_after=60" });
  const reconnects: string[] = [];
  r.session.on("reconnecting", (e) => reconnects.push(`reconnecting ${e.reason}`));
  r.session.on("reconnected", () => reconnects.push("reconnected"));
  try {
    await r.session.start();
    await r.say(STORY);
    await r.until("the reconnect", () => reconnects.includes("reconnected") && r.session.state === "listening", 30_000);
    expect(reconnects[0]).toBe("reconnecting dropped");
    expect(tokens).toBe(2);
    expect(r.errors.map((e) => e.name)).toContain("ConnectionClosedError");
    await r.say("please stop");
    await r.until("the next reply", () => r.session.history.length === 4 && r.session.state === "listening", 30_000);
    expect(r.session.history[3]).toMatchObject({ role: "assistant", text: elizaReply(r.session.history[2]!.text) });
    // The new socket's conversation began empty: its first response read the earlier turn (the question,
    // and the heard part of the cut story when some of it was heard), then the new question.
    const [question, story, next] = r.session.history;
    const earlier = [question!, story!].filter((m) => m.text.trim()).map((m) => [m.role, m.text]);
    expect(earlier[0]).toEqual(["user", question!.text]);
    const read = (await realtimeLog()).responses[0].input.map((i: any) => [i.role, i.text]);
    expect(read).toEqual([...earlier, ["user", next!.text]]);
  } finally {
    await r.close();
  }
});
