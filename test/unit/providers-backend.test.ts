/**
 * The four providers against the reference backend (demo/server/backend.mjs):
 * real flite speech, real pocketsphinx transcription, the scripted LLM over
 * both transports, and the backend's fault knobs (capacity, delay, drop,
 * malformed, oversize), with the server's own counters as the witness.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { AtCapacityError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { kyutaiStt } from "../../src/providers/kyutai-stt.js";
import { kyutaiTts } from "../../src/providers/kyutai-tts.js";
import { openaiChat } from "../../src/providers/openai-chat.js";
import type { ChatMessage, ProviderWarning, SttEvent } from "../../src/providers/types.js";
import { websocketLlm } from "../../src/providers/websocket-llm.js";
import { collect, rejectionOf } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

type Stats = ReturnType<ReferenceBackend["stats"]>;

const TOKEN = "test-token-5f2";
const token = async () => TOKEN;
let backend: ReferenceBackend;

beforeAll(async () => {
  backend = await startReferenceBackend({ port: 0, token: TOKEN });
}, 60_000);
afterAll(async () => {
  await backend?.close();
});

/** Waits until `check` holds on the server's counters (they update as sockets close). */
async function eventually(check: (s: Stats) => boolean, timeoutMs = 2000): Promise<Stats> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const stats = backend.stats();
    if (check(stats) || performance.now() > until) return stats;
    await sleep(10);
  }
}

/**
 * The reference STT pools pocketsphinx decoders; when none is free (streams
 * still open, or just closed) it loads one, which takes about 0.8–1 s here:
 * longer than Unmute's 0.5 s start-up timeout. Tests that are not about the
 * timeout allow for it.
 */
const SLOW_STT_STARTUP_MS = 3000;

const question: ChatMessage[] = [{ role: "user", content: "I feel tired of waiting for the bus." }];

describe("providers against the reference backend", () => {
  test("TTS speaks a sentence with flite and the STT transcribes it back through pocketsphinx", async (ctx) => {
    if (!backend.health().stt.recogniser) ctx.skip();
    const sentence = "what is the weather like today";

    const tts = await kyutaiTts({ urls: `${backend.wsUrl}?pace=0`, voice: "slt", token }).connect();
    tts.sendText(sentence);
    tts.end();
    const chunks: Float32Array[] = [];
    const spoken: string[] = [];
    for await (const e of tts.events()) {
      if (e.kind === "audio") {
        expect(e.sampleRate).toBe(24000);
        chunks.push(e.pcm);
      } else spoken.push(e.text);
    }
    const samples = chunks.reduce((n, c) => n + c.length, 0);
    expect(samples / 24000).toBeGreaterThan(1); // about 2 s of speech
    expect(chunks.slice(0, -1).every((c) => c.length === 1920)).toBe(true);
    expect(spoken.join(" ").toLowerCase()).toContain("weather");

    const stt = await kyutaiStt({ urls: backend.wsUrl, token, warmupSteps: 0, startupTimeoutMs: SLOW_STT_STARTUP_MS }).connect();
    const events: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stt.events()) events.push(e);
    })();
    let sentBytes = 0;
    for (const c of chunks) sentBytes += stt.sendAudio(c);
    expect(sentBytes).toBeGreaterThanOrEqual(samples * 5);
    stt.sendAudio(new Float32Array(24000 * 0.6)); // trailing silence ends the utterance
    await stt.flush(AbortSignal.timeout(15_000));
    await stt.close();
    await reading;

    const words = events.filter((e) => e.kind === "word").map((e) => e.text.toLowerCase());
    const expected = sentence.split(" ");
    const hits = expected.filter((w, i) => words[i] === w).length;
    expect(hits, `heard "${words.join(" ")}"`).toBeGreaterThanOrEqual(5);
    const starts = events.flatMap((e) => (e.kind === "word" ? [e.startS] : []));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(events.some((e) => e.kind === "pause")).toBe(true);
    const marker = events.findIndex((e) => e.kind === "marker");
    expect(events[marker]).toEqual({ kind: "marker", id: 1 });
    expect(events.slice(marker).some((e) => e.kind === "word")).toBe(false); // every word came before the flush
  });

  test("the scripted LLM streams the same reply over SSE and over the WebSocket", async () => {
    const overSse = await collect(openaiChat({ url: `${backend.url}/v1`, model: "bargein-eliza", token }).stream(question));
    const overWs = await collect(websocketLlm({ url: `${backend.wsUrl}/v1/responses`, token }).stream(question));
    expect(overSse.length).toBeGreaterThan(3); // word by word, not one blob
    expect(overSse.join("")).toBe(overWs.join(""));
    expect(overSse.join("").trim().length).toBeGreaterThan(10);
  });

  test("aborting an LLM reply ends it on the server, over both transports", async () => {
    const before = backend.stats().llm;
    for (const llm of [
      openaiChat({ url: `${backend.url}/v1?word_ms=50`, model: "m", token }),
      websocketLlm({ url: `${backend.wsUrl}/v1/responses?word_ms=50`, token }),
    ]) {
      const controller = new AbortController();
      const err = await rejectionOf(
        (async () => {
          for await (const _ of llm.stream(question, controller.signal)) controller.abort();
        })(),
      );
      expect(err).toHaveProperty("name", "AbortError");
    }
    const after = await eventually((s) => s.llm.requestsAborted >= before.requestsAborted + 2 && s.llm.active === 0);
    expect(after.llm.requestsAborted - before.requestsAborted).toBe(2);
    expect(after.llm.active).toBe(0);
  });

  test("a wrong token is refused at once (HTTP 401): ConfigError over SSE, a failed connection over WebSockets", async () => {
    const bad = async () => "wrong";
    expect(await rejectionOf(collect(openaiChat({ url: `${backend.url}/v1`, model: "m", token: bad }).stream(question)))).toBeInstanceOf(
      ConfigError,
    );
    const started = performance.now();
    const err = (await rejectionOf(kyutaiStt({ urls: backend.wsUrl, token: bad }).connect())) as Error;
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(err.message).not.toContain("wrong");
    expect(performance.now() - started).toBeLessThan(400);
  });

  test("capacity=0 makes the STT fail with AtCapacityError, and the TTS retry 5 times with warnings first", async () => {
    expect(await rejectionOf(kyutaiStt({ urls: `${backend.wsUrl}?capacity=0`, token }).connect())).toBeInstanceOf(AtCapacityError);
    const tts = kyutaiTts({ urls: `${backend.wsUrl}?capacity=0`, token });
    const warnings: ProviderWarning[] = [];
    tts.on("warning", (w) => warnings.push(w));
    const before = backend.stats().tts.rejected;
    expect(await rejectionOf(tts.connect())).toBeInstanceOf(AtCapacityError);
    expect(warnings.map((w) => w.delayMs)).toEqual([50, 75, 112.5, 168.75]);
    expect(backend.stats().tts.rejected - before).toBe(5);
  });

  test("a start-up slower than 0.5 s (delay_ms=1500) is a ServiceTimeoutError, and the server sees the socket close", async () => {
    const opened = backend.stats().stt.open;
    const started = performance.now();
    const err = await rejectionOf(kyutaiStt({ urls: `${backend.wsUrl}?delay_ms=1500`, token, startupTimeoutMs: 500 }).connect());
    expect(err).toBeInstanceOf(ServiceTimeoutError);
    expect(performance.now() - started).toBeLessThan(900);
    const after = await eventually((s) => s.stt.open === opened);
    expect(after.stt.open).toBe(opened);
  });

  test("a TTS socket dropped mid-stream (drop_after=3) is a ConnectionClosedError after the audio received", async () => {
    const tts = await kyutaiTts({ urls: `${backend.wsUrl}?drop_after=3&pace=0`, token }).connect();
    tts.sendText("This sentence will not finish.");
    tts.end();
    let received = 0;
    const err = await rejectionOf(
      (async () => {
        for await (const _ of tts.events()) received++;
      })(),
    );
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(received).toBe(2); // Ready, then two messages, then the drop
  });

  test("malformed and oversized STT messages are ProtocolErrors", async () => {
    // recognise=0: the emulator sends its Ready and the bad message without taking a decoder from its pool.
    // Each stream here had to load one (the one before still held its own), and under two CPU burners that
    // took over the 3 s start-up allowance, 3 runs in 3; what these streams check is the client's parsing.
    const malformed = await kyutaiStt({ urls: `${backend.wsUrl}?malformed=1&recognise=0`, token, startupTimeoutMs: SLOW_STT_STARTUP_MS }).connect();
    expect(await rejectionOf(collect(malformed.events()))).toBeInstanceOf(ProtocolError);
    const notype = await kyutaiStt({ urls: `${backend.wsUrl}?malformed=notype&recognise=0`, token, startupTimeoutMs: SLOW_STT_STARTUP_MS }).connect();
    expect(await rejectionOf(collect(notype.events()))).toBeInstanceOf(ProtocolError);
    const big = await kyutaiStt({ urls: `${backend.wsUrl}?oversize=200000&recognise=0`, token, maxMessageBytes: 64 * 1024, startupTimeoutMs: SLOW_STT_STARTUP_MS }).connect();
    const err = (await rejectionOf(collect(big.events()))) as Error;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/exceeds the limit of 65536/);
  });

  test("closing a TTS stream mid-sentence (barge-in) is seen by the server as a client close", async () => {
    const before = backend.stats().tts.closedByClient;
    const tts = await kyutaiTts({ urls: backend.wsUrl, token }).connect();
    tts.sendText("Here is a rather long answer that the user is going to interrupt very soon.");
    for await (const e of tts.events()) {
      if (e.kind === "audio") break;
    }
    await tts.close();
    const after = await eventually((s) => s.tts.closedByClient > before);
    expect(after.tts.closedByClient - before).toBe(1);
  });
});
