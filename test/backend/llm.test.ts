// The scripted LLM streams word by word over SSE and over a WebSocket, and stops when cancelled.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply, streamPieces } from "../../demo/server/eliza.mjs";
import { RecordingSocket } from "./helpers";
import { sleep } from "../lib/wait.mjs";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false });
});
afterAll(() => backend?.close());

const messages = (text: string) => [
  { role: "system", content: "You are helpful." },
  { role: "user", content: text },
];

/** POSTs a streaming chat completion; returns each SSE data payload with its arrival time. */
async function chat(text: string, query = "", init: RequestInit = {}) {
  const res = await fetch(`${backend.url}/v1/chat/completions${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "any", stream: true, messages: messages(text) }),
    ...init,
  });
  const events: { at: number; data: string }[] = [];
  const parser = createParser({ onEvent: (e: EventSourceMessage) => events.push({ at: Date.now(), data: e.data }) });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  return { res, events, reader, parser };
}

async function readAll(c: Awaited<ReturnType<typeof chat>>) {
  for (;;) {
    const { value, done } = await c.reader.read();
    if (done) break;
    c.parser.feed(value);
  }
  return c.events;
}

describe("ELIZA responder", () => {
  test("answers deterministically with 1–3 sentences related to the input", () => {
    expect(elizaReply("I need a vacation")).toBe(elizaReply("I need a vacation"));
    expect(elizaReply("I need a vacation")).toContain("need a vacation");
    expect(elizaReply("I am tired of my job")).toContain("tired of your job");
    for (const input of ["hello", "what is the weather like today", "blah", "I feel sad", ""]) {
      const sentences = elizaReply(input).split(/(?<=[.!?])\s+/);
      expect(sentences.length).toBeGreaterThanOrEqual(1);
      expect(sentences.length).toBeLessThanOrEqual(3);
    }
    expect(streamPieces(elizaReply("hello")).join("")).toBe(elizaReply("hello"));
  });
});

describe("LLM POST /v1/chat/completions (SSE)", () => {
  test("streams the reply word by word at the configured pace, ending with [DONE]", async () => {
    const c = await chat("what is the weather like today", "?word_ms=30");
    expect(c.res.status).toBe(200);
    expect(c.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readAll(c);
    expect(events.at(-1)!.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const text = chunks.map((ch) => ch.choices[0].delta.content ?? "").join("");
    expect(text).toBe(elizaReply("what is the weather like today"));
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    // One chunk per word, 30 ms apart: the whole stream takes at least (words-1) × 30 ms.
    const words = streamPieces(text).length;
    const contentEvents = events.filter((e) => e.data.includes('"content":"') && !e.data.includes('"content":""'));
    expect(contentEvents.length).toBe(words);
    expect(contentEvents.at(-1)!.at - contentEvents[0].at).toBeGreaterThanOrEqual((words - 1) * 30 * 0.9);
  });

  test("answers stream:false with one JSON completion", async () => {
    const res = await fetch(`${backend.url}/v1/chat/completions?word_ms=0`, {
      method: "POST",
      body: JSON.stringify({ messages: messages("hello") }),
    });
    const body = await res.json();
    expect(body.choices[0].message.content).toBe(elizaReply("hello"));
  });

  test("stops promptly when the client aborts: the server counts it and sends nothing more", async () => {
    const before = backend.stats().llm;
    const abort = new AbortController();
    const c = await chat("tell me a long story", "?word_ms=40", { signal: abort.signal });
    await c.reader.read();
    const abortedAt = Date.now();
    abort.abort();
    await expect.poll(() => backend.stats().llm.requestsAborted, { timeout: 1000, interval: 5 }).toBe(before.requestsAborted + 1);
    expect(Date.now() - abortedAt).toBeLessThan(200);
    const pieces = backend.stats().llm.piecesSent;
    await sleep(150);
    expect(backend.stats().llm.piecesSent).toBe(pieces);
    expect(backend.stats().llm.requestsEnded).toBe(before.requestsEnded);
    expect(backend.stats().llm.active).toBe(0);
  });
});

describe("LLM WebSocket /v1/responses", () => {
  test("streams output_text deltas and completes", async () => {
    const ws = new RecordingSocket(`${backend.wsUrl}/v1/responses?word_ms=20`, "json");
    await ws.opened;
    ws.send({ type: "response.create", response: { input: [{ role: "user", content: [{ type: "input_text", text: "I feel tired" }] }] } });
    await ws.next("response.completed");
    const text = ws.of("response.output_text.delta").map((e) => e.delta).join("");
    expect(text).toBe(elizaReply("I feel tired"));
    expect(ws.of("response.completed")[0].response.status).toBe("completed");
    // A second response on the same socket works too.
    ws.send({ type: "response.create", response: { input: "hello" } });
    await ws.until(() => ws.of("response.completed").length === 2, 5000, "second response");
    ws.close();
  });

  test("response.cancel stops the stream at once, and the server counts the abort", async () => {
    const before = backend.stats().llm;
    const ws = new RecordingSocket(`${backend.wsUrl}/v1/responses?word_ms=40`, "json");
    await ws.opened;
    ws.send({ type: "response.create", response: { input: "tell me a long story" } });
    await ws.until(() => ws.of("response.output_text.delta").length >= 2, 5000, "2 deltas");
    ws.send({ type: "response.cancel" });
    await ws.next("response.completed");
    const deltas = ws.of("response.output_text.delta").length;
    expect(ws.of("response.completed")[0].response.status).toBe("cancelled");
    expect(deltas).toBeLessThan(5);
    expect(streamPieces(elizaReply("tell me a long story")).length).toBeGreaterThan(20);
    expect(backend.stats().llm.requestsAborted).toBe(before.requestsAborted + 1);
    await sleep(120);
    expect(ws.of("response.output_text.delta").length).toBe(deltas);
    ws.close();
  });

  test("closing the socket mid-response aborts it on the server", async () => {
    const before = backend.stats().llm;
    const ws = new RecordingSocket(`${backend.wsUrl}/v1/responses?word_ms=40`, "json");
    await ws.opened;
    ws.send({ type: "response.create", response: { input: "tell me a long story" } });
    await ws.next("response.output_text.delta");
    ws.close();
    await expect.poll(() => backend.stats().llm.requestsAborted, { timeout: 1000, interval: 5 }).toBe(before.requestsAborted + 1);
    expect(backend.stats().llm.open).toBe(0);
  });
});
