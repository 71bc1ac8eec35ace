/**
 * The session's turn logic in Node, on scripted parts: the providers are the
 * fakes of bargein/testing and the audio parts are a virtual player and VAD
 * (the real worklets and worker are proven in the browser suites). What is
 * checked here is ordering and bookkeeping, which need no audio.
 */
import { describe, expect, test } from "vitest";
import type { PlayerPort, VadPort, CapturePort } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { AtCapacityError, BargeinError, MicrophoneError } from "../../src/errors.js";
import type { SttProvider } from "../../src/providers/types.js";
import { backoffReconnectPolicy, type ReconnectContext, type ReconnectPolicy } from "../../src/session/reconnect-policy.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { setup, speakAndReply } from "./session-setup.js";
import { sleep, until } from "../lib/wait.mjs";

describe("VoiceSession turn logic (scripted parts)", () => {
  test("a full turn: the user's words reach the LLM, the reply is spoken, then the session listens again", async () => {
    const t = setup();
    await t.session.start();
    expect(t.session.state).toBe("listening");
    await speakAndReply(t, ["what", "time", "is", "it"]);
    expect(t.llm.requests[0].messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "what time is it" },
    ]);
    expect(t.tts.streams[0].texts).toEqual(["one", "two", "three", "four", "five", "six"]);
    expect(t.player.written.get(1)).toBe(6 * 0.25 * 24000);
    t.player.playOut(1);
    expect(t.session.state).toBe("listening");
    expect(t.session.history).toEqual([
      { id: "u1", role: "user", text: "what time is it" },
      { id: "a2", role: "assistant", text: "one two three four five six", interrupted: false, unheardText: "" },
    ]);
    expect(t.states).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening"]);
    expect(t.session.metrics.turns).toBe(1);
    await t.session.stop();
    expect(t.session.state).toBe("idle");
    expect(t.disposedCount()).toBe(1);
    expect(t.stt.openStreams).toBe(0);
  });

  test("barge-in: history is cut to the heard words, then flush, then the fence, then TTS and LLM are cancelled", async () => {
    const t = setup({ minSpeechMs: 20 });
    await t.session.start();
    const interruptions: any[] = [];
    t.session.on("interruption", (e) => interruptions.push(e));
    await speakAndReply(t, ["tell", "me", "a", "story"]);
    expect(t.vad.autoPause).toBe(1); // armed with the reply's generation as its token
    // 0.6 s rendered, 0.1 s still in the output path: 0.5 s heard; word midpoints are 0.125, 0.375, 0.625…
    t.player.rendered = 0.6;
    const historyAtFlush: string[] = [];
    const flush = t.player.flush.bind(t.player);
    t.player.flush = () => {
      historyAtFlush.push((t.session.history[1] as any).text);
      flush();
    };
    t.vad.emit("speechStart", { pausedPlayback: true });
    await sleep(30);
    expect(interruptions).toEqual([]); // paused, not yet confirmed
    t.vad.emit("speechRealStart");
    await until(() => interruptions.length === 1);
    await until(() => t.session.liveQuests.join() === "stt");
    expect(interruptions[0]).toMatchObject({ reason: "speech", heardText: "one two", unheardText: "three four five six", heardMs: 500 });
    expect(historyAtFlush).toEqual(["one two"]);
    // No resume: the fence to generation 2 leaves the paused generation 1 behind.
    expect(t.player.log.slice(t.player.log.indexOf("flush"))).toEqual(["flush", "generation=2"]);
    expect(t.player.log.filter((l) => l.startsWith("pause"))).toEqual([]); // the VAD worker paused directly
    expect(t.session.history[1]).toEqual({ id: "a2", role: "assistant", text: "one two", interrupted: true, unheardText: "three four five six" });
    expect(t.vad.autoPause).toBe(null);
    expect(t.session.state).toBe("user_speaking");
    await t.session.stop();
  });

  test("barge-in cancels an LLM that is still streaming, and the TTS socket is closed by the client", async () => {
    const t = setup({ minSpeechMs: 10 });
    t.llm.requests.length = 0;
    const slow = fakeLlm({ reply: () => "a b c d e f g h i j k l m n o p", msPerWord: 40 });
    const session = new VoiceSession(
      { stt: t.stt.provider, llm: slow.provider, tts: t.tts.provider, bargeIn: { minSpeechMs: 10 }, components: async () => ({ player: t.player, vad: t.vad, capture: { on: () => () => {}, setMeter: () => {} }, dispose: async () => {} }) },
    );
    await session.start();
    t.vad.emit("speechStart");
    t.stt.word("hi");
    t.vad.emit("speechEnd");
    await until(() => session.state === "bot_speaking");
    t.vad.emit("speechStart");
    t.vad.emit("speechRealStart");
    await until(() => session.liveQuests.join() === "stt");
    expect(slow.requests[0].aborted).toBe(true);
    expect(slow.requests[0].completed).toBe(false);
    expect(t.tts.streams[0].closedByClient).toBe(true);
    expect(t.player.log).toContain("pause(1)"); // no direct pause: the session paused first
    await session.stop();
  });

  test("barge-in aborts the LLM at once, without waiting for a TTS server slow to answer the close", async () => {
    const t = setup({ minSpeechMs: 10 });
    const slow = fakeLlm({ reply: () => "a b c d e f g h i j k l m n o p q r s t u v w x y z", msPerWord: 40 });
    // A busy TTS server answers the close handshake late: MessageSocket.close() waits up to 1 s for it.
    const CLOSE_ANSWER_MS = 600;
    let closeAnswered = false;
    const slowClosingTts = {
      ...t.tts.provider,
      async connect(signal?: AbortSignal) {
        const stream = await t.tts.provider.connect(signal);
        return {
          ...stream,
          async close() {
            await stream.close();
            await sleep(CLOSE_ANSWER_MS);
            closeAnswered = true;
          },
        };
      },
    };
    const session = new VoiceSession({
      stt: t.stt.provider,
      llm: slow.provider,
      tts: slowClosingTts,
      bargeIn: { minSpeechMs: 10 },
      components: async () => ({ player: t.player, vad: t.vad, capture: { on: () => () => {}, setMeter: () => {} }, dispose: async () => {} }),
    });
    await session.start();
    t.vad.emit("speechStart");
    t.stt.word("hi");
    t.vad.emit("speechEnd");
    await until(() => session.state === "bot_speaking");
    expect(session.liveQuests.sort()).toEqual(["llm", "stt", "tts"]);
    const interruptedAt = performance.now();
    t.vad.emit("speechStart");
    t.vad.emit("speechRealStart");
    await until(() => slow.requests[0].aborted);
    const abortMs = performance.now() - interruptedAt;
    // The LLM is gone while the TTS server has not yet answered the close: it did not wait for it.
    expect(closeAnswered).toBe(false);
    expect(session.liveQuests).toEqual(["stt"]);
    expect(slow.requests[0].completed).toBe(false);
    expect(t.tts.streams[0].closedByClient).toBe(true);
    expect(abortMs).toBeLessThan(CLOSE_ANSWER_MS);
    // The turn is reported once both streams are closed, the slow TTS included.
    await session.once("turn");
    expect(closeAnswered).toBe(true);
    await session.stop();
  });

  test("deltas that arrive after an interruption never reach history or the transcript", async () => {
    const t = setup();
    // An LLM whose stream delivers a few more deltas after the abort (a server slow to stop).
    let release!: () => void;
    const late = new Promise<void>((r) => (release = r));
    const llm = {
      name: "late-llm",
      async *stream() {
        yield "one two three four";
        await late;
        yield " five six";
        yield " seven";
      },
    };
    const session = new VoiceSession(
      { stt: t.stt.provider, llm, tts: t.tts.provider, components: async () => ({ player: t.player, vad: t.vad, capture: { on: () => () => {}, setMeter: () => {} }, dispose: async () => {} }) },
    );
    await session.start();
    const assistantTexts: string[] = [];
    t.vad.emit("speechStart");
    t.stt.word("hi");
    t.vad.emit("speechEnd");
    await until(() => session.state === "bot_speaking");
    t.player.rendered = 0.4; // 0.3 s heard: "one" only
    const interrupted = session.interrupt();
    session.on("transcript", (e) => e.role === "assistant" && assistantTexts.push(e.text));
    release();
    await interrupted;
    await sleep(20);
    expect(session.history[1]).toMatchObject({ text: "one", interrupted: true, unheardText: "two three four" });
    expect(assistantTexts).toEqual([]);
    await session.stop();
  });

  test("words that arrive after the flush timed out join the turn they belong to, not a new one", async () => {
    const t = setup();
    const stt = fakeStt({ flushDelayMs: 200 });
    const session = new VoiceSession(
      { stt: stt.provider, llm: t.llm.provider, tts: t.tts.provider, turn: { flushTimeoutMs: 50 }, components: async () => ({ player: t.player, vad: t.vad, capture: { on: () => () => {}, setMeter: () => {} }, dispose: async () => {} }) },
    );
    const warnings: string[] = [];
    session.on("warning", (e) => warnings.push(e.service));
    await session.start();
    t.vad.emit("speechStart");
    stt.word("please");
    stt.word("turn");
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 1);
    stt.word("lights"); // late, but before the marker
    await sleep(250); // the marker arrives
    stt.word("hello"); // after the marker: new speech
    expect(warnings).toEqual(["stt"]);
    expect(t.llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "please turn" });
    expect(session.history[0]).toEqual({ id: "u1", role: "user", text: "please turn lights" });
    expect(session.history.filter((m) => m.role === "user")).toHaveLength(1);
    await session.stop();
  });

  test("a misfire pauses and resumes playback, and nothing is cancelled", async () => {
    const t = setup({ minSpeechMs: 200 });
    await t.session.start();
    const interruptions: unknown[] = [];
    t.session.on("interruption", (e) => interruptions.push(e));
    await speakAndReply(t, ["hello"]);
    t.vad.emit("speechStart");
    await sleep(50);
    t.vad.emit("misfire");
    await sleep(50);
    expect(t.player.log.slice(-2)).toEqual(["pause(1)", "resume(1)"]);
    expect(interruptions).toEqual([]);
    expect(t.session.state).toBe("bot_speaking");
    expect(t.tts.streams[0].closedByClient).toBe(false);
    t.player.playOut(1);
    expect(t.session.history[1]).toMatchObject({ text: "one two three four five six", interrupted: false });
    await t.session.stop();
  });

  test("an STT word during bot speech confirms the interruption before the VAD's real start", async () => {
    const t = setup({ minSpeechMs: 10_000 });
    await t.session.start();
    const reasons: string[] = [];
    t.session.on("interruption", (e) => reasons.push(e.reason));
    await speakAndReply(t, ["hello"]);
    t.vad.emit("speechStart", { pausedPlayback: true });
    t.stt.word("wait");
    await until(() => reasons.length === 1);
    expect(reasons).toEqual(["words"]);
    await t.session.stop();
  });

  test("interrupt() from a stop button keeps the heard part and returns to listening", async () => {
    const t = setup();
    await t.session.start();
    await speakAndReply(t, ["hello"]);
    t.player.rendered = 0.35; // 0.25 s heard: only "one" (midpoint 0.125)
    await t.session.interrupt();
    expect(t.session.history[1]).toMatchObject({ text: "one", interrupted: true });
    expect(t.session.state).toBe("listening");
    expect(t.session.liveQuests).toEqual(["stt"]);
    await t.session.stop();
  });

  test("a dropped STT socket is reported and replaced; the user's words so far are kept", async () => {
    const t = setup();
    await t.session.start();
    const errors: string[] = [];
    const warnings: string[] = [];
    t.session.on("error", (e) => errors.push(e.error.message));
    t.session.on("warning", (e) => warnings.push(e.service));
    t.vad.emit("speechStart");
    t.stt.word("keep");
    t.stt.drop(new Error("socket dropped"));
    await until(() => warnings.length === 1);
    await until(() => t.stt.openStreams === 1 && t.session.liveQuests.includes("stt"));
    t.stt.word("these");
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 1);
    expect(t.llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "keep these" });
    expect(errors).toEqual(["socket dropped"]);
    await t.session.stop();
  });

  test("the state is reconnecting while the STT is down and no one speaks, and listening again once it is back", async () => {
    const t = setup({ refuseConnections: [2], reconnect: backoffReconnectPolicy({ delaysMs: [0, 30, 60], random: () => 0.5 }) });
    await t.session.start();
    const states: string[] = [];
    t.session.on("state", (e) => states.push(e.state));
    const reconnected = t.session.once("reconnected");
    t.stt.drop(new Error("socket dropped"));
    await until(() => t.session.state === "reconnecting");
    await reconnected;
    expect(t.session.state).toBe("listening");
    expect(states).toEqual(["reconnecting", "listening"]);
    await t.session.stop();
  });

  test("a dropped STT whose first two reconnects are refused is survived under the default policy: reconnecting is reported, the words kept", async () => {
    const t = setup({ refuseConnections: [2, 3], reconnect: backoffReconnectPolicy({ delaysMs: [0, 20, 40], random: () => 0.5 }) });
    await t.session.start();
    const reconnecting: Array<{ attempt: number; delayMs: number; reason: string }> = [];
    const reconnected: number[] = [];
    const errors: Array<{ name: string; fatal: boolean }> = [];
    t.session.on("reconnecting", (e) => reconnecting.push({ attempt: e.attempt, delayMs: e.delayMs, reason: e.reason }));
    t.session.on("reconnected", (e) => reconnected.push(e.attempts));
    t.session.on("error", (e) => errors.push({ name: e.error.name, fatal: e.fatal }));
    t.vad.emit("speechStart");
    t.stt.word("keep");
    t.stt.drop(new Error("socket dropped"));
    await until(() => reconnected.length === 1);
    expect(reconnecting).toEqual([
      { attempt: 1, delayMs: 0, reason: "dropped" },
      { attempt: 2, delayMs: 20, reason: "connect-failed" },
      { attempt: 3, delayMs: 40, reason: "connect-failed" },
    ]);
    expect(reconnected).toEqual([3]);
    expect(errors).toEqual([
      { name: "Error", fatal: false },
      { name: "AtCapacityError", fatal: false },
      { name: "AtCapacityError", fatal: false },
    ]);
    t.stt.word("these");
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 1);
    expect(t.llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "keep these" });
    expect(t.session.state).not.toBe("idle");
    await t.session.stop();
  });

  test("the reconnect policy decides: one that gives up makes the failure fatal, the session stops and keeps the words", async () => {
    const asked: ReconnectContext[] = [];
    const t = setup({ reconnect: { stableMs: 10_000, nextRetryDelayMs: (c) => (asked.push(c), null) } });
    await t.session.start();
    const errors: Array<{ message: string; fatal: boolean }> = [];
    t.session.on("error", (e) => errors.push({ message: e.error.message, fatal: e.fatal }));
    t.vad.emit("speechStart");
    t.stt.word("keep");
    t.stt.drop(new Error("socket dropped"));
    await until(() => t.session.state === "idle");
    expect(asked).toMatchObject([{ retryCount: 0, reason: "dropped" }]);
    expect(errors).toEqual([
      { message: "socket dropped", fatal: false },
      { message: "socket dropped", fatal: true },
    ]);
    expect(t.session.history).toEqual([{ id: "u1", role: "user", text: "keep" }]);
    expect(t.stt.openStreams).toBe(0);
  });

  test("a dropped STT gets the speech it had not turned into words: the new stream hears it first, and an open word is not counted twice", async () => {
    const t = setup();
    await t.session.start();
    const transcripts: string[] = [];
    t.session.on("transcript", (e) => e.role === "user" && transcripts.push(e.text));
    // 80 ms frames at 24 kHz; frame k is filled with k, so the test can tell which ones came back.
    const frame = (k: number) => new Float32Array(1920).fill(k);
    const speak = (from: number, to: number) => {
      for (let k = from; k < to; k++) t.captureEvents.emit("frame", { pcm: frame(k), capturedAt: 0 });
    };
    t.vad.emit("speechStart");
    speak(0, 10); // 0.8 s
    t.stt.word("can", 0.1);
    t.stt.wordEnd(0.3);
    t.stt.word("you", 0.35); // still open: its end never comes
    await until(() => transcripts.at(-1) === "can you");
    t.stt.drop(new Error("socket dropped"));
    speak(10, 13); // caught while reconnecting
    await until(() => t.stt.received.length === 2 && t.stt.received[1].length > 0);
    speak(13, 14); // live again
    const firstOfFrame = t.stt.received[1].map((f) => f[0]);
    // From the open word's frame (0.35 s is in frame 4) through the reconnect, then live audio.
    expect(firstOfFrame).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(t.session.metrics.sttReplayedSamples).toBe(9 * 1920);
    // "you" will be heard again from the replay, so it is taken back until it is.
    expect(transcripts.at(-1)).toBe("can");
    t.stt.word("you", 0.0);
    t.stt.word("help", 0.3);
    t.vad.emit("speechEnd");
    await until(() => t.llm.requests.length === 1);
    expect(t.llm.requests[0].messages.at(-1)).toEqual({ role: "user", content: "can you help" });
    await t.session.stop();
  });

  test("no replay after a drop when nobody spoke recently, or with uplink.replayMs: 0", async () => {
    for (const replayMs of [3000, 0]) {
      const stt = fakeStt({ keepAudio: true });
      const vad = new VirtualVad();
      const captureEvents = new Emitter<any>();
      const session = new VoiceSession(
        { stt: stt.provider, llm: fakeLlm().provider, tts: fakeTts().provider, uplink: { replayMs }, components: async () => ({ player: new VirtualPlayer(), vad, capture: { on: (n: any, fn: any) => captureEvents.on(n, fn), setMeter: () => {} }, dispose: async () => {} }) },
      );
      await session.start();
      if (replayMs === 0) vad.emit("speechStart"); // speaking, but replay is off
      // A quiet room (-60 dBFS): nothing the replay would take for sound.
      for (let k = 0; k < 5; k++) captureEvents.emit("frame", { pcm: new Float32Array(1920).fill(0.001 * (k + 1)), capturedAt: 0 });
      stt.drop(new Error("socket dropped"));
      await until(() => stt.received.length === 2 && session.liveQuests.includes("stt"));
      expect(stt.received[1]).toEqual([]);
      expect(session.metrics.sttReplayedSamples).toBe(0);
      await session.stop();
    }
  });

  test("a reconnect that outlasts uplink.replayMs warns that the start of the user's speech was not sent again, and how much", async () => {
    const stt = fakeStt({ keepAudio: true }); // 24 kHz
    const vad = new VirtualVad();
    const captureEvents = new Emitter<any>();
    const session = new VoiceSession(
      { stt: stt.provider, llm: fakeLlm().provider, tts: fakeTts().provider, uplink: { replayMs: 200 }, components: async () => ({ player: new VirtualPlayer(), vad, capture: { on: (n: any, fn: any) => captureEvents.on(n, fn), setMeter: () => {} }, dispose: async () => {} }) },
    );
    const warnings: string[] = [];
    session.on("warning", (w) => warnings.push(`${w.service}: ${w.message}`));
    await session.start();
    vad.emit("speechStart");
    // 400 ms of speech, 100 ms a frame, with no word back: the bound keeps the last 200 ms.
    for (let k = 0; k < 4; k++) captureEvents.emit("frame", { pcm: new Float32Array(2400).fill(0.2), capturedAt: 0 });
    stt.drop(new Error("socket dropped"));
    await until(() => stt.received.length === 2 && session.liveQuests.includes("stt"));
    expect(stt.received[1].map((f) => f.length)).toEqual([2400, 2400]);
    expect(warnings.filter((w) => w.includes("replayMs"))).toEqual([
      "stt: the reconnect outlasted uplink.replayMs (200 ms): 200 ms of the user's speech before it were not sent again, so its words may be missing; raise uplink.replayMs to keep more",
    ]);
    await session.stop();
  });

  test("a drop just as the user starts to speak, before the VAD has called it, still replays the sound to the new stream", async () => {
    const t = setup();
    await t.session.start();
    // Sound the VAD has not called speech yet (its decision comes a frame or more later).
    for (let k = 0; k < 3; k++) t.captureEvents.emit("frame", { pcm: new Float32Array(1920).fill(0.2), capturedAt: 0 });
    t.stt.drop(new Error("socket dropped"));
    await until(() => t.stt.received.length === 2 && t.session.liveQuests.includes("stt"));
    expect(t.stt.received[1].map((f) => f.length)).toEqual([1920, 1920, 1920]);
    expect(t.session.metrics.sttReplayedSamples).toBe(3 * 1920);
    await t.session.stop();
  });

  test("start() after stop() starts the session again: a new STT stream, a turn that works, and the history carried on", async () => {
    const t = setup();
    await t.session.start();
    await speakAndReply(t, ["one", "question"]);
    t.player.playOut(1);
    await t.session.stop();
    expect(t.session.state).toBe("idle");
    await t.session.start();
    expect(t.session.state).toBe("listening");
    expect(t.session.liveQuests).toEqual(["stt"]);
    await speakAndReply(t, ["another"]);
    expect(t.llm.requests.at(-1)!.messages.at(-1)).toEqual({ role: "user", content: "another" });
    expect(t.session.history.map((m) => m.id)).toEqual(["u1", "a2", "u3", "a4"]);
    await expect(t.session.start()).rejects.toHaveProperty("name", "StateError");
    await t.session.stop();
    expect(t.session.liveQuests).toEqual([]);
    expect(t.disposedCount()).toBe(2);
  });

  test("stop() in the middle of the user's turn keeps the words said so far as a final user message", async () => {
    const t = setup();
    await t.session.start();
    const finals: string[] = [];
    let partial = "";
    t.session.on("transcript", (e) => e.role === "user" && (e.final ? finals.push(e.text) : (partial = e.text)));
    t.vad.emit("speechStart");
    t.stt.word("remember");
    t.stt.word("the");
    t.stt.word("milk");
    await until(() => t.session.state === "user_speaking" && partial === "remember the milk");
    await t.session.stop();
    expect(t.session.history).toEqual([{ id: "u1", role: "user", text: "remember the milk" }]);
    expect(finals).toEqual(["remember the milk"]);
    expect(t.llm.requests).toHaveLength(0);
    expect(t.stt.openStreams).toBe(0);
  });

  test("a TTS that fails mid-reply: the voiced words play out, the rest is kept as unheard, and the next turn works", async () => {
    const t = setup({ ttsFailAfterWords: 2 });
    await t.session.start();
    const errors: Array<{ error: Error; fatal: boolean }> = [];
    t.session.on("error", (e) => errors.push(e));
    t.vad.emit("speechStart");
    t.stt.word("hello");
    t.vad.emit("speechEnd");
    await until(() => t.session.state === "bot_speaking" && t.llm.requests[0]?.completed === true);
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ fatal: false, error: { message: expect.stringContaining("failed after 2 words") } });
    expect(t.player.written.get(1)).toBe(2 * 0.25 * 24000);
    t.player.playOut(1);
    expect(t.session.history[1]).toEqual({ id: "a2", role: "assistant", text: "one two", interrupted: true, unheardText: "three four five six" });
    expect(t.session.state).toBe("listening");
    expect(t.session.liveQuests).toEqual(["stt"]);
    await t.session.stop();
  });

  test("a late pause from the VAD worker (it raced the disarm) cannot hold the next reply: its token is stale", async () => {
    const t = setup();
    await t.session.start();
    await speakAndReply(t, ["hello"]);
    t.player.playOut(1);
    expect(t.vad.autoPause).toBe(null);
    // The worker's auto-pause for reply 1, landing after that turn ended.
    t.player.pause(1);
    t.vad.emit("speechStart", { pausedPlayback: true });
    expect(t.session.state).toBe("user_speaking");
    t.stt.word("again");
    t.vad.emit("speechEnd");
    // Reply 2 starts (its first sample is heard) with nothing resuming the player.
    await until(() => t.session.state === "bot_speaking");
    expect(t.player.paused).toBe(false);
    expect(t.player.log.filter((l) => l.startsWith("resume"))).toEqual([]);
    t.player.playOut(2);
    expect(t.session.state).toBe("listening");
    expect(t.session.metrics.turns).toBe(2);
    await t.session.stop();
  });

  test("a reply written while a stale pause still holds the player starts unpaused, plays and ends the turn", async () => {
    const t = setup();
    await t.session.start();
    t.player.pause(0); // a worker pause that landed after the session's own resume
    expect(t.player.paused).toBe(true);
    await speakAndReply(t, ["what", "time", "is", "it"]);
    expect(t.player.paused).toBe(false);
    t.player.playOut(1);
    expect(t.session.state).toBe("listening");
    expect(t.session.metrics.turns).toBe(1);
    await t.session.stop();
  });

  test("capture gaps the browser caused are counted in metrics, and the session goes on listening", async () => {
    const t = setup();
    await t.session.start();
    expect(t.session.metrics.captureGaps).toEqual({ count: 0, ms: 0 });
    t.captureEvents.emit("gap", { ms: 2.5 });
    t.captureEvents.emit("gap", { ms: 5 });
    expect(t.session.metrics.captureGaps).toEqual({ count: 2, ms: 7.5 });
    expect(t.session.state).toBe("listening");
    await t.session.stop();
  });

  test("an AudioContext that is suspended is a warning and the session goes on; one that is closed is a fatal AudioContextError", async () => {
    const t = setup();
    await t.session.start();
    const warnings: string[] = [];
    const errors: Array<{ error: Error; fatal: boolean }> = [];
    t.session.on("warning", (e) => warnings.push(`${e.service}: ${e.message}`));
    t.session.on("error", (e) => errors.push(e));
    t.player.events.emit("contextState" as any, { state: "suspended" } as any);
    expect(warnings).toEqual([expect.stringMatching(/^audio: the AudioContext is suspended: no audio is captured or played/)]);
    expect(t.session.state).toBe("listening");
    t.player.events.emit("contextState" as any, { state: "closed" } as any);
    await until(() => t.session.state === "idle");
    expect(errors).toHaveLength(1);
    expect(errors[0].fatal).toBe(true);
    expect(errors[0].error.name).toBe("AudioContextError");
    expect(errors[0].error.message).toMatch(/AudioContext was closed.*call start\(\) again/);
    expect(t.stt.openStreams).toBe(0);
  });

  test("an AudioContext interrupted mid-reply (WebKit: a phone call) cuts the reply at what was heard, says so, and the session listens again once it runs", async () => {
    const t = setup();
    await t.session.start();
    const audio: string[] = [];
    const interruptions: Array<{ reason: string; heardText: string }> = [];
    t.session.on("audioState", (e) => audio.push(e.state));
    t.session.on("interruption", (e) => interruptions.push(e));
    await speakAndReply(t, ["hello"]);
    t.player.rendered = 0.35; // 0.25 s heard: only "one"
    t.player.events.emit("contextState" as any, { state: "interrupted" } as any);
    await until(() => interruptions.length === 1);
    expect(interruptions[0]).toMatchObject({ reason: "audio", heardText: "one" });
    expect(t.session.history[1]).toMatchObject({ text: "one", interrupted: true });
    expect(t.session.state).toBe("listening");
    // Nothing of the reply is left to play when the audio comes back.
    expect(t.session.liveQuests).toEqual(["stt"]);
    t.player.events.emit("contextState" as any, { state: "running" } as any);
    expect(audio).toEqual(["interrupted", "running"]);
    // Suspended with no reply playing: said, and nothing to cut.
    t.player.events.emit("contextState" as any, { state: "suspended" } as any);
    expect(audio).toEqual(["interrupted", "running", "suspended"]);
    expect(interruptions).toHaveLength(1);
    await t.session.stop();
  });

  test.each([
    ["the microphone's track ends", (t: ReturnType<typeof setup>) => t.captureEvents.emit("ended", undefined), MicrophoneError, /microphone stopped.*call start\(\) again/],
    ["the VAD worker fails", (t: ReturnType<typeof setup>) => t.vad.events.emit("error", { error: new BargeinError("the VAD worker failed while detecting speech: boom", { service: "vad" }) }), BargeinError, /VAD worker failed.*boom/],
  ])("when %s mid-reply, the session reports a fatal error, stops cleanly and keeps the transcript", async (_name, fault, type, message) => {
    const t = setup();
    await t.session.start();
    const errors: Array<{ error: Error; fatal: boolean }> = [];
    t.session.on("error", (e) => errors.push(e));
    await speakAndReply(t, ["tell", "me", "a", "story"]);
    t.player.rendered = 0.3; // less the 0.1 s output latency: 0.2 s heard, past the middle of "one" only
    fault(t);
    await until(() => t.session.state === "idle");
    expect(errors).toHaveLength(1);
    expect(errors[0].fatal).toBe(true);
    expect(errors[0].error).toBeInstanceOf(type);
    expect(errors[0].error.message).toMatch(message);
    if (type === MicrophoneError) expect((errors[0].error as MicrophoneError).reason).toBe("ended");
    // The reply is cut to what was heard, as after a barge-in.
    expect(t.session.history).toEqual([
      { id: "u1", role: "user", text: "tell me a story" },
      { id: "a2", role: "assistant", text: "one", interrupted: true, unheardText: "two three four five six" },
    ]);
    expect(t.session.liveQuests).toEqual([]);
    expect(t.stt.openStreams).toBe(0);
    expect(t.disposedCount()).toBe(1);
  });
});
