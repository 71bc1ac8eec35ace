/**
 * assemblyaiStt against the real AssemblyAI emulator of the reference backend
 * (demo/server/emulators/assemblyai.mjs: pocketsphinx on a flite fixture), a
 * scripted `ws` server where a close code or a chunk size must be exact, and
 * its pure turn core on the docs' example sessions (test/fixtures/assemblyai),
 * fuzzed with 10,000 mutated messages.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { assemblyaiStt } from "../../src/providers/assemblyai-stt.js";
import { AssemblyAiTurns, PaddedTimeline } from "../../src/providers/assemblyai-turns.js";
import type { SttEvent, SttStream } from "../../src/providers/types.js";
import { decodeJson, type TaggedMessage } from "../../src/providers/wire.js";
import { prng } from "../lib/prng.mjs";
import { WebSocketServer } from "ws";
import { rejectionOf, startWsServer, type TestWsServer } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

/** The backend's key stands for the API key; the token function mints a temporary token, as a page's does. */
const KEY = "aai-api-key-7c1";
/**
 * The emulator loads a pocketsphinx decoder before Begin when none is idle: about 1 s, several on
 * this shared 2-core machine. Tests that are not about the start-up timeout allow for it.
 */
const SLOW_START = { startupTimeoutMs: 15_000 };
/** What a page's token function does: ask its own server, which mints a temporary token (one session). */
const token = async () => ((await (await fetch(`${backend.url}/api/token?service=assemblyai`)).json()) as { token: string }).token;
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

const fixtures = new URL("../fixtures/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`assemblyai/${name}.json`, fixtures), "utf8")).messages as TaggedMessage[];
function speech(name: string) {
  const wav = readWav(readFileSync(new URL(`speech/${name}.wav`, fixtures)));
  const meta = JSON.parse(readFileSync(new URL(`speech/${name}.json`, fixtures), "utf8"));
  return { samples: wav.samples as Int16Array, meta, spoken: meta.text.toLowerCase().replace(/[^a-z' ]/g, "") as string };
}

/** Feeds `samples` as the uplink does: 20 ms frames. */
function sendFrames(stream: SttStream, samples: Int16Array | Float32Array, frame = 320): number {
  let bytes = 0;
  for (let i = 0; i < samples.length; i += frame) bytes += stream.sendAudio(samples.subarray(i, i + frame));
  return bytes;
}

/** Reads events in the background until the stream ends. */
function record(stream: SttStream) {
  const events: SttEvent[] = [];
  const done = (async () => {
    for await (const e of stream.events()) events.push(e);
  })();
  done.catch(() => {});
  return { events, done, words: () => events.flatMap((e) => (e.kind === "word" ? [e.text] : [])).join(" ") };
}

const ctx = { service: "stt", url: "wss://streaming.assemblyai.com/v3/ws" };
/** The docs' example session through the turn core. */
function replay(messages: TaggedMessage[], timeline = new PaddedTimeline(16000)) {
  const turns = new AssemblyAiTurns(timeline);
  return messages.filter((m) => m.type !== "Begin").flatMap((m) => turns.receive(m, ctx).events);
}

describe("assemblyaiStt against the emulator", () => {
  test("a spoken question: each word once, final, with its start near the spoken one, then end-of-turn; URL and format as documented", async () => {
    const { samples, meta, spoken } = speech("weather-question");
    const stt = assemblyaiStt({ urls: backend.wsUrl, token, ...SLOW_START });
    expect(stt.audioFormat).toEqual({ sampleRate: 16000, encoding: "s16" });
    const stream = await stt.connect();
    const log = record(stream);
    sendFrames(stream, samples);
    sendFrames(stream, new Int16Array(16000 * 1.5)); // silence past max_turn_silence
    const until = Date.now() + 20_000;
    while (!log.events.some((e) => e.kind === "end-of-turn") && Date.now() < until) await sleep(20);
    expect(log.words()).toBe(spoken);
    const words = log.events.filter((e) => e.kind === "word");
    words.forEach((w, i) => expect(Math.abs(w.startS - meta.words[i].start)).toBeLessThan(0.25));
    // Every word is followed by its word-end, at or after its start.
    log.events.forEach((e, i) => {
      if (e.kind === "word") expect(log.events[i + 1]).toMatchObject({ kind: "word-end", stopS: expect.any(Number) });
      if (e.kind === "word") expect((log.events[i + 1] as { stopS: number }).stopS).toBeGreaterThanOrEqual(e.startS);
    });
    const eot = log.events.find((e) => e.kind === "end-of-turn")!;
    expect(eot).toMatchObject({ kind: "end-of-turn", eager: false, confidence: expect.any(Number) });
    expect(log.events[0]).toMatchObject({ kind: "speech-start" });
    // The service ended the turn itself: a flush now has nothing to wait for.
    const t0 = performance.now();
    await stream.flush();
    expect(performance.now() - t0).toBeLessThan(100);
    await stream.close();
    await log.done;
    expect(log.events.at(-1)).toEqual({ kind: "marker", id: 1 });
  });

  test("flush() is ForceEndpoint: it resolves on the forced end of turn, after the turn's last words, and a marker follows; with nothing heard, after the grace", async () => {
    const { samples, meta, spoken } = speech("turn-on-lights");
    const stream = await assemblyaiStt({ urls: backend.wsUrl, token, ...SLOW_START, flushGraceMs: 200 }).connect();
    const log = record(stream);
    // 90 ms past the speech: far too little silence for the service to end the turn itself, and
    // not a whole chunk, so flush pads the rest.
    sendFrames(stream, samples.subarray(0, meta.offsetSamples + 1440));
    const until = Date.now() + 10_000;
    while (!log.events.some((e) => e.kind === "speech-start") && Date.now() < until) await sleep(10);
    await stream.flush(AbortSignal.timeout(10_000));
    // As the session does, read on to the marker: the consumer may not have drained the turn's events yet.
    for (let i = 0; i < 100 && !log.events.some((e) => e.kind === "marker"); i++) await sleep(5);
    const kinds = log.events.map((e) => e.kind);
    expect(log.words(), JSON.stringify(log.events)).toBe(spoken);
    expect(kinds.slice(-2)).toEqual(["end-of-turn", "marker"]);
    // No turn open and none ended by the service since: the next flush waits flushGraceMs (200 here)
    // for the service to report speech, and with none it resolves with its marker.
    const t0 = performance.now();
    await stream.flush();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    await sleep(10);
    expect(log.events.at(-1)).toMatchObject({ kind: "marker", id: 2 });
    await stream.close();
  });

  test("close() ends the session (Terminate, then the close handshake) and the events end normally; sending after it throws", async () => {
    const stats = () => backend.stats().stt;
    const before = stats();
    const stream = await assemblyaiStt({ urls: backend.wsUrl, token, ...SLOW_START }).connect();
    const log = record(stream);
    await stream.close();
    await log.done; // the events end normally
    for (let i = 0; i < 300 && stats().closedNormally === before.closedNormally; i++) await sleep(10);
    expect(stats().closedNormally).toBe(before.closedNormally + 1); // code 1000, whichever side closed first
    expect(stats().open).toBe(before.open);
    expect(() => stream.sendAudio(new Int16Array(800))).toThrow(ConnectionClosedError);
  });

  test("aborting connect() before Begin closes the socket and rejects with the abort", async () => {
    // Monotonic counters: other tests' sessions may still be closing.
    const stats = () => backend.stats().stt;
    const before = stats();
    const controller = new AbortController();
    const pending = assemblyaiStt({ urls: `${backend.wsUrl}?delay_ms=1500`, token, ...SLOW_START }).connect(controller.signal);
    for (let i = 0; i < 300 && stats().opened === before.opened; i++) await sleep(10);
    expect(stats().opened).toBe(before.opened + 1);
    controller.abort();
    expect((await rejectionOf(pending)) as Error).toMatchObject({ name: "AbortError" });
    for (let i = 0; i < 300 && stats().closedByClient === before.closedByClient; i++) await sleep(10);
    expect(stats().closedByClient).toBe(before.closedByClient + 1);
  });

  test("errors: a refused token is a ConfigError (1008) with the token redacted, capacity an AtCapacityError (3009), a slow Begin a ServiceTimeoutError", async () => {
    const refused = (await rejectionOf(assemblyaiStt({ urls: backend.wsUrl, token: async () => "stolen-or-expired", ...SLOW_START }).connect())) as ConfigError;
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused.message).toContain("1008");
    expect(refused.message).not.toContain("stolen-or-expired");
    expect(refused.url).toContain("token=***");
    expect(await rejectionOf(assemblyaiStt({ urls: `${backend.wsUrl}?capacity=0`, token, ...SLOW_START }).connect())).toBeInstanceOf(AtCapacityError);
    const slow = await rejectionOf(assemblyaiStt({ urls: `${backend.wsUrl}?delay_ms=1500`, token, startupTimeoutMs: 300 }).connect());
    expect(slow).toBeInstanceOf(ServiceTimeoutError);
  });

  test("a retry on another instance asks the token function again: the slow instance spent the first temporary token", async () => {
    const minted: string[] = [];
    const counting = async () => {
      minted.push(await token());
      return minted.at(-1)!;
    };
    // The first URL (kept first by the shuffle's random source) checks the token, then is slow to send Begin.
    const urls = [`${backend.wsUrl}?delay_ms=4000`, backend.wsUrl];
    const stream = await assemblyaiStt({ urls, token: counting, startupTimeoutMs: 3000, random: () => 0.99 }).connect();
    expect(minted).toHaveLength(2);
    expect(minted[0]).not.toBe(minted[1]);
    await stream.close();
  }, 30_000);

  test("errors mid-stream: malformed is a ProtocolError, a message over maxMessageBytes a ProtocolError, a drop a ConnectionClosedError", async () => {
    const cases: [string, Record<string, unknown>, new (...args: never[]) => Error][] = [
      ["?malformed=1", {}, ProtocolError],
      ["?malformed=notype", {}, ProtocolError],
      ["?oversize=70000", { maxMessageBytes: 64 * 1024 }, ProtocolError],
      ["?drop_after_ms=200", {}, ConnectionClosedError],
    ];
    for (const [query, extra, expected] of cases) {
      const stream = await assemblyaiStt({ urls: `${backend.wsUrl}${query}`, token, ...SLOW_START, ...extra }).connect();
      const err = await rejectionOf(record(stream).done);
      expect(err, query).toBeInstanceOf(expected);
      if (query.includes("oversize")) expect((err as Error).message).toContain("exceeds the limit of 65536");
    }
  });
});

describe("assemblyaiStt on a scripted server (exact bytes and close codes)", () => {
  let server: TestWsServer | undefined;
  afterAll(() => server?.close());

  test("20 ms frames are coalesced into 50 ms binary messages; held samples count in bufferedAmount; flush pads to 50 ms", async () => {
    // A raw server: the frames are kept as they came (binary PCM or JSON text).
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((r) => wss.once("listening", r));
    const frames: (Buffer | string)[] = [];
    let requestUrl = "";
    wss.on("connection", (ws, req) => {
      requestUrl = req.url ?? "";
      ws.on("message", (data, isBinary) => frames.push(isBinary ? (data as Buffer) : String(data)));
      ws.send(JSON.stringify({ type: "Begin", id: "x", expires_at: 0 }));
    });
    const port = (wss.address() as { port: number }).port;
    const stream = await assemblyaiStt({ urls: `ws://127.0.0.1:${port}`, token: async () => "temporary-token-1" }).connect();
    const url = new URL(requestUrl, "ws://x");
    expect(url.pathname).toBe("/v3/ws");
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ sample_rate: "16000", encoding: "pcm_s16le", speech_model: "universal-streaming-english", format_turns: "false", token: "temporary-token-1" });
    const frame = new Int16Array(320).fill(1000);
    expect(stream.bufferedAmount).toBe(0);
    expect(stream.sendAudio(frame)).toBe(0); // 20 ms held
    expect(stream.bufferedAmount).toBe(640);
    expect(stream.sendAudio(frame)).toBe(0);
    expect(stream.sendAudio(new Float32Array(320).fill(0.5))).toBe(1600); // 60 ms: one 50 ms message out, 10 ms held
    expect(stream.bufferedAmount).toBeGreaterThanOrEqual(320); // the 10 ms held, and what the socket has not sent yet
    await stream.flush();
    for (let i = 0; i < 100 && frames.length < 3; i++) await sleep(10);
    const [first, second, force] = frames as [Buffer, Buffer, string];
    expect([first.byteLength, second.byteLength]).toEqual([1600, 1600]); // the held 10 ms went out padded to 50 ms
    const secondPcm = new Int16Array(second.buffer.slice(second.byteOffset, second.byteOffset + second.byteLength));
    expect(Array.from(secondPcm.subarray(0, 160))).toEqual(new Array(160).fill(16384)); // 0.5 as s16
    expect(Array.from(secondPcm.subarray(160))).toEqual(new Array(640).fill(0)); // the padding
    expect(JSON.parse(force)).toEqual({ type: "ForceEndpoint" });
    await stream.close();
    await new Promise((r) => wss.close(r));
  });

  test("close codes map onto the family: 3005 a BargeinError quoting the reason, 3008 a ConnectionClosedError, 1000 a normal end", async () => {
    for (const [code, expected] of [[3005, BargeinError], [3008, ConnectionClosedError]] as const) {
      server = await startWsServer((conn) => {
        conn.sendJson({ type: "Begin", id: "x", expires_at: 0 });
        setTimeout(() => conn.socket.close(code, "Session Cancelled: An error occurred"), 20);
      });
      const stream = await assemblyaiStt({ urls: server.url }).connect();
      const err = (await rejectionOf(record(stream).done)) as Error;
      expect(err.constructor).toBe(expected);
      expect(err.message).toContain(String(code));
      await server.close();
    }
    server = await startWsServer((conn) => {
      conn.sendJson({ type: "Begin", id: "x", expires_at: 0 });
      for (const m of docs("session-formatted").slice(1)) conn.sendJson(m);
      conn.socket.close(1000);
    });
    const stream = await assemblyaiStt({ urls: server.url }).connect();
    const log = record(stream);
    await log.done;
    expect(log.words()).toBe("Hi, my name is Sonny. I am a voice agent.");
    await server.close();
    server = undefined;
  });
});

describe("the turn core on the docs' example sessions", () => {
  test("unformatted session with format_turns' repeat: each word once, unformatted; one end-of-turn per turn; the utterance is an eager end", () => {
    const events = replay(docs("session-unformatted"));
    const words = events.filter((e) => e.kind === "word");
    expect(words.map((w) => w.text).join(" ")).toBe("hi my name is sonny i am a voice agent");
    expect(words[0]).toEqual({ kind: "word", text: "hi", startS: 1.92 });
    expect(events.filter((e) => e.kind === "speech-start")).toEqual([{ kind: "speech-start", startS: 1.92 }, { kind: "speech-start", startS: 5.2 }]);
    expect(events.filter((e) => e.kind === "end-of-turn")).toEqual([
      { kind: "end-of-turn", eager: false, confidence: expect.any(Number) },
      { kind: "end-of-turn", eager: true, confidence: expect.any(Number) },
      { kind: "end-of-turn", eager: false, confidence: expect.any(Number) },
    ]);
    // "sonny" was "son" first: only the final text went out, and "agent" only once it was final.
    expect(words.map((w) => w.text)).not.toContain("son");
    expect(words.map((w) => w.text)).not.toContain("agen");
  });

  test("formatted session: the formatted words as they became final, word-ends from the words' own end times", () => {
    const events = replay(docs("session-formatted"));
    expect(events.filter((e) => e.kind === "word").map((w) => w.text)).toEqual(["Hi,", "my", "name", "is", "Sonny.", "I", "am", "a", "voice", "agent."]);
    const firstEnd = events.find((e) => e.kind === "word-end");
    expect(firstEnd).toEqual({ kind: "word-end", stopS: 2.56 });
  });

  test("a turn that grows after its eager end is a turn-resumed", () => {
    const turns = new AssemblyAiTurns(new PaddedTimeline(16000));
    const w = (text: string, start: number, final = true) => ({ text, start, end: start + 80, confidence: 0.9, word_is_final: final });
    const turn = (words: object[], extra: object = {}) => ({ type: "Turn", turn_order: 3, end_of_turn: false, turn_is_formatted: false, transcript: "", end_of_turn_confidence: 0.5, words, utterance: "", ...extra });
    expect(turns.receive(turn([w("call", 0)], { utterance: "call" }), ctx).events.map((e) => e.kind)).toEqual(["word", "word-end", "end-of-turn"]);
    expect(turns.turnOpen).toBe(true);
    expect(turns.receive(turn([w("call", 0), w("mom", 400, false)]), ctx).events).toEqual([{ kind: "turn-resumed" }]);
    const ended = turns.receive(turn([w("call", 0), w("mom", 400)], { end_of_turn: true }), ctx);
    expect(ended.turnEnded).toBe(true);
    expect(turns.turnOpen).toBe(false);
  });

  test("PaddedTimeline takes the flush padding back out of the service's times", () => {
    const timeline = new PaddedTimeline(16000);
    timeline.pad(1600, 640); // 40 ms of padding after 100 ms of audio
    expect(timeline.toStreamSeconds(50)).toBeCloseTo(0.05, 9);
    expect(timeline.toStreamSeconds(120)).toBeCloseTo(0.1, 9); // inside the padding: where it began
    expect(timeline.toStreamSeconds(240)).toBeCloseTo(0.2, 9);
    timeline.pad(16000 + 640, 320);
    expect(timeline.toStreamSeconds(2000)).toBeCloseTo(2 - 0.06, 9);
  });
});

describe("fuzz: the turn core on 10,000 mutated messages from the docs' examples", () => {
  test("every message is either handled or a ProtocolError (or the BargeinError of a well-formed Error); nothing else escapes", () => {
    const samples = [...docs("session-unformatted"), ...docs("session-formatted")];
    const r = prng(0xa55e);
    const int = (n: number) => Math.floor(r() * n);
    const junk = (): unknown => [null, true, -1, 1e308, NaN, "x", "", [], {}, [1, "a"], { text: 1 }, 2.5, -0][int(13)];
    const mutate = (value: unknown, depth = 0): unknown => {
      if (r() < 0.15 || depth > 4) return junk();
      if (Array.isArray(value)) {
        const out = value.map((v) => (r() < 0.3 ? mutate(v, depth + 1) : v));
        if (r() < 0.2) out.splice(int(out.length + 1), 0, junk());
        if (r() < 0.2) out.splice(int(out.length), 1);
        return out;
      }
      if (value && typeof value === "object") {
        const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
        for (const key of Object.keys(out)) {
          if (r() < 0.25) out[key] = mutate(out[key], depth + 1);
          else if (r() < 0.05) delete out[key];
        }
        return out;
      }
      return r() < 0.5 ? junk() : value;
    };
    const outcomes = { handled: 0, protocol: 0, service: 0 };
    for (let i = 0; i < 10_000; i++) {
      const turns = new AssemblyAiTurns(new PaddedTimeline(16000));
      const base = samples[int(samples.length)];
      let text: string;
      if (r() < 0.1) {
        text = JSON.stringify(base).slice(0, int(200)); // a truncated frame
      } else {
        const message = mutate(base) as Record<string, unknown>;
        if (message && typeof message === "object" && r() < 0.1) message.type = ["Turn", "SpeechStarted", "Termination", "Error", "Nope"][int(5)];
        text = JSON.stringify(message) ?? "undefined";
      }
      try {
        const step = turns.receive(decodeJson(text, ctx), ctx);
        for (const e of step.events) {
          if (e.kind === "word") expect(Number.isFinite(e.startS) && typeof e.text === "string").toBe(true);
          if (e.kind === "word-end") expect(Number.isFinite(e.stopS)).toBe(true);
        }
        outcomes.handled++;
      } catch (err) {
        if (err instanceof ProtocolError) outcomes.protocol++;
        else if (err instanceof BargeinError && text.includes('"type":"Error"')) outcomes.service++;
        else throw new Error(`case ${i}: ${String(err)} for ${text.slice(0, 200)}`);
      }
    }
    expect(outcomes.handled + outcomes.protocol + outcomes.service).toBe(10_000);
    expect(outcomes.protocol).toBeGreaterThan(1000);
    expect(outcomes.handled).toBeGreaterThan(1000);
  });
});
