/**
 * The OpenAI Realtime wire codec (src/providers/realtime-wire.ts) on the
 * docs' example messages (test/fixtures/openai-realtime/), its size limits,
 * and a seeded fuzz; the reply timeline's truncates and word timings
 * (realtime-timeline.ts); what a response sends first (pendingTurn).
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { BargeinError, ProtocolError } from "../../src/errors.js";
import { pendingTurn } from "../../src/providers/openai-realtime.js";
import { base64Bytes } from "../../src/providers/pcm-base64.js";
import { serviceError } from "../../src/providers/realtime-connection.js";
import { ReplyTimeline } from "../../src/providers/realtime-timeline.js";
import * as wire from "../../src/providers/realtime-wire.js";
import { prng } from "../lib/prng.mjs";

const ctx = { service: "openai-realtime", url: "wss://example.test/v1/realtime" };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/openai-realtime/${name}.json`, import.meta.url), "utf8"));
const server = fixture("server").messages as Array<Record<string, any>>;
const client = fixture("client");
/** 100 ms of a 440 Hz tone, s16, as base64: the docs' example holds the placeholder "Base64EncodedAudioDelta", not base64. */
const TONE = wire.pcm16Base64(Float32Array.from({ length: 2400 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 24000)));
const real = (m: Record<string, any>) => (m.type === "response.output_audio.delta" ? { ...m, delta: TONE } : m);
const decode = (m: unknown) => wire.decodeRealtimeEvent(JSON.stringify(m), ctx);
const docs = (type: string) => real(server.find((m) => m.type === type)!);

describe("decoding the docs' server events", () => {
  test("every example decodes; the ones the client needs carry their ids, texts and audio", () => {
    for (const m of server) expect(() => decode(real(m)), m.type).not.toThrow();
    expect(decode(docs("error"))).toEqual({ type: "error", message: "The 'type' field is missing.", code: "invalid_event", errorType: "invalid_request_error", clientEventId: "event_567" });
    const audio = decode(docs("response.output_audio.delta")) as Extract<wire.RealtimeServerEvent, { type: "response.output_audio.delta" }>;
    expect(audio).toMatchObject({ responseId: "resp_001", itemId: "msg_008" });
    expect(audio.pcm.byteLength).toBe(4800);
    expect(decode(docs("response.done"))).toEqual({ type: "response.done", responseId: "resp_001", status: "completed", reason: null });
    expect(decode(docs("conversation.item.truncated"))).toMatchObject({ type: "conversation.item.truncated", audioEndMs: expect.any(Number) });
    expect(decode(docs("conversation.item.input_audio_transcription.completed"))).toMatchObject({ type: "input_transcript", transcript: expect.any(String) });
    // A message item's done is not a function call: skipped. Events the client has no use for are skipped.
    expect(decode(docs("response.output_item.done"))).toBeUndefined();
    expect(decode(docs("conversation.item.added"))).toBeUndefined();
  });

  test("a function call's output_item.done becomes a call with its call id, name and arguments", () => {
    const args = docs("response.function_call_arguments.done");
    const done = { type: "response.output_item.done", response_id: "resp_002", output_index: 0, item: { id: args.item_id, type: "function_call", status: "completed", call_id: args.call_id, name: args.name, arguments: args.arguments } };
    expect(decode(done)).toEqual({ type: "function_call", responseId: "resp_002", call: { itemId: args.item_id, callId: args.call_id, name: args.name, arguments: args.arguments } });
  });

  test("a server error becomes a ProtocolError (invalid request) or a BargeinError that quotes the service", () => {
    const refused = serviceError(decode(docs("error")) as any, ctx, "response.create");
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused.message).toContain(`"The 'type' field is missing."`);
    expect(refused.message).toContain(ctx.url);
    const failed = serviceError({ type: "error", message: "The server had an error", code: null, errorType: "server_error", clientEventId: null }, ctx, "a client event");
    expect(failed.name).toBe("BargeinError");
    expect(failed).not.toBeInstanceOf(ProtocolError);
  });

  test("oversized audio or text, and bad fields, are ProtocolErrors", () => {
    const delta = docs("response.output_audio.delta");
    expect(() => decode({ ...delta, delta: "A".repeat(wire.MAX_AUDIO_DELTA_CHARS + 4) })).toThrow(ProtocolError);
    expect(() => decode({ ...docs("response.output_audio_transcript.delta"), delta: "x".repeat(wire.MAX_TEXT_CHARS + 1) })).toThrow(ProtocolError);
    expect(() => decode({ ...delta, delta: "not base64!" })).toThrow(ProtocolError);
    expect(() => decode({ ...docs("conversation.item.truncated"), audio_end_ms: -1 })).toThrow(ProtocolError);
    expect(() => wire.decodeRealtimeEvent("{not json", ctx)).toThrow(ProtocolError);
    expect(() => wire.decodeRealtimeEvent(new ArrayBuffer(4), ctx)).toThrow(ProtocolError);
    expect(() => decode({ event_id: "e" })).toThrow(ProtocolError);
  });
});

describe("client events", () => {
  test("have the docs' shapes", () => {
    const keys = (o: object) => Object.keys(o).sort();
    expect(keys(wire.truncateItem("msg_002", 1500))).toEqual(keys(client.truncate).filter((k: string) => k !== "event_id"));
    expect(wire.truncateItem("msg_002", 1500)).toMatchObject({ type: client.truncate.type, item_id: "msg_002", content_index: 0, audio_end_ms: 1500 });
    expect(wire.functionCallOutput("call_123", '{"time": "ten past two"}')).toEqual(client.functionCallOutput);
    expect(wire.userText("hi")).toEqual(client.userText);
    expect(wire.commitInput("event_789")).toEqual(client.commit);
    expect(wire.createResponse("e1")).toMatchObject(client.responseCreate);
    const noVad = wire.sessionUpdate({ turnDetection: "client", transcriptionModel: "gpt-4o-transcribe" }) as any;
    expect(noVad).toMatchObject(client.sessionUpdateNoVad);
    expect(noVad.session.audio.input.transcription).toEqual({ model: "gpt-4o-transcribe" });
    const server = wire.sessionUpdate({ turnDetection: "semantic_vad", transcriptionModel: "m" }) as any;
    expect(server.session.audio.input.turn_detection).toEqual({ type: "semantic_vad", create_response: false, interrupt_response: false });
  });

  test("audio goes out as s16 little-endian base64, float clamped", () => {
    const bytes = base64Bytes(wire.pcm16Base64(Float32Array.of(0, 0.5, -1, 2)), ctx, "audio");
    expect(Array.from(new Int16Array(bytes.buffer))).toEqual([0, 16384, -32767, 32767]);
    expect(Array.from(new Int16Array(base64Bytes(wire.pcm16Base64(Int16Array.of(-32768, 7)), ctx, "audio").buffer))).toEqual([-32768, 7]);
  });
});

describe("fuzz: mutated docs' messages", () => {
  test("every outcome is a decoded event, a skip, or a ProtocolError, never another error", () => {
    const r = prng(0x5eed);
    const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)]!;
    const scalars = [null, true, -1, 0, 1.5, 1e308, "", "x", "A===", [], {}, { id: 3 }];
    let protocolErrors = 0;
    for (let n = 0; n < 20_000; n++) {
      const base = structuredClone(real(pick(server)));
      const target = r() < 0.3 && typeof base.response === "object" ? base.response : r() < 0.3 && typeof base.item === "object" ? base.item : base;
      const key = pick(Object.keys(target));
      if (r() < 0.3) delete target[key];
      else target[key] = pick(scalars);
      const text = r() < 0.05 ? JSON.stringify(base).slice(0, Math.floor(r() * 80)) : JSON.stringify(base);
      try {
        wire.decodeRealtimeEvent(text, ctx);
      } catch (err) {
        expect(err, `case ${n}: ${text.slice(0, 200)}`).toBeInstanceOf(ProtocolError);
        expect((err as BargeinError).message).toContain(ctx.url);
        protocolErrors++;
      }
    }
    expect(protocolErrors).toBeGreaterThan(1000);
  });
});

describe("the reply timeline", () => {
  test("the truncate is the heard ms of the item being heard, never past its audio received; later items get 0", () => {
    const t = new ReplyTimeline();
    t.audio("item_a", 24_000); // 1 s
    t.audio("item_b", 12_000); // 0.5 s, from 1 s
    expect(t.truncates(0.4321)).toEqual([{ itemId: "item_a", audioEndMs: 432 }, { itemId: "item_b", audioEndMs: 0 }]);
    expect(t.truncates(1.25)).toEqual([{ itemId: "item_b", audioEndMs: 250 }]);
    expect(t.truncates(9)).toEqual([]);
    const r = prng(7);
    for (let n = 0; n < 2000; n++) {
      const s = new ReplyTimeline();
      let received = 0;
      for (let k = 0; k < 5; k++) {
        const samples = Math.floor(r() * 5000);
        s.audio(k < 3 ? "x" : "y", samples);
        received += samples;
      }
      for (const cut of s.truncates(r() * 2)) {
        expect(cut.audioEndMs).toBeGreaterThanOrEqual(0);
        expect(cut.audioEndMs).toBeLessThanOrEqual(Math.floor((received * 1000) / 24000));
      }
    }
  });

  test("words are spread over the audio that follows their transcript delta", () => {
    const t = new ReplyTimeline();
    t.transcript("one two");
    t.audio("i", 24_000);
    t.transcript(" three");
    t.audio("i", 12_000);
    t.complete();
    const words = t.words();
    expect(words.map((w) => w.text)).toEqual(["one", "two", "three"]);
    expect(words[0]!.startS).toBe(0);
    expect(words[1]!.stopS).toBeCloseTo(1, 5);
    expect(words[2]!.startS).toBeCloseTo(1 + 0.5 / 6, 5);
    expect(words[2]!.stopS).toBeCloseTo(1.5, 5);
  });

  test("words of a delta whose audio is still arriving last at least their length at the speaking rate", () => {
    const t = new ReplyTimeline();
    t.transcript("a fairly long phrase of words");
    t.audio("i", 2400); // only 0.1 s arrived so far
    const last = t.words().at(-1)!;
    expect(last.stopS).toBeGreaterThan(1.5);
  });
});

test("a response first sends the tool results after the last assistant message, or a typed user turn", () => {
  expect(pendingTurn([{ role: "user", content: "hi" }])).toEqual({ toolOutputs: [], userText: "hi" });
  const calls = [{ id: "call_1", name: "get_time", rawArguments: "{}" }];
  expect(
    pendingTurn([
      { role: "user", content: "what time is it" },
      { role: "assistant", content: "", toolCalls: calls },
      { role: "tool", content: '{"time":"noon"}', toolCallId: "call_1", name: "get_time" },
    ]),
  ).toEqual({ toolOutputs: [{ callId: "call_1", output: '{"time":"noon"}' }] });
});
