/**
 * The order and meaning of the session's events, as the README's "Events"
 * writes them down: every message has a stable id, `final` comes once per
 * message, a late word is a revision, and `transcript`, `interruption`,
 * `turn` and `state` come in a fixed order on each path.
 */
import { describe, expect, test } from "vitest";
import { VoiceSession } from "../../src/session/voice-session.js";
import { TranscriptFeed } from "../../src/session/transcript-feed.js";
import { fakeStt } from "../../src/testing/fake-providers.js";
import { setup, speakAndReply } from "./session-setup.js";
import { sleep, until } from "../lib/wait.mjs";

type Session = VoiceSession;

/** Every event as one line: `state listening`, `u1 partial what`, `a2 final one two`, `interruption speech`, `turn`. */
function record(session: Session): string[] {
  const log: string[] = [];
  session.on("state", (e) => log.push(`state ${e.state}`));
  session.on("transcript", (e) => log.push(`${e.id} ${e.final ? "final" : e.revised ? "revised" : "partial"} ${e.text}`));
  session.on("interruption", (e) => log.push(`interruption ${e.reason}`));
  session.on("turn", () => log.push("turn"));
  return log;
}

/** The log with the assistant's partials (one per LLM token) folded into one line. */
function folded(log: string[]): string[] {
  return log.filter((line, i) => !(/^a\d+ partial/.test(line) && /^a\d+ partial/.test(log[i + 1] ?? "")));
}

describe("transcript, interruption, turn and state: ids, finals and order", () => {
  test("a full turn: the user's partials and final, then thinking, the reply's partials, speaking, its final, the turn, listening", async () => {
    const t = setup();
    const log = record(t.session);
    await t.session.start();
    await speakAndReply(t, ["what", "time"]);
    t.player.playOut(1);
    // The reply's partials stream on while its audio starts: `bot_speaking` comes among them.
    expect(log.filter((l) => !/^a2 partial/.test(l))).toEqual([
      "state connecting",
      "state listening",
      "state user_speaking",
      "u1 partial what",
      "u1 partial what time",
      "u1 final what time",
      "state bot_thinking",
      "state bot_speaking",
      "a2 final one two three four five six",
      "turn",
      "state listening",
    ]);
    const partials = log.flatMap((l, i) => (/^a2 partial/.test(l) ? [i] : []));
    expect(log[partials[0] - 1]).toBe("state bot_thinking");
    expect(log[partials.at(-1)! + 1]).toBe("a2 final one two three four five six");
    expect(log[partials.at(-1)!]).toBe("a2 partial one two three four five six");
    expect(t.session.history.map((m) => m.id)).toEqual(["u1", "a2"]);
    await t.session.stop();
  });

  test("a barge-in: the interruption, then the reply's final with the heard words only, then the user's floor; the turn once the streams are gone", async () => {
    const t = setup({ minSpeechMs: 20 });
    const log = record(t.session);
    await t.session.start();
    await speakAndReply(t, ["tell", "me"]);
    t.player.rendered = 0.6; // 0.5 s heard after the output latency: "one two"
    const at = log.length;
    t.vad.emit("speechStart", { pausedPlayback: true });
    t.vad.emit("speechRealStart");
    await until(() => log.includes("turn"));
    t.stt.word("stop");
    await until(() => log.at(-1) === "u3 partial stop");
    expect(folded(log.slice(at))).toEqual(["interruption speech", "a2 final one two", "state user_speaking", "turn", "u3 partial stop"]);
    expect(log.filter((l) => /^a2 final/.test(l))).toHaveLength(1);
    await t.session.stop();
  });

  test("a late word after a missed flush revises the user's final message (same id, revised, not final); later speech is a new message", async () => {
    const t = setup();
    const stt = fakeStt({ flushDelayMs: 200 });
    const session = new VoiceSession(
      {
        stt: stt.provider, llm: t.llm.provider, tts: t.tts.provider, turn: { flushTimeoutMs: 50 },
        components: async () => ({ player: t.player, vad: t.vad, capture: { on: () => () => {}, setMeter: () => {} }, dispose: async () => {} }),
      },
    );
    const log = record(session);
    const events: any[] = [];
    session.on("transcript", (e) => e.role === "user" && events.push(e));
    await session.start();
    t.vad.emit("speechStart");
    stt.word("please");
    stt.word("turn");
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 1);
    stt.word("lights"); // late, before the marker
    await sleep(250); // the marker arrives
    stt.word("hello"); // after the marker: new speech
    await until(() => log.at(-1) === "u3 partial hello");
    expect(log.filter((l) => /^u/.test(l))).toEqual(["u1 partial please", "u1 partial please turn", "u1 final please turn", "u1 revised please turn lights", "u3 partial hello"]);
    expect(events.filter((e) => e.final)).toEqual([{ id: "u1", role: "user", text: "please turn", final: true, revised: false }]);
    expect(events.find((e) => e.revised)).toEqual({ id: "u1", role: "user", text: "please turn lights", final: false, revised: true });
    expect(session.history[0]).toEqual({ id: "u1", role: "user", text: "please turn lights" });
    await session.stop();
  });

  test("a word over the reply interrupts it (its final, heard part, comes first); stop() then makes the user's words so far a final message of their own id", async () => {
    const t = setup();
    const log = record(t.session);
    await t.session.start();
    await speakAndReply(t, ["tell", "me"]);
    t.player.rendered = 0.35; // 0.25 s heard: "one"
    t.vad.emit("speechStart");
    t.stt.word("wait");
    await until(() => log.includes("u3 partial wait"));
    await t.session.stop();
    const finals = log.filter((l) => / final /.test(l));
    expect(finals).toEqual(["u1 final tell me", "a2 final one", "u3 final wait"]);
    expect(log).toContain("interruption words");
    expect(t.session.history.map((m) => `${m.id} ${m.text}`)).toEqual(["u1 tell me", "a2 one", "u3 wait"]);
    expect(log.at(-1)).toBe("state idle");
  });

  test("stop() mid-reply: the reply's final with what was heard, then idle, and no turn report", async () => {
    const t = setup();
    const log = record(t.session);
    await t.session.start();
    await speakAndReply(t, ["tell", "me"]);
    t.player.rendered = 0.6;
    await t.session.stop();
    expect(log.slice(log.indexOf("state bot_speaking") + 1).filter((l) => !/partial/.test(l))).toEqual(["a2 final one two", "state idle"]); // no turn report: the session ended, not the turn
  });
});

describe("TranscriptFeed", () => {
  test("ids are stable per message; final is said once; a change after it is a revision; partials after it are dropped", () => {
    const feed = new TranscriptFeed();
    const u = feed.openUserId();
    expect(feed.openUserId()).toBe(u);
    expect(feed.partial(u, "user", "hi")).toEqual({ id: "u1", role: "user", text: "hi", final: false, revised: false });
    expect(feed.partial(u, "user", "hi")).toBeUndefined(); // unchanged
    expect(feed.closeUser()).toBe("u1");
    expect(feed.final(u, "user", "hi there")).toEqual({ id: "u1", role: "user", text: "hi there", final: true, revised: false });
    expect(feed.final(u, "user", "hi there")).toBeUndefined();
    expect(feed.partial(u, "user", "hi there you")).toBeUndefined();
    expect(feed.final(u, "user", "hi there you")).toEqual({ id: "u1", role: "user", text: "hi there you", final: false, revised: true });
    expect(feed.newId("assistant")).toBe("a2");
    expect(feed.openUserId()).toBe("u3");
  });
});
