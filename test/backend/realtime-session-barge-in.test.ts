/**
 * `openaiRealtime` on the emulator, the turns cut short (the rig, the backend
 * and what they are: realtime-session-setup.ts): a barge-in, a misfire over
 * the reply, and a socket that drops mid-reply. The turns that go to their
 * end are in realtime-session.test.ts.
 */
import { expect, test } from "vitest";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { KEY, STORY, useRealtimeBackend } from "./realtime-session-setup.js";

const { rig, realtimeLog } = useRealtimeBackend();

test("a barge-in: the reply is cancelled and its item truncated at the rendered ms, and the next response reads only the heard words (the client's note: the truncate deleted the transcript)", { timeout: 45_000 }, async () => {
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
    // The truncate deleted the item's transcript; the model reads the heard words in the client's note.
    expect(log.responses[1].input.find((i: any) => i.role === "assistant").text).toBe("");
    const note = log.responses[1].input.find((i: any) => i.role === "system").text as string;
    const heardByModel = /"(.*)"/.exec(note)![1]!;
    const story = elizaReply(STORY);
    expect(story.startsWith(heardByModel)).toBe(true);
    expect(heardByModel.length).toBeLessThan(story.length);
    const bot = r.session.history[1]!;
    expect(bot).toMatchObject({ role: "assistant", interrupted: true });
    // The note holds the client's heard text; the client's estimate (no word timings on the wire)
    // against the words the service's own cut kept (its log: it no longer keeps them in the item).
    expect(heardByModel).toBe(bot.text);
    const ours = bot.text.split(/\s+/).filter(Boolean);
    const theirs = (cut.heard as string).split(/\s+/).filter(Boolean);
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
