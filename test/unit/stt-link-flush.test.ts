// A turn's end flushes the STT, and a Kyutai flush writes 0.5 s of silence
// padding straight to the socket (60 kB, the uplink's whole budget). On a busy
// page the browser reports those bytes sent late, so the frames right after
// the flush met a socket that still looked full: counted as the user's
// backlog, the uplink overloaded, the "end" policy ended the stream, and three
// turns in a row made the error fatal (the bargein bench's vad-load run,
// "bytes 60150/60000"). The session counts the padding as a burst instead.
import { expect, test } from "vitest";
import type { SttProvider } from "../../src/providers/types.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import type { VoiceSessionOptions } from "../../src/session/types.js";
import { fakeLlm, fakeStt, fakeTts, type FakeSttControl } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { sleep, until } from "../lib/wait.mjs";

const PADDING_BYTES = 60150;

/** A session on fakes, with the VAD and the microphone driven by the test. */
function sessionOn(stt: SttProvider, turn?: VoiceSessionOptions["turn"]) {
  const vad = new VirtualVad();
  const capture = new Emitter<any>();
  const components: SessionComponents = { player: new VirtualPlayer(), vad, capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
  const session = new VoiceSession({ stt, llm: fakeLlm({ reply: () => "sure", msPerWord: 1 }).provider, tts: fakeTts({ secondsPerWord: 0.1 }).provider, components: async () => components, turn });
  const warnings: Array<{ at: number; message: string }> = [];
  session.on("warning", (w) => warnings.push({ at: performance.now(), message: w.message }));
  return { session, vad, capture, warnings };
}

/** The fake STT, whose second connection (the reconnect) opens only when the test says so. */
function slowReconnect(stt: FakeSttControl) {
  let connections = 0;
  let openSecond!: () => void;
  const secondMayOpen = new Promise<void>((resolve) => (openSecond = resolve));
  const provider: SttProvider = {
    ...stt.provider,
    connect: async (signal) => {
      if (++connections === 2) await secondMayOpen;
      return stt.provider.connect(signal);
    },
  };
  return { provider, connections: () => connections, openSecond: () => openSecond() };
}

test("the frames after a turn's flush do not overload the uplink while the flush's padding is still reported in bufferedAmount", async () => {
  const stt = fakeStt(); // 24 kHz: with 5 B a sample (Kyutai's msgpack) the budget is 60,000 B
  let connections = 0;
  const provider: SttProvider = {
    ...stt.provider,
    connect: async (signal) => {
      connections++;
      const stream = await stt.provider.connect(signal);
      let unreported = 0; // bytes the browser has not yet reported sent (the page is busy)
      return {
        ...stream,
        bytesPerSample: 5,
        get bufferedAmount() {
          return unreported;
        },
        flush(flushSignal?: AbortSignal) {
          unreported += PADDING_BYTES; // the silence padding, written with the marker
          return stream.flush(flushSignal);
        },
      };
    },
  };
  const { session, vad, capture } = sessionOn(provider);
  const overloads: string[] = [];
  session.on("overload", (e) => overloads.push(`${e.reason} ${e.pendingBytes}/${e.budgetBytes}`));
  await session.start();
  try {
    vad.emit("speechStart");
    stt.word("hello");
    vad.emit("speechEnd");
    await until(() => session.state === "bot_thinking" || session.state === "bot_speaking");
    // The next 80 ms frames (1,920 samples, 9,600 B each) arrive while the padding is unreported.
    for (let i = 0; i < 3; i++) capture.emit("frame", { pcm: new Float32Array(1920) });
    expect(overloads).toEqual([]);
    expect(connections).toBe(1);
    expect(session.metrics.uplink?.pendingBytes).toBe(0);
  } finally {
    await session.stop();
  }
});

// The STT stream dies mid-question and the new one takes a while to open (CI, a loaded machine: 1.5 s). The
// user's turn ends meanwhile. Flushed at once, the link found no stream, returned no words, the turn was
// dropped, and the question (replayed to the new stream a moment later) never got an answer.
test("a turn that ends while the dropped STT stream is being replaced waits for the new stream, and its replayed words are the turn", async () => {
  const stt = fakeStt({ keepAudio: true, flushDelayMs: 200 }); // the "service" answers a flush once it has transcribed what came before
  const link = slowReconnect(stt);
  const { session, vad, capture, warnings } = sessionOn(link.provider);
  await session.start();
  try {
    vad.emit("speechStart");
    const speech = Float32Array.from({ length: 1920 }, (_, i) => 0.3 * Math.sin(i / 5));
    for (let i = 0; i < 5; i++) capture.emit("frame", { pcm: speech });
    stt.drop(new Error("socket gone"));
    await until(() => link.connections() === 2);
    for (let i = 0; i < 5; i++) capture.emit("frame", { pcm: speech });
    vad.emit("speechEnd"); // the turn's end, with no stream open
    await sleep(50);
    expect(session.history).toEqual([]);
    link.openSecond();
    await until(() => stt.openStreams === 1);
    // The new stream got the question's audio (the replay: 10 frames), and recognises it.
    expect(stt.received[1]!.reduce((n, f) => n + f.length, 0)).toBe(10 * 1920);
    stt.word("hello");
    stt.word("there");
    await until(() => session.history.some((m) => m.role === "assistant"));
    expect(session.history[0]).toMatchObject({ role: "user", text: "hello there" });
    expect(warnings.filter((w) => /did not confirm/.test(w.message))).toEqual([]);
  } finally {
    await session.stop();
  }
});

test("a turn that ends while the STT is reconnecting waits at most turn.flushTimeoutMs for the new stream, then says it missed the words", async () => {
  const stt = fakeStt();
  const link = slowReconnect(stt);
  const { session, vad, warnings } = sessionOn(link.provider, { flushTimeoutMs: 150 });
  await session.start();
  try {
    vad.emit("speechStart");
    stt.word("hello");
    stt.drop(new Error("socket gone"));
    await until(() => link.connections() === 2);
    const endedAt = performance.now();
    vad.emit("speechEnd");
    await until(() => warnings.some((w) => /did not confirm its last words in time/.test(w.message)));
    const missed = warnings.find((w) => /did not confirm/.test(w.message))!;
    expect(missed.at - endedAt).toBeGreaterThanOrEqual(140);
    // The words it had are the turn: the reply does not wait for the stream.
    await until(() => session.history.some((m) => m.role === "assistant"));
    expect(session.history[0]).toMatchObject({ role: "user", text: "hello" });
  } finally {
    link.openSecond();
    await session.stop();
  }
  expect(stt.openStreams).toBe(0);
});
