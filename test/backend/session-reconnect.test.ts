/**
 * A VoiceSession whose STT is the real kyutaiStt provider talking to the
 * reference backend (real pocketsphinx): the stream drops mid-sentence, the
 * service then refuses the first two reconnects ("no free channels", its
 * capacity knob), and the third gets in. The session must survive it under
 * the default ReconnectPolicy, report each `reconnecting`, and the user's
 * turn must hold the whole sentence (the replay covers the outage).
 *
 * The audio parts are scripted (test/unit/session-fakes.ts; the real worklets
 * and worker run in the browser suites): the fixture's PCM is fed as capture
 * frames at real-time pace, and the VAD's speech start and end are emitted
 * where the fixture says its speech is.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { int16ToFloat, upsampler16to24 } from "../../demo/server/resample.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { kyutaiStt } from "../../src/providers/kyutai-stt.js";
import type { SttProvider } from "../../src/providers/types.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeLlm, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "../unit/session-fakes.js";
import { sleep } from "../lib/wait.mjs";

const TOKEN = "reconnect-token";
let backend: ReferenceBackend;

beforeAll(async () => {
  backend = await startReferenceBackend({ port: 0, token: TOKEN });
}, 60_000);
afterAll(async () => {
  await backend?.close();
});


test("the STT drops mid-sentence and refuses two reconnects: the session survives, reports reconnecting, and keeps every word", async () => {
  const fixture = JSON.parse(readFileSync("test/fixtures/speech/help-me.json", "utf8"));
  const wav = readWav(readFileSync("test/fixtures/speech/help-me.wav"));
  const pcm24 = upsampler16to24().process(int16ToFloat(wav.samples));
  // Connection 1 drops after 14 server messages (about 1.1 s of Steps, mid-sentence);
  // 2 and 3 find the service full; 4 is healthy.
  const urls = [`${backend.wsUrl}?drop_after=14`, `${backend.wsUrl}?capacity=0`, `${backend.wsUrl}?capacity=0`];
  let connections = 0;
  const stt: SttProvider = {
    ...kyutaiStt({ urls: backend.wsUrl, token: async () => TOKEN }),
    connect(signal) {
      const url = urls[connections++] ?? backend.wsUrl;
      return kyutaiStt({ urls: url, token: async () => TOKEN, startupTimeoutMs: 3000 }).connect(signal);
    },
  };
  const llm = fakeLlm({ reply: () => "sure", msPerWord: 1 });
  const player = new VirtualPlayer();
  const vad = new VirtualVad();
  const capture = new Emitter<any>();
  const components: SessionComponents = { player, vad, capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
  const session = new VoiceSession({ stt, llm: llm.provider, tts: fakeTts({ secondsPerWord: 0.1 }).provider, components: async () => components });
  const reconnecting: Array<{ attempt: number; reason: string }> = [];
  const errors: Array<{ name: string; fatal: boolean }> = [];
  const partials: string[] = [];
  session.on("reconnecting", (e) => reconnecting.push({ attempt: e.attempt, reason: e.reason }));
  session.on("error", (e) => errors.push({ name: e.error.name, fatal: e.fatal }));
  session.on("transcript", (e) => e.role === "user" && partials.push(e.text));
  try {
    await session.start();
    // The fixture at real-time pace in 80 ms frames, with a second of silence after it.
    const frame = 1920;
    const onset = Math.round((fixture.onsetSamples / 16000) * 24000);
    const total = pcm24.length + 24000;
    for (let at = 0; at < total; at += frame) {
      if (at <= onset && onset < at + frame) vad.emit("speechStart");
      const chunk = new Float32Array(frame);
      chunk.set(pcm24.subarray(at, Math.min(at + frame, pcm24.length)));
      capture.emit("frame", { pcm: chunk, capturedAt: 0 });
      await sleep(80);
    }
    // The user's speech ended long ago, but the VAD's end waits for the stream to be back, as the redemption time would.
    const deadline = Date.now() + 15_000;
    while (reconnecting.length < 3 || connections < 4) {
      if (Date.now() > deadline) throw new Error(`not reconnected: ${JSON.stringify({ reconnecting, connections, errors })}`);
      await sleep(50);
    }
    vad.emit("speechEnd");
    while (llm.requests.length === 0) {
      if (Date.now() > deadline) throw new Error(`no turn: ${JSON.stringify({ partials, errors })}`);
      await sleep(50);
    }
    expect(reconnecting).toEqual([
      { attempt: 1, reason: "dropped" },
      { attempt: 2, reason: "connect-failed" },
      { attempt: 3, reason: "connect-failed" },
    ]);
    expect(errors).toEqual([
      { name: "ConnectionClosedError", fatal: false },
      { name: "AtCapacityError", fatal: false },
      { name: "AtCapacityError", fatal: false },
    ]);
    const turn = String(llm.requests[0].messages.at(-1)?.content).toLowerCase().split(/\s+/);
    for (const word of ["can", "you", "help", "me"]) expect(turn).toContain(word);
    expect(session.metrics.sttReplayedSamples).toBeGreaterThan(0);
  } finally {
    await session.stop();
  }
  expect(session.state).toBe("idle");
  await sleep(200);
  expect(backend.stats().stt.open).toBe(0);
}, 60_000);
