/**
 * Fuzzing every provider's inbound parser over the real socket path: a local
 * `ws` server (or HTTP server, for SSE) sends one random or mutated message,
 * then a known sentinel, then a normal end. The provider under test reads it
 * through the browser `WebSocket` / `fetch` globals exactly as in a page.
 *
 * For each message the outcome must be one of:
 * - a ProtocolError (the message broke the protocol), or the error the
 *   message stands for when it is a well-formed server error (`Error`/`error`
 *   with a string message → AtCapacityError or BargeinError);
 * - a normal end with the sentinel seen: the message was valid, or a valid
 *   unknown type that is ignored, and the parser kept going.
 * Never an uncaught exception, a foreign error class (TypeError, RangeError…),
 * a hang (each case has a deadline), or a heap that keeps growing.
 *
 * Seeded PRNG: a failure names its seed and case index and replays exactly.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { decode, encode } from "@msgpack/msgpack";
import { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AtCapacityError, BargeinError, ProtocolError } from "../../src/errors.js";
import { kyutaiStt } from "../../src/providers/kyutai-stt.js";
import { kyutaiTts } from "../../src/providers/kyutai-tts.js";
import { openaiChat } from "../../src/providers/openai-chat.js";
import { websocketLlm } from "../../src/providers/websocket-llm.js";
import { prng } from "../lib/prng.mjs";

/**
 * Messages per provider; FUZZ_MESSAGES overrides it. The suite runs 3,000 (the first 500 over real
 * sockets, the rest in memory: a third of the CPU of 10,000); `npm run bench -- reliability` runs
 * the same seed's first 10,000.
 */
const MESSAGES = Number(process.env.FUZZ_MESSAGES ?? 3_000);
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
/** Cases in flight at once: enough to keep loopback busy, few enough for 2 cores. */
const CONCURRENCY = 24;
/** A case that takes longer than this is a hang. */
const CASE_DEADLINE_MS = 5000;

// ─── seeded randomness ────────────────────────────────────────────────────────


type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, items: readonly T[]): T => items[int(r, items.length)];

function randomString(r: Rand): string {
  const alphabets = ["abc xyz", "\u0000\uffff\ud800\u00e9\u4e2d", "\"\\{}[]:,", "0123456789.-e+"];
  const alphabet = pick(r, alphabets);
  let s = "";
  for (let i = int(r, 24); i > 0; i--) s += alphabet[int(r, alphabet.length)];
  return s;
}

function randomScalar(r: Rand): unknown {
  switch (int(r, 12)) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return int(r, 2000) - 1000;
    case 3: return r() * 1e6 - 5e5;
    case 4: return pick(r, [NaN, Infinity, -Infinity, -0, Number.MAX_VALUE, 2 ** 53 + 2]);
    case 5: return randomString(r);
    case 6: return new Uint8Array(int(r, 5) * 4 + int(r, 2)).map(() => int(r, 256));
    case 7: return Array.from({ length: int(r, 6) }, () => r() * 2 - 1);
    case 8: return [randomString(r), null];
    case 9: return {};
    case 10: return { message: randomString(r) };
    default: return 2n ** 63n - 1n;
  }
}

function randomValue(r: Rand, depth = 0): unknown {
  if (depth > 3 || r() < 0.6) return randomScalar(r);
  if (r() < 0.5) return Array.from({ length: int(r, 4) }, () => randomValue(r, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = int(r, 4); i > 0; i--) out[randomString(r)] = randomValue(r, depth + 1);
  return out;
}

/** A map with a plausible or random `type` and the protocol's field names holding random values. */
function randomTagged(r: Rand, types: readonly string[], fields: readonly string[]): Record<string, unknown> {
  const msg: Record<string, unknown> = {};
  const t = int(r, 10);
  if (t < 7) msg.type = pick(r, types);
  else if (t < 9) msg.type = randomString(r);
  else if (r() < 0.5) msg.type = randomScalar(r);
  for (const field of fields) if (r() < 0.6) msg[field] = randomScalar(r);
  if (r() < 0.2) msg[randomString(r)] = randomValue(r);
  return msg;
}

/** Flips, inserts, deletes or truncates bytes of a valid frame. */
function mutateBytes(r: Rand, bytes: Uint8Array): Uint8Array {
  const out = Array.from(bytes);
  for (let n = 1 + int(r, 4); n > 0; n--) {
    const at = int(r, out.length + 1);
    switch (int(r, 4)) {
      case 0: if (out.length) out[at % out.length] ^= 1 << int(r, 8); break;
      case 1: out.splice(at, 0, int(r, 256)); break;
      case 2: out.splice(at, 1 + int(r, 3)); break;
      default: out.length = Math.min(out.length, at);
    }
  }
  return Uint8Array.from(out);
}

function mutateText(r: Rand, text: string): string {
  const chars = [...text];
  for (let n = 1 + int(r, 3); n > 0; n--) {
    const at = int(r, chars.length + 1);
    switch (int(r, 3)) {
      case 0: chars.splice(at, 1); break;
      case 1: chars.splice(at, 0, pick(r, ["{", "}", "\"", ",", ":", "[", "\\", "\u0000", "null"])); break;
      default: chars.length = Math.min(chars.length, at);
    }
  }
  return chars.join("");
}

/** A msgpack frame that declares a huge length or nests deeply: the decoder's worst cases. */
function hostileMsgpack(r: Rand): Uint8Array {
  switch (int(r, 3)) {
    case 0: return Uint8Array.from([0xdb, 0xff, 0xff, 0xff, 0xf0, 0x41]); // str32 of ~4 GB, 1 byte present
    case 1: return Uint8Array.from([...Array(2000).fill(0x91), 0xc0]); // 2000 nested one-element arrays
    default: return Uint8Array.from([0xdf, 0x7f, 0xff, 0xff, 0xff]); // map32 of 2^31 entries, none present
  }
}

/** One fuzz frame for a msgpack protocol: binary, or now and then a text frame. */
function msgpackCase(r: Rand, valid: readonly Record<string, unknown>[], types: readonly string[], fields: readonly string[]): Uint8Array | string {
  const k = int(r, 20);
  if (k < 7) return encode(randomTagged(r, types, fields), { ignoreUndefined: true, useBigInt64: true });
  if (k < 13) return mutateBytes(r, encode(pick(r, valid)));
  if (k < 15) return Uint8Array.from({ length: int(r, 48) }, () => int(r, 256));
  if (k < 17) return encode(randomValue(r), { useBigInt64: true });
  if (k < 18) return hostileMsgpack(r);
  return r() < 0.5 ? JSON.stringify(pick(r, valid)) : randomString(r);
}

/** One fuzz text for a JSON protocol (a WebSocket text frame, or an SSE event's data). */
function jsonCase(r: Rand, valid: readonly Record<string, unknown>[], types: readonly string[], fields: readonly string[]): string {
  const k = int(r, 20);
  const safeStringify = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? Number(x) : x instanceof Uint8Array ? Array.from(x) : x));
  if (k < 8) return safeStringify(randomTagged(r, types, fields));
  if (k < 14) return mutateText(r, JSON.stringify(pick(r, valid)));
  if (k < 16) return safeStringify(randomValue(r));
  if (k < 17) return "[".repeat(5000) + "]".repeat(5000);
  return randomString(r);
}

// ─── what each case may end in ─────────────────────────────────────────────────

type Outcome = { kind: "ended"; sawSentinel: boolean } | { kind: "error"; error: unknown } | { kind: "hang" };

/** The message's decoded `type` and `message`, when it decodes to a tagged map at all. */
function peek(frame: Uint8Array | string, format: "msgpack" | "json"): { type?: unknown; message?: unknown; error?: unknown } {
  try {
    const v = format === "msgpack" ? (typeof frame === "string" ? undefined : decode(frame)) : JSON.parse(frame as string);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as { type?: unknown }) : {};
  } catch {
    return {};
  }
}

/**
 * A well-formed server error message may end the stream with the error it
 * stands for: Kyutai `Error`, Responses `error`, or an SSE chunk with `error`.
 */
function isServerErrorMessage(msg: { type?: unknown; message?: unknown; error?: unknown }, errorType: string): boolean {
  // openaiChat treats any `error` key as the server's error, even `"error": null` (noted in the report).
  return errorType === "sse" ? msg.error !== undefined : msg.type === errorType;
}

interface Tally {
  cases: number;
  protocolErrors: number;
  serverErrors: number;
  passedThrough: number;
  foreign: string[];
  lostSentinel: number[];
  hangs: number[];
}

function judge(outcome: Outcome, frame: Uint8Array | string, format: "msgpack" | "json", errorType: string, index: number, tally: Tally): void {
  tally.cases++;
  if (outcome.kind === "hang") return void tally.hangs.push(index);
  if (outcome.kind === "ended") {
    if (outcome.sawSentinel) tally.passedThrough++;
    else tally.lostSentinel.push(index);
    return;
  }
  const err = outcome.error;
  if (err instanceof ProtocolError) return void tally.protocolErrors++;
  if ((err instanceof AtCapacityError || err instanceof BargeinError) && isServerErrorMessage(peek(frame, format), errorType)) {
    return void tally.serverErrors++;
  }
  if (tally.foreign.length < 5) tally.foreign.push(`case ${index}: ${(err as Error)?.name}: ${(err as Error)?.message}`);
  else tally.foreign.push("…");
}

async function withDeadline<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T | "hang"> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<"hang">((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve("hang");
    }, CASE_DEADLINE_MS);
  });
  try {
    return await Promise.race([run(controller.signal), hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `count` cases, CONCURRENCY at a time, in a fixed order per index. */
async function runCases(count: number, one: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

function forceGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
const gc = forceGc();
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

// ─── the servers: one fuzz frame per connection, chosen by the `case` query ─────
//
// The same script runs over two transports. The real one: a `ws` server and a
// Node HTTP server on loopback, reached through the WebSocket and fetch globals.
// Over loopback a case costs about 7 ms (a connection each), so only the first
// SOCKET_CASES of each provider go that way; the rest go through an in-memory
// WebSocket and a stubbed fetch that deliver the very same frames to the very
// same provider code (MessageSocket, the handshake, the receive mapping, the
// SSE parser on a real Response stream). That stub only replaces the network.

/** Cases per provider that go over real loopback sockets. */
const SOCKET_CASES = Math.min(MESSAGES, Number(process.env.FUZZ_SOCKET_CASES ?? 500));

type Frame = Uint8Array | string;
/** The frames of the running suite, by case id. */
const frames = new Map<string, { fuzz: Frame; handshake: boolean }>();

const KYUTAI_READY = encode({ type: "Ready" });

/** What the server sends for a case: at once, or after the client's first message (the LLM request). */
function scriptFor(url: URL): { afterRequest: boolean; frames: Frame[] } | undefined {
  const entry = frames.get(url.searchParams.get("case")!);
  if (!entry) return undefined;
  if (url.pathname.startsWith("/v1/responses")) {
    // Responses-API LLM: the fuzz frame, a sentinel delta, then completed.
    return {
      afterRequest: true,
      frames: [entry.fuzz, JSON.stringify({ type: "response.output_text.delta", delta: "SENTINEL" }), JSON.stringify({ type: "response.completed" })],
    };
  }
  // Kyutai: the fuzz frame either replaces Ready (the handshake) or follows it; then a sentinel.
  const sentinel = url.pathname.includes("tts") ? { type: "Text", text: "SENTINEL", start_s: 0, stop_s: 0.1 } : { type: "Word", text: "SENTINEL", start_time: 0 };
  return { afterRequest: false, frames: [...(entry.handshake ? [] : [KYUTAI_READY]), entry.fuzz, encode(sentinel)] };
}

/** The SSE body for a case: the fuzz text as one event's data (a data line per line), a sentinel chunk, [DONE]. */
function sseBodyFor(url: URL): string | undefined {
  const entry = frames.get(url.searchParams.get("case")!);
  if (!entry) return undefined;
  const data = (entry.fuzz as string).split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("");
  return `${data}\ndata: ${JSON.stringify({ choices: [{ delta: { content: "SENTINEL" } }] })}\n\ndata: [DONE]\n\n`;
}

let wss: WebSocketServer;
let wsBase: string;
let http: Server;
let httpBase: string;

beforeAll(async () => {
  wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  wsBase = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  wss.on("connection", (socket, request) => {
    socket.on("error", () => {});
    const script = scriptFor(new URL(request.url!, "ws://x"));
    if (!script) return socket.close(1011);
    const play = () => {
      for (const frame of script.frames) socket.send(frame, { binary: typeof frame !== "string" });
      if (!script.afterRequest) socket.close(1000);
    };
    if (script.afterRequest) socket.once("message", play);
    else play();
  });
  http = createServer((req, res) => {
    const body = sseBodyFor(new URL(req.url!, "http://x"));
    req.resume();
    req.on("end", () => {
      if (body === undefined) return void res.writeHead(500).end();
      res.writeHead(200, { "Content-Type": "text/event-stream" }).end(body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  httpBase = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of wss.clients) client.terminate();
  await new Promise((resolve) => wss.close(resolve));
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

/**
 * The in-memory WebSocket: the browser API surface MessageSocket uses (events,
 * readyState, send, close, binaryType, bufferedAmount), with every event on a
 * later task as a real socket would. Not a model of the network: a test-only
 * replacement for loopback, for speed.
 */
class MemoryWebSocket extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readyState = 0;
  binaryType = "arraybuffer";
  readonly bufferedAmount = 0;
  readonly #script: { afterRequest: boolean; frames: Frame[] } | undefined;
  #requested = false;
  constructor(url: string) {
    super();
    this.#script = scriptFor(new URL(url));
    setTimeout(() => {
      if (this.readyState !== 0) return;
      this.readyState = 1;
      this.dispatchEvent(new Event("open"));
      if (!this.#script) return this.#closeWith(1011);
      if (!this.#script.afterRequest) this.#play();
    });
  }
  send(): void {
    if (this.readyState !== 1) throw new Error("InvalidStateError");
    if (this.#script?.afterRequest && !this.#requested) {
      this.#requested = true;
      setTimeout(() => this.#play());
    }
  }
  close(code = 1000): void {
    if (this.readyState >= 2) return;
    this.readyState = 2;
    setTimeout(() => this.#closeWith(code));
  }
  #play(): void {
    for (const frame of this.#script!.frames) {
      if (this.readyState !== 1) return;
      // A fresh ArrayBuffer per frame, as the browser delivers it.
      const data = typeof frame === "string" ? frame : frame.slice().buffer;
      this.dispatchEvent(new MessageEvent("message", { data }));
    }
    if (!this.#script!.afterRequest) this.close(1000);
  }
  #closeWith(code: number): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason: "", wasClean: true }));
  }
}

/** Runs `fn` with the in-memory transport installed (fetch answers with a real Response over the same script). */
async function inMemory<T>(fn: () => Promise<T>): Promise<T> {
  const realWebSocket = globalThis.WebSocket;
  const realFetch = globalThis.fetch;
  globalThis.WebSocket = MemoryWebSocket as unknown as typeof WebSocket;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    init?.signal?.throwIfAborted();
    const body = sseBodyFor(new URL(String(input)));
    if (body === undefined) return new Response("", { status: 500 });
    return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
  }) as typeof fetch;
  try {
    return await fn();
  } finally {
    globalThis.WebSocket = realWebSocket;
    globalThis.fetch = realFetch;
  }
}

// ─── the cases ──────────────────────────────────────────────────────────────────

const STT_VALID = [
  { type: "Word", text: "hello", start_time: 0.5 },
  { type: "EndWord", stop_time: 0.9 },
  { type: "Step", step_idx: 3, prs: [0.1, 0.2, 0.3, 0.4], buffered_pcm: 0 },
  { type: "Marker", id: 1 },
  { type: "Error", message: "no free channels" },
  { type: "Ready" },
];
const TTS_VALID = [
  { type: "Audio", pcm: [0, 0.5, -0.5, 0.25] },
  { type: "Text", text: "hello", start_s: 0.1, stop_s: 0.4 },
  { type: "Error", message: "oops" },
  { type: "Ready" },
];
const WS_LLM_VALID = [
  { type: "response.output_text.delta", delta: "Hi" },
  { type: "response.created", response: { id: "r1" } },
  { type: "error", error: { message: "bad" } },
  { type: "response.output_item.done", item: { type: "function_call", call_id: "c1", name: "get_time", arguments: '{"tz":"UTC"}' } },
];
const SSE_VALID = [
  { choices: [{ delta: { content: "Hi" } }] },
  { choices: [{ delta: { role: "assistant" } }] },
  { choices: [{ delta: {}, finish_reason: "stop" }] },
  { error: { message: "overloaded" } },
  { choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "get_time", arguments: '{"tz":' } }] } }] },
];

interface Report {
  /** Cases over real loopback sockets; the rest went through the in-memory transport. */
  socketCases: number;
  tally: Tally;
  heapDeltaBytes: number;
  ms: number;
}

/** The numbers, for the benchmark: bench/reliability.bench.mjs reads them from the printed JSON line. */
const reports: Record<string, Report> = {};

async function fuzzProvider(
  name: string,
  format: "msgpack" | "json",
  errorType: string,
  makeFrame: (r: Rand) => { fuzz: Uint8Array | string; handshake: boolean },
  runCase: (id: string, signal: AbortSignal) => Promise<Outcome>,
): Promise<Report> {
  const r = prng(SEED ^ name.length * 7919 ^ name.charCodeAt(0));
  const tally: Tally = { cases: 0, protocolErrors: 0, serverErrors: 0, passedThrough: 0, foreign: [], lostSentinel: [], hangs: [] };
  const started = performance.now();
  const heapBefore = heapUsed();
  const all = Array.from({ length: MESSAGES }, () => makeFrame(r));
  const runOne = async (index: number) => {
    const id = `${name}-${index}`;
    frames.set(id, all[index]);
    const outcome = await withDeadline((signal) => runCase(id, signal).catch((error): Outcome => ({ kind: "error", error })));
    frames.delete(id);
    judge(outcome === "hang" ? { kind: "hang" } : outcome, all[index].fuzz, format, errorType, index, tally);
  };
  await runCases(SOCKET_CASES, (i) => runOne(i));
  await inMemory(() => runCases(MESSAGES - SOCKET_CASES, (i) => runOne(SOCKET_CASES + i)));
  all.length = 0;
  const report = { socketCases: SOCKET_CASES, tally, heapDeltaBytes: heapUsed() - heapBefore, ms: performance.now() - started };
  reports[name] = report;
  return report;
}

function expectClean(report: Report): void {
  const { tally } = report;
  expect(tally.foreign, "errors that are not ProtocolError or the server's own error").toEqual([]);
  expect(tally.hangs, "cases that hung").toEqual([]);
  expect(tally.lostSentinel, "streams that ended normally but lost the message after the fuzz").toEqual([]);
  expect(tally.cases).toBe(MESSAGES);
  // Both outcomes occur: the fuzzer reaches the parser's accept and reject paths.
  expect(tally.protocolErrors).toBeGreaterThan(MESSAGES / 10);
  expect(tally.passedThrough).toBeGreaterThan(MESSAGES / 100);
  // Bounded memory: nothing per message is retained (500 cases with their own socket, the rest in memory).
  expect(report.heapDeltaBytes).toBeLessThan(8 * 1024 * 1024);
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
  process.on("uncaughtException", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
  process.off("uncaughtException", onUnhandled);
  console.log(`FUZZ_REPORT ${JSON.stringify({ messagesPerProvider: MESSAGES, uncaught: unhandled.length, reports })}`);
});

describe(`fuzz: ${MESSAGES} random and mutated messages into each provider's parser`, () => {
  test("kyutaiStt: every bad msgpack frame, in the handshake or the stream, becomes a ProtocolError; valid ones pass", async () => {
    const fields = ["text", "start_time", "stop_time", "step_idx", "prs", "buffered_pcm", "id", "message"];
    const types = ["Word", "EndWord", "Step", "Marker", "Error", "Ready", "Audio"];
    const report = await fuzzProvider(
      "stt",
      "msgpack",
      "Error",
      (r) => ({ fuzz: msgpackCase(r, STT_VALID, types, fields), handshake: r() < 0.15 }),
      async (id, signal) => {
        // warmupSteps 0: Step messages reach the pause mapping too.
        const stream = await kyutaiStt({ urls: `${wsBase}/?case=${id}`, startupTimeoutMs: 4000, warmupSteps: 0 }).connect(signal);
        let sawSentinel = false;
        try {
          for await (const e of stream.events(signal)) if (e.kind === "word" && e.text === "SENTINEL") sawSentinel = true;
        } finally {
          await stream.close();
        }
        return { kind: "ended", sawSentinel };
      },
    );
    expectClean(report);
    expect(unhandled).toEqual([]);
  });

  test("kyutaiTts: every bad msgpack frame becomes a ProtocolError; valid audio and words pass", async () => {
    const fields = ["pcm", "text", "start_s", "stop_s", "message"];
    const types = ["Audio", "Text", "Error", "Ready", "Eos"];
    const report = await fuzzProvider(
      "tts",
      "msgpack",
      "Error",
      (r) => ({ fuzz: msgpackCase(r, TTS_VALID, types, fields), handshake: r() < 0.15 }),
      async (id, signal) => {
        const stream = await kyutaiTts({ urls: `${wsBase}/api/tts_streaming?case=${id}`, startupTimeoutMs: 4000, backoff: { tries: 1 } }).connect(signal);
        let sawSentinel = false;
        try {
          for await (const e of stream.events(signal)) if (e.kind === "text" && e.text === "SENTINEL") sawSentinel = true;
        } finally {
          await stream.close();
        }
        return { kind: "ended", sawSentinel };
      },
    );
    expectClean(report);
    expect(unhandled).toEqual([]);
  });

  test("websocketLlm: every bad JSON frame becomes a ProtocolError; deltas and unknown events pass", async () => {
    const report = await fuzzProvider(
      "ws-llm",
      "json",
      "error",
      (r) => ({ fuzz: jsonCase(r, WS_LLM_VALID, ["response.output_text.delta", "response.completed", "response.created", "response.output_item.done", "error"], ["delta", "error", "message", "response", "item"]), handshake: false }),
      async (id, signal) => {
        const llm = websocketLlm({ url: `${wsBase}/v1/responses?case=${id}` });
        let text = "";
        for await (const delta of llm.stream([{ role: "user", content: "hi" }], signal)) if (typeof delta === "string") text += delta;
        const type = peek(all(id), "json").type;
        return { kind: "ended", sawSentinel: text.endsWith("SENTINEL") || type === "response.completed" || type === "response.done" };
      },
    );
    expectClean(report);
    expect(unhandled).toEqual([]);
  });

  test("openaiChat: every bad SSE chunk becomes a ProtocolError; chunks and [DONE] pass", async () => {
    const report = await fuzzProvider(
      "sse-llm",
      "json",
      "sse",
      (r) => ({ fuzz: jsonCase(r, SSE_VALID, [], ["choices", "error", "id", "object"]), handshake: false }),
      async (id, signal) => {
        const llm = openaiChat({ url: `${httpBase}/v1?case=${id}`, model: "fuzz" });
        let text = "";
        for await (const delta of llm.stream([{ role: "user", content: "hi" }], signal)) if (typeof delta === "string") text += delta;
        // "[DONE]" as the fuzz data ends the stream early, as it should.
        return { kind: "ended", sawSentinel: text.endsWith("SENTINEL") || (all(id) as string).trim() === "[DONE]" };
      },
    );
    expectClean(report);
    expect(unhandled).toEqual([]);
  });
});

/** The fuzz frame of a running case (cases are looked up while in flight). */
function all(id: string): Uint8Array | string {
  return frames.get(id)!.fuzz;
}
