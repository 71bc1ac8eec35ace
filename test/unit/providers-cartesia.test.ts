/**
 * cartesiaTts against the Cartesia emulator of the reference backend
 * (demo/server/emulators/cartesia.mjs: real flite speech over a real local
 * socket), and, for messages the emulator never sends, a scripted `ws`
 * server. Then the parser alone, fuzzed from the docs' example messages.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { cartesiaParser, cartesiaTts } from "../../src/providers/cartesia-tts.js";
import type { TtsEvent } from "../../src/providers/types.js";
import { prng } from "../lib/prng.mjs";
import client from "../fixtures/cartesia/client-messages.json" with { type: "json" };
import server from "../fixtures/cartesia/server-messages.json" with { type: "json" };
import { collect, rejectionOf, startWsServer } from "./providers-servers.js";

/** The backend's key stands for the API key; the token function mints an access token, as a page's does. */
const KEY = "cartesia-api-key-4d9";
/** What a page's token function does: ask its own server, which mints an access token with the tts grant. */
const token = async () => ((await (await fetch(`${backend.url}/api/token?service=cartesia`)).json()) as { token: string }).token;
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

type Options = Parameters<typeof cartesiaTts>[0];
const tts = (query = "pace=0", extra: Partial<Options> = {}) => cartesiaTts({ voiceId: "voice-rms", url: `${backend.wsUrl}?${query}`, token, ...extra });
type Audio = Extract<TtsEvent, { kind: "audio" }>;
type Word = Extract<TtsEvent, { kind: "text" }>;

async function speak(sentence: string, query?: string, extra?: Partial<Options>) {
  const stream = await tts(query, extra).connect();
  for (const word of sentence.split(" ")) stream.sendText(word);
  stream.end();
  const events = await collect(stream.events());
  const audio = events.filter((e): e is Audio => e.kind === "audio");
  const words = events.filter((e): e is Word => e.kind === "text");
  return { events, audio, words, samples: audio.reduce((n, a) => n + a.pcm.length, 0) };
}

/** Runs `fn` against a scripted server; the server is closed after. */
async function withServer(script: Parameters<typeof startWsServer>[0], fn: (url: string) => Promise<void>) {
  const srv = await startWsServer(script);
  try {
    await fn(srv.url);
  } finally {
    await srv.close();
  }
  return srv;
}

describe("cartesiaTts against the emulator", () => {
  test("a full stream: flite's speech as raw pcm_s16le at 24 kHz, one timestamp per word, in order, inside the audio; events end on done", async () => {
    const sentence = "Hello there, how are you doing today?";
    const { audio, words, samples } = await speak(sentence);
    expect(new Set(audio.map((a) => a.sampleRate))).toEqual(new Set([24000]));
    const seconds = samples / 24000;
    expect(seconds).toBeGreaterThan(1.2);
    expect(seconds).toBeLessThan(5);
    const peak = audio.reduce((m, a) => a.pcm.reduce((p, x) => Math.max(p, Math.abs(x)), m), 0);
    expect(peak).toBeGreaterThan(0.1);
    // Cartesia's words carry no punctuation; there is one per token of the text.
    expect(words.map((w) => w.text)).toEqual(["Hello", "there", "how", "are", "you", "doing", "today"]);
    for (let i = 0; i < words.length; i++) {
      expect(words[i].stopS).toBeGreaterThan(words[i].startS);
      if (i > 0) expect(words[i].startS).toBeGreaterThanOrEqual(words[i - 1].stopS - 0.002);
    }
    expect(words.at(-1)!.stopS).toBeLessThanOrEqual(seconds + 0.001);
    const pcm = Float32Array.from(audio.flatMap((a) => Array.from(a.pcm)));
    const firstLoud = pcm.findIndex((x) => Math.abs(x) > 0.02) / 24000;
    expect(Math.abs(words[0].startS - firstLoud)).toBeLessThan(0.06);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
  });

  test("pcm_f32le at 44.1 kHz: float samples at that rate, the same words", async () => {
    const { audio, words, samples } = await speak("Stop please.", "pace=0", { encoding: "pcm_f32le", sampleRate: 44100 });
    expect(new Set(audio.map((a) => a.sampleRate))).toEqual(new Set([44100]));
    expect(samples / 44100).toBeGreaterThan(0.4);
    expect(words.map((w) => w.text)).toEqual(["Stop", "please"]);
  });

  test("the client speaks the docs' protocol: version and token in the query, one context, continue:true per word, then continue:false", async () => {
    const seen: Record<string, unknown>[] = [];
    const srv = await withServer(
      async (conn) => {
        for (;;) {
          const m = await conn.next();
          seen.push(m);
          if (m.continue === false) return conn.sendJson({ ...server.done, context_id: m.context_id });
        }
      },
      async (url) => {
        const stream = await cartesiaTts({ voiceId: "a0e99841", url, token: async () => "access-1", modelId: "sonic-3.5", language: "fr" }).connect();
        stream.sendText("Bonjour");
        stream.sendText("tout le monde. ");
        stream.end();
        expect(await collect(stream.events())).toEqual([]);
      },
    );
    const url = new URL(srv.connections[0].request.url!, "ws://x");
    expect(url.pathname).toBe("/tts/websocket");
    expect(Object.fromEntries(url.searchParams)).toEqual({ cartesia_version: "2025-04-16", access_token: "access-1" });
    const id = seen[0].context_id;
    // Every field of the docs' generation request, the same on every input of the context.
    for (const m of seen) {
      expect(Object.keys(m).sort()).toEqual(Object.keys(client.generationRequest).sort());
      expect({ ...m, transcript: 0, continue: 0 }).toEqual({
        ...client.generationRequest,
        model_id: "sonic-3.5",
        voice: { mode: "id", id: "a0e99841" },
        language: "fr",
        context_id: id,
        output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 },
        transcript: 0,
        continue: 0,
      });
    }
    expect(seen.map((m) => [m.transcript, m.continue])).toEqual([
      ["Bonjour ", true],
      ["tout le monde. ", true],
      ["", false],
    ]);
  });

  test("the docs' example messages: a chunk of 17 bytes (its torn sample waits), timestamps, flush_done and phoneme_timestamps ignored, done ends", async () => {
    await withServer(
      async (conn) => {
        const first = await conn.next();
        const id = first.context_id;
        for (const m of [server.chunk, server.timestamps, server.flushDone, server.phonemeTimestamps, server.done]) conn.sendJson({ ...m, context_id: id });
      },
      async (url) => {
        const stream = await cartesiaTts({ voiceId: "v", url }).connect();
        stream.sendText("Hello world");
        const events = await collect(stream.events());
        expect(events.map((e) => e.kind)).toEqual(["audio", "text", "text"]);
        expect((events[0] as Audio).pcm.length).toBe(8); // 17 bytes: 8 whole s16 samples
        expect(events.slice(1)).toEqual([
          { kind: "text", text: "Hello", startS: 0, stopS: 0.4 },
          { kind: "text", text: "world", startS: 0.5, stopS: 0.9 },
        ]);
      },
    );
  });

  test("close() mid-reply (barge-in) sends cancel for the context, closes the socket, and the server sees the client leave", async () => {
    const before = backend.stats().tts.closedByClient;
    const stream = await tts("pace=1&burst_s=0").connect();
    stream.sendText("A long answer that the user will interrupt before it is over, because it goes on and on.");
    stream.end();
    let chunks = 0;
    for await (const e of stream.events()) {
      if (e.kind === "audio" && ++chunks === 3) await stream.close();
    }
    expect(chunks).toBe(3);
    await expect.poll(() => backend.stats().tts.closedByClient).toBe(before + 1);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
    expect(() => stream.sendText("more")).toThrow(ConnectionClosedError);
  });

  test("the cancel message is the docs' one, sent before the close frame", async () => {
    const got: Record<string, unknown>[] = [];
    const srv = await withServer(
      async (conn) => {
        for (;;) got.push(await conn.next());
      },
      async (url) => {
        const stream = await cartesiaTts({ voiceId: "v", url }).connect();
        stream.sendText("Hello");
        await stream.close();
      },
    );
    expect(await srv.connections[0].closed).toBe(1000);
    await expect.poll(() => got.length).toBe(2);
    expect(got[1]).toEqual({ ...client.cancel, context_id: got[0].context_id });
  });

  test("a wrong token: the handshake is refused (HTTP 401), a ConnectionClosedError naming the URL without the token", async () => {
    const err = (await rejectionOf(tts("pace=0", { token: async () => "wrong-token" }).connect())) as ConnectionClosedError;
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(err.url).toContain("access_token=***");
    expect(err.message).not.toContain("wrong-token");
  });

  test("at capacity: the service's error with status 429 is an AtCapacityError", async () => {
    const stream = await tts("capacity=0").connect();
    const err = (await rejectionOf(collect(stream.events()))) as AtCapacityError;
    expect(err).toBeInstanceOf(AtCapacityError);
    expect(err.message).toMatch(/Too many concurrent requests/);
  });

  test("the docs' errors, in both API versions' shapes, are the service's BargeinError quoting it; 401 and 403 are ConfigError", async () => {
    const cases = [
      [server.error, BargeinError, "Invalid model: The model is not valid"],
      [server.errorV2026, BargeinError, "Invalid model: The model is not valid"],
      [{ type: "error", done: true, status_code: 401, error: "Invalid or expired access token" }, ConfigError, "expired access token"],
    ] as const;
    for (const [msg, type, text] of cases) {
      await withServer(
        async (conn) => {
          const first = await conn.next();
          conn.sendJson({ ...msg, context_id: first.context_id });
        },
        async (url) => {
          const stream = await cartesiaTts({ voiceId: "v", url }).connect();
          stream.sendText("Hi");
          const err = (await rejectionOf(collect(stream.events()))) as BargeinError;
          expect(err).toBeInstanceOf(type);
          if (type === BargeinError) expect(err.code).toBe("error");
          expect(err.message).toContain(text);
        },
      );
    }
  });

  test("the emulator refuses a request that breaks the docs' rules (a context's fields changed mid-way) with a 400 error", async () => {
    const { WebSocket: Ws } = await import("ws");
    const ws = new Ws(`${backend.wsUrl}/tts/websocket?cartesia_version=2025-04-16&access_token=${await token()}&pace=0`);
    await new Promise((r) => ws.once("open", r));
    const replies: Record<string, unknown>[] = [];
    ws.on("message", (d) => replies.push(JSON.parse(String(d))));
    ws.send(JSON.stringify({ ...client.generationRequest, context_id: "c1", continue: true }));
    ws.send(JSON.stringify({ ...client.generationRequest, context_id: "c1", model_id: "other", continue: false }));
    await expect.poll(() => replies.some((r) => r.type === "error")).toBe(true);
    expect(replies.find((r) => r.type === "error")).toMatchObject({ status_code: 400, context_id: "c1" });
    ws.close();
  });

  test("a socket that does not open in time is a ServiceTimeoutError", async () => {
    const { createServer } = await import("node:net");
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const port = (silent.address() as { port: number }).port;
      const err = (await rejectionOf(cartesiaTts({ voiceId: "v", url: `ws://127.0.0.1:${port}`, connectTimeoutMs: 200 }).connect())) as ServiceTimeoutError;
      expect(err).toBeInstanceOf(ServiceTimeoutError);
      expect(err.timeoutMs).toBe(200);
    } finally {
      silent.close();
    }
  });

  test("a dropped socket mid-stream is a ConnectionClosedError after the audio already received", async () => {
    const stream = await tts("pace=0&drop_after=4").connect();
    stream.sendText("One two three four five six seven eight nine ten.");
    stream.end();
    const seen: TtsEvent[] = [];
    const err = await rejectionOf((async () => { for await (const e of stream.events()) seen.push(e); })());
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(seen.filter((e) => e.kind === "audio").length).toBeGreaterThan(0);
  });

  test("a malformed message, or one with no type, is a ProtocolError", async () => {
    for (const kind of ["1", "notype"]) {
      const stream = await tts(`malformed=${kind}`).connect();
      const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
      expect(err).toBeInstanceOf(ProtocolError);
    }
  });

  test("a message over maxMessageBytes is a ProtocolError naming the limit", async () => {
    const stream = await tts("oversize=300000", { maxMessageBytes: 100_000 }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/exceeds the limit of 100000 \(maxMessageBytes\)/);
  });

  test("options are checked: no voice, another encoding or an undocumented rate is a ConfigError", () => {
    expect(() => cartesiaTts({ voiceId: "" })).toThrow(ConfigError);
    expect(() => cartesiaTts({ voiceId: "v", encoding: "pcm_mulaw" as never })).toThrow(/encoding/);
    expect(() => cartesiaTts({ voiceId: "v", sampleRate: 32000 as never })).toThrow(/sampleRate/);
  });
});

describe("cartesiaParser fuzz", () => {
  test("10,000 random and mutated messages from the docs' examples: no uncaught error, every failure a ProtocolError or the service's error", () => {
    const rand = prng(0xca7e);
    const int = (n: number) => Math.floor(rand() * n);
    const ctx = { service: "tts", url: "ws://fuzz" };
    const ID = "50dc3b5e-5841-4aa1-9f94-60cfb9aead79";
    const { source: _source, ...examples } = server;
    const valid = Object.values(examples).map((m) => ({ ...m, context_id: ID }));
    const junk = () => [null, true, -1, 1e308, NaN, "x", "AAA", "AAAA", "chunk", "timestamps", [], {}, [1, "a"]][int(13)];
    const keys = ["type", "data", "context_id", "word_timestamps", "words", "start", "end", "status_code", "error", "message"];
    const mutate = (v: unknown): unknown => {
      if (Array.isArray(v)) return rand() < 0.3 ? junk() : v.map((x) => (rand() < 0.2 ? mutate(x) : x)).slice(0, rand() < 0.1 ? int(v.length + 1) : undefined);
      if (v && typeof v === "object") {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) if (rand() > 0.1) out[k] = rand() < 0.25 ? mutate(x) : x;
        if (rand() < 0.2) out[keys[int(keys.length)]] = junk();
        return out;
      }
      return rand() < 0.5 ? junk() : v;
    };
    const tally = { events: 0, protocol: 0, service: 0, ignored: 0, foreign: [] as string[] };
    for (let i = 0; i < 10_000; i++) {
      let text = JSON.stringify(mutate(valid[int(valid.length)]));
      if (i % 7 === 0) text = text.slice(0, int(text.length));
      if (i % 11 === 0) text = [...text].map((c) => (rand() < 0.05 ? String.fromCharCode(int(128)) : c)).join("");
      const parse = cartesiaParser(ID, i % 2 ? "s16le" : "f32le", 24000);
      try {
        const events = parse(text, ctx);
        if (events) tally.events += events.length;
        else tally.ignored++;
        for (const e of events ?? []) {
          if (e.kind === "audio") expect(e.pcm.every(Number.isFinite)).toBe(true);
          if (e.kind === "text") expect(Number.isFinite(e.startS) && e.stopS >= e.startS).toBe(true);
        }
      } catch (err) {
        if (err instanceof ProtocolError) tally.protocol++;
        else if (err instanceof BargeinError && /"type":"error"/.test(text)) tally.service++;
        else tally.foreign.push(`case ${i}: ${(err as Error)?.name}: ${(err as Error)?.message}`);
      }
    }
    console.log(`cartesia fuzz: ${JSON.stringify({ ...tally, foreign: tally.foreign.length })}`);
    expect(tally.foreign).toEqual([]);
    expect(tally.protocol).toBeGreaterThan(1000);
    expect(tally.events).toBeGreaterThan(1000);
  });
});
