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
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { until } from "./session-setup.js";

const PADDING_BYTES = 60150;

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
  const player = new VirtualPlayer();
  const vad = new VirtualVad();
  const capture = new Emitter<any>();
  const components: SessionComponents = { player, vad, capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
  const session = new VoiceSession({ stt: provider, llm: fakeLlm({ reply: () => "sure", msPerWord: 1 }).provider, tts: fakeTts({ secondsPerWord: 0.1 }).provider, components: async () => components });
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
