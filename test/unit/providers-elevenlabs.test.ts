/**
 * elevenlabsTts against the ElevenLabs emulator of the reference backend
 * (demo/server/emulators/elevenlabs.mjs: real flite speech over a real local
 * socket), and, for messages the emulator never sends, a scripted `ws`
 * server. Then the parser alone, fuzzed from the docs' example messages.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { elevenlabsParser, elevenlabsTts } from "../../src/providers/elevenlabs-tts.js";
import type { TtsEvent } from "../../src/providers/types.js";
import { prng } from "../lib/prng.mjs";
import client from "../fixtures/elevenlabs/client-messages.json" with { type: "json" };
import server from "../fixtures/elevenlabs/server-messages.json" with { type: "json" };
import { collect, rejectionOf, startWsServer } from "./providers-servers.js";

/** The backend's key stands for the API key; the token function mints a single-use token, as a page's does. */
const KEY = "el-api-key-7c1";
/** What a page's token function does: ask its own server, which mints a single-use token (one socket). */
const token = async () => ((await (await fetch(`${backend.url}/api/token?service=elevenlabs`)).json()) as { token: string }).token;
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

const tts = (query = "pace=0", extra: Partial<Parameters<typeof elevenlabsTts>[0]> = {}) =>
  elevenlabsTts({ voiceId: "voice-slt", url: `${backend.wsUrl}?${query}`, token, ...extra });
type Audio = Extract<TtsEvent, { kind: "audio" }>;
type Word = Extract<TtsEvent, { kind: "text" }>;

async function speak(sentence: string, query?: string, extra?: Partial<Parameters<typeof elevenlabsTts>[0]>) {
  const stream = await tts(query, extra).connect();
  for (const word of sentence.split(" ")) stream.sendText(word);
  stream.end();
  const events = await collect(stream.events());
  const audio = events.filter((e): e is Audio => e.kind === "audio");
  const words = events.filter((e): e is Word => e.kind === "text");
  const samples = audio.reduce((n, a) => n + a.pcm.length, 0);
  return { events, audio, words, samples, stream };
}

describe("elevenlabsTts against the emulator", () => {
  test("a full stream: flite's speech as pcm_24000, one word per token of the text, in order, inside the audio; events end normally", async () => {
    const sentence = "Hello there, how are you doing today?";
    const { audio, words, samples } = await speak(sentence);
    expect(audio.every((a) => a.sampleRate === 24000)).toBe(true);
    const seconds = samples / 24000;
    expect(seconds).toBeGreaterThan(1.2);
    expect(seconds).toBeLessThan(5);
    const peak = audio.reduce((m, a) => a.pcm.reduce((p, x) => Math.max(p, Math.abs(x)), m), 0);
    expect(peak).toBeGreaterThan(0.1);
    expect(words.map((w) => w.text)).toEqual(sentence.split(" "));
    for (let i = 0; i < words.length; i++) {
      expect(words[i].stopS).toBeGreaterThan(words[i].startS);
      if (i > 0) expect(words[i].startS).toBeGreaterThanOrEqual(words[i - 1].stopS - 0.002);
    }
    expect(words.at(-1)!.stopS).toBeLessThanOrEqual(seconds + 0.001);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
  });

  test("word timings sit on the audio: the first word starts where the speech gets loud (within 60 ms), whatever the chunking", async () => {
    const { audio, words } = await speak("Turn on the lights please.");
    const pcm = Float32Array.from(audio.flatMap((a) => Array.from(a.pcm)));
    const firstLoud = pcm.findIndex((x) => Math.abs(x) > 0.02) / 24000;
    expect(Math.abs(words[0].startS - firstLoud)).toBeLessThan(0.06);
    // The emulator's 0.25 s chunks split words, so some word's start and stop are in different chunks.
    const chunkEnds: number[] = [];
    let at = 0;
    for (const a of audio) chunkEnds.push((at += a.pcm.length) / 24000);
    expect(words.some((w) => chunkEnds.some((end) => w.startS < end && w.stopS > end))).toBe(true);
  });

  test("another output format is another sample rate, and the same words", async () => {
    const { audio, words, samples } = await speak("Stop please.", "pace=0", { outputFormat: "pcm_16000" });
    expect(new Set(audio.map((a) => a.sampleRate))).toEqual(new Set([16000]));
    expect(samples / 16000).toBeGreaterThan(0.4);
    expect(words.map((w) => w.text)).toEqual(["Stop", "please."]);
  });

  test("the client speaks the docs' protocol: the voice in the path, model, format and token in the query, a context opened, words, flush, close_context", async () => {
    const seen: Record<string, unknown>[] = [];
    const srv = await startWsServer(async (conn) => {
      for (;;) {
        const m = await conn.next();
        seen.push(m);
        if (m.close_context) {
          conn.sendJson({ isFinal: true, contextId: m.context_id });
          return;
        }
      }
    });
    try {
      const stream = await elevenlabsTts({ voiceId: "v/1", url: srv.url, token: async () => "single-use-1", voiceSettings: { stability: 0.5 } }).connect();
      stream.sendText("Hi");
      stream.sendText("there. ");
      stream.end();
      expect(await collect(stream.events())).toEqual([]);
      const url = new URL(srv.connections[0].request.url!, "ws://x");
      expect(url.pathname).toBe("/v1/text-to-speech/v%2F1/multi-stream-input");
      expect(Object.fromEntries(url.searchParams)).toEqual({ model_id: "eleven_flash_v2_5", output_format: "pcm_24000", single_use_token: "single-use-1" });
      const id = seen[0].context_id as string;
      expect(Object.keys(seen[0]).sort()).toEqual(Object.keys(client.initializeContext).sort());
      expect(seen).toEqual([
        { text: " ", context_id: id, voice_settings: { stability: 0.5 } },
        { text: "Hi ", context_id: id },
        { text: "there. ", context_id: id },
        { ...client.flush, context_id: id },
        { ...client.closeContext, context_id: id },
      ]);
      expect(await srv.connections[0].closed).toBe(1000);
    } finally {
      await srv.close();
    }
  });

  test("the docs' example audio output and final output: four samples, the open word flushed at the end", async () => {
    const srv = await startWsServer(async (conn) => {
      const open = await conn.next();
      const id = open.context_id;
      conn.sendJson({ ...server.audioOutput, contextId: id });
      conn.sendJson({ ...server.finalOutput, contextId: id });
    });
    try {
      const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
      const events = await collect(stream.events());
      expect(events.map((e) => e.kind)).toEqual(["audio", "text"]);
      expect(Array.from((events[0] as Audio).pcm)).toEqual([0, 1, 2, 3].map((v) => v / 32768));
      expect(events[1]).toEqual({ kind: "text", text: "Hell", startS: 0, stopS: 0.015 });
    } finally {
      await srv.close();
    }
  });

  test("the final marker spelled is_final ends the context too", async () => {
    const srv = await startWsServer(async (conn) => {
      const open = await conn.next();
      conn.sendJson({ ...server.audioOutput, contextId: open.context_id });
      conn.sendJson({ is_final: true, contextId: open.context_id });
    });
    try {
      const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
      expect((await collect(stream.events())).map((e) => e.kind)).toEqual(["audio", "text"]);
    } finally {
      await srv.close();
    }
  });

  test("close() mid-reply (barge-in) sends close_context, closes the socket, and the server sees the client leave", async () => {
    const before = backend.stats().tts.closedByClient;
    const stream = await tts("pace=1&burst_s=0").connect();
    stream.sendText("A long answer that the user will interrupt before it is over, because it goes on and on.");
    stream.end();
    let chunks = 0;
    for await (const e of stream.events()) {
      if (e.kind === "audio" && ++chunks === 2) await stream.close();
    }
    expect(chunks).toBe(2);
    await expect.poll(() => backend.stats().tts.closedByClient).toBe(before + 1);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
    expect(() => stream.sendText("more")).toThrow(ConnectionClosedError);
  });

  test("the client's close_context reaches the server before the close frame", async () => {
    const got: Record<string, unknown>[] = [];
    const srv = await startWsServer(async (conn) => {
      for (;;) got.push(await conn.next());
    });
    try {
      const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
      stream.sendText("Hello");
      await stream.close();
      expect(await srv.connections[0].closed).toBe(1000);
      await expect.poll(() => got.length).toBe(3);
      expect(got[2]).toEqual({ close_context: true, context_id: got[0].context_id });
    } finally {
      await srv.close();
    }
  });

  test("a wrong token: the handshake is refused (HTTP 401), a ConnectionClosedError naming the URL without the token", async () => {
    const err = (await rejectionOf(tts("pace=0", { token: async () => "wrong-token" }).connect())) as ConnectionClosedError;
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(err.url).toContain("single_use_token=***");
    expect(err.message).not.toContain("wrong-token");
  });

  test("at capacity: the service's too_many_concurrent_requests error is an AtCapacityError", async () => {
    const stream = await tts("capacity=0").connect();
    const err = (await rejectionOf(collect(stream.events()))) as AtCapacityError;
    expect(err).toBeInstanceOf(AtCapacityError);
    expect(err.message).toMatch(/Too many concurrent requests/);
  });

  test("more than five contexts on one socket is max_active_conversations: AtCapacityError (the docs' error example)", async () => {
    const srv = await startWsServer((conn) => conn.sendJson(server.error));
    try {
      const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
      const err = await rejectionOf(collect(stream.events()));
      expect(err).toBeInstanceOf(AtCapacityError);
      expect((err as Error).message).toMatch(/Maximum simultaneous contexts/);
    } finally {
      await srv.close();
    }
  });

  test("a refused key or token reported in a message is a ConfigError; any other service error a BargeinError quoting it", async () => {
    for (const [msg, type] of [
      [{ message: "Invalid API key", error: "invalid_api_key", code: 1008 }, ConfigError],
      [{ message: "Voice not found", error: "voice_not_found", code: 1008 }, BargeinError],
    ] as const) {
      const srv = await startWsServer((conn) => conn.sendJson(msg));
      try {
        const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
        const err = (await rejectionOf(collect(stream.events()))) as BargeinError;
        expect(err).toBeInstanceOf(type);
        expect(err.message).toContain(msg.message);
      } finally {
        await srv.close();
      }
    }
  });

  test("the input timeout: the service's input_timeout_exceeded error ends the stream (inactivity_timeout=1)", async () => {
    const stream = await tts("pace=0", { inactivityTimeoutS: 1 }).connect();
    const started = performance.now();
    const err = (await rejectionOf(collect(stream.events()))) as BargeinError;
    expect(err).toBeInstanceOf(BargeinError);
    expect(err.message).toMatch(/within the timeout of 1 seconds/);
    expect(performance.now() - started).toBeGreaterThan(800);
  });

  test("a socket that does not open in time is a ServiceTimeoutError", async () => {
    // A TCP listener that never answers the upgrade.
    const { createServer } = await import("node:net");
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const port = (silent.address() as { port: number }).port;
      const err = (await rejectionOf(elevenlabsTts({ voiceId: "v", url: `ws://127.0.0.1:${port}`, connectTimeoutMs: 200 }).connect())) as ServiceTimeoutError;
      expect(err).toBeInstanceOf(ServiceTimeoutError);
      expect(err.timeoutMs).toBe(200);
    } finally {
      silent.close();
    }
  });

  test("a dropped socket mid-stream is a ConnectionClosedError after the audio already received", async () => {
    const stream = await tts("pace=0&drop_after=3").connect();
    stream.sendText("One two three four five six seven eight nine ten.");
    stream.end();
    const seen: TtsEvent[] = [];
    const err = await rejectionOf((async () => { for await (const e of stream.events()) seen.push(e); })());
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(seen.filter((e) => e.kind === "audio").length).toBeGreaterThan(0);
  });

  test("a malformed message is a ProtocolError and closes the socket", async () => {
    const stream = await tts("malformed=1").connect();
    const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.service).toBe("tts");
  });

  test("a message over maxMessageBytes is a ProtocolError naming the limit", async () => {
    const stream = await tts("oversize=300000", { maxMessageBytes: 100_000 }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/exceeds the limit of 100000 \(maxMessageBytes\)/);
  });

  test("a server that closes normally before the context is final is a ConnectionClosedError, not a silent end", async () => {
    const srv = await startWsServer(async (conn) => {
      await conn.next();
      conn.socket.close(1000);
    });
    try {
      const stream = await elevenlabsTts({ voiceId: "v", url: srv.url }).connect();
      const err = await rejectionOf(collect(stream.events()));
      expect(err).toBeInstanceOf(ConnectionClosedError);
      expect((err as Error).message).toMatch(/before the context was final/);
    } finally {
      await srv.close();
    }
  });

  test("options are checked: no voice, or a format that is not raw PCM, is a ConfigError", () => {
    expect(() => elevenlabsTts({ voiceId: "" })).toThrow(ConfigError);
    expect(() => elevenlabsTts({ voiceId: "v", outputFormat: "mp3_44100_128" as never })).toThrow(/outputFormat/);
  });
});

describe("elevenlabsParser fuzz", () => {
  test("10,000 random and mutated messages from the docs' examples: no uncaught error, every failure a ProtocolError or the service's error", () => {
    const rand = prng(0xe1e7);
    const int = (n: number) => Math.floor(rand() * n);
    const ctx = { service: "tts", url: "ws://fuzz" };
    const valid = [server.audioOutput, server.finalOutput, server.error, { audio: null, isFinal: null, contextId: "conv_1" }];
    const junk = () => [null, true, -1, 1e308, NaN, "x", "AAA", "AAAA", [], {}, [1, "a"], { chars: ["a"] }][int(12)];
    const keys = ["audio", "alignment", "normalizedAlignment", "isFinal", "contextId", "message", "error", "chars", "charStartTimesMs", "charDurationsMs"];
    const mutate = (v: unknown, depth = 0): unknown => {
      if (Array.isArray(v)) return rand() < 0.3 ? junk() : v.map((x) => (rand() < 0.2 ? mutate(x, depth + 1) : x)).slice(0, rand() < 0.1 ? int(v.length + 1) : undefined);
      if (v && typeof v === "object") {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) if (rand() > 0.1) out[k] = rand() < 0.25 ? mutate(x, depth + 1) : x;
        if (rand() < 0.2) out[keys[int(keys.length)]] = junk();
        return out;
      }
      return rand() < 0.5 ? junk() : v;
    };
    const tally = { events: 0, protocol: 0, service: 0, ignored: 0, foreign: [] as string[] };
    for (let i = 0; i < 10_000; i++) {
      const base = valid[int(valid.length)];
      let text = JSON.stringify(mutate(base));
      if (i % 7 === 0) text = text.slice(0, int(text.length)); // torn JSON
      if (i % 11 === 0) text = [...text].map((c) => (rand() < 0.05 ? String.fromCharCode(int(128)) : c)).join("");
      // Each case gets a parser of its own (a stream), for the conversation id the fixtures use.
      const parse = elevenlabsParser("conv_1", 24000);
      try {
        const events = parse(text, ctx);
        if (events) tally.events += events.length;
        else tally.ignored++;
        for (const e of events ?? []) {
          if (e.kind === "audio") expect(e.pcm.every(Number.isFinite)).toBe(true);
          if (e.kind === "text") expect(Number.isFinite(e.startS) && Number.isFinite(e.stopS)).toBe(true);
        }
      } catch (err) {
        if (err instanceof ProtocolError) tally.protocol++;
        else if (err instanceof BargeinError && /"(error|message)":"/.test(text)) tally.service++;
        else tally.foreign.push(`case ${i}: ${(err as Error)?.name}: ${(err as Error)?.message}`);
      }
    }
    console.log(`elevenlabs fuzz: ${JSON.stringify({ ...tally, foreign: tally.foreign.length })}`);
    expect(tally.foreign).toEqual([]);
    expect(tally.protocol).toBeGreaterThan(1000);
    expect(tally.events).toBeGreaterThan(1000);
  });
});
