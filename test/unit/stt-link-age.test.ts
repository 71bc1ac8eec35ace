// The uplink's age budget counts from the frame's capture, the main thread's delivery included: a frame
// that a frozen page hands over already older than the budget is never sent. It is an `age` overload, and
// with the "end" policy the stream is ended and reconnected, as documented (README, "Uplink"). A frame
// delivered in time is sent. Before, the session judged age from the frame's arrival on the main thread,
// so a late frame of any age went out.
import { expect, test } from "vitest";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { until } from "../lib/wait.mjs";

function sessionOn() {
  const stt = fakeStt({ keepAudio: true });
  const capture = new Emitter<any>();
  const components: SessionComponents = { player: new VirtualPlayer(), vad: new VirtualVad(), capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
  const session = new VoiceSession({ stt: stt.provider, llm: fakeLlm().provider, tts: fakeTts().provider, components: async () => components, uplink: { budgetMs: 500, policy: "end" } });
  return { session, stt, capture };
}

const frame = (value: number) => new Float32Array(1920).fill(value);

test("a frame delivered 600 ms after its capture (budget 500 ms) is not sent: an age overload, counted as a late arrival; frames in time are sent", async () => {
  const { session, stt, capture } = sessionOn();
  const overloads: string[] = [];
  session.on("overload", (e) => overloads.push(`${e.reason} ${e.policy}`));
  await session.start();
  try {
    capture.emit("frame", { pcm: frame(0.1), capturedAtMs: performance.now() - 20 });
    expect(overloads).toEqual([]);
    capture.emit("frame", { pcm: frame(0.2), capturedAtMs: performance.now() - 600 });
    expect(overloads).toEqual(["age end"]);
    expect(session.metrics.uplink?.lateArrivals).toBe(1);
    expect(session.metrics.uplink?.expiredFrameAgeMsMax).toBeGreaterThanOrEqual(600);
    // The "end" policy ended that stream; the next one is open, and a frame in time reaches it.
    await until(() => stt.received.length === 2 && stt.openStreams === 1);
    capture.emit("frame", { pcm: frame(0.3), capturedAtMs: performance.now() - 20 });
    const heard = stt.received.flat().map((f) => f[0]);
    expect(heard).toEqual([0.1, 0.3].map(Math.fround));
  } finally {
    await session.stop();
  }
});
