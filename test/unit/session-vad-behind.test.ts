/**
 * A VAD behind the STT (a starved worker): the session keeps the STT's words and pause behind what the
 * VAD has heard (stt-gate.ts), so the turn is the VAD's and the STT's together, in audio order. Before,
 * the STT's pause ended a turn the VAD had not heard yet, and the VAD's late speech start then cut the
 * reply as a barge-in (the flake finder, consumer-vite.spec under load).
 */
import { describe, expect, test } from "vitest";
import { setup } from "./session-setup.js";
import { sleep, until } from "../lib/wait.mjs";

function captureUpTo(t: ReturnType<typeof setup>, contextTime: number) {
  t.captureEvents.emit("frame", { pcm: new Float32Array(160), capturedAt: contextTime, capturedAtMs: performance.now() });
}

describe("VoiceSession with the VAD behind the STT", () => {
  test("the STT's words and pause wait for the VAD: one user turn, one reply, no interruption", async () => {
    const t = setup();
    await t.session.start();
    const interruptions: unknown[] = [];
    t.session.on("interruption", (e) => interruptions.push(e));
    // The VAD has judged up to 8 s; the mic is at 10 s: 2 s behind.
    t.vad.emit("judged", { contextTime: 8.0 });
    captureUpTo(t, 10.0);
    for (const w of ["what", "time", "is", "it"]) t.stt.word(w);
    t.stt.pause(0.95);
    await sleep(20);
    // Nothing decided on the STT alone while the VAD has not heard that audio.
    expect(t.session.state).toBe("listening");
    expect(t.llm.requests).toHaveLength(0);
    // The VAD catches up: its speech start, the STT's words after it, then its end ends the turn.
    t.vad.emit("speechStart", { contextTime: 8.5 });
    t.vad.emit("judged", { contextTime: 10.0 });
    t.vad.emit("speechEnd", { contextTime: 10.2, lastSpeechContextTime: 9.6 });
    await until(() => t.session.state === "bot_speaking");
    expect(t.states).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking"]);
    expect(t.session.history[0]).toMatchObject({ role: "user", text: "what time is it" });
    expect(t.llm.requests).toHaveLength(1);
    expect(interruptions).toEqual([]);
    await t.session.stop();
  });

  test("a VAD that keeps up: the STT's pause ends the turn at once, as before", async () => {
    const t = setup();
    await t.session.start();
    t.vad.emit("judged", { contextTime: 9.9 });
    captureUpTo(t, 10.0);
    for (const w of ["what", "time", "is", "it"]) t.stt.word(w);
    t.stt.pause(0.95);
    await until(() => t.session.state === "bot_thinking" || t.session.state === "bot_speaking");
    expect(t.session.history[0]).toMatchObject({ role: "user", text: "what time is it" });
    await t.session.stop();
  });
});
