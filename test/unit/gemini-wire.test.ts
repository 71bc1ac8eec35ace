/**
 * The Gemini Live wire codec (src/providers/gemini-wire.ts) on the docs'
 * example messages (test/fixtures/gemini-live/), text and binary frames, its
 * size limits and a seeded fuzz; the client messages' shapes against the
 * docs' examples; a refusing close as an error (gemini-connection.ts); what a
 * reply sends first and the heard-words rule (gemini-live.ts).
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ProtocolError, type BargeinError } from "../../src/errors.js";
import { closeError } from "../../src/providers/gemini-connection.js";
import { heardText, pendingTurn } from "../../src/providers/gemini-live.js";
import * as wire from "../../src/providers/gemini-wire.js";
import { PreRoll } from "../../src/providers/pre-roll.js";
import { pcm16Base64 } from "../../src/providers/realtime-wire.js";
import { prng } from "../lib/prng.mjs";

const ctx = { service: "gemini-live", url: "wss://example.test/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=***" };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/gemini-live/${name}.json`, import.meta.url), "utf8"));
const server = fixture("server").messages as Array<Record<string, any>>;
const client = fixture("client");
const decode = (m: unknown) => wire.decodeGeminiMessage(JSON.stringify(m), ctx);
const first = (key: string, sub?: string) => server.find((m) => m[key] !== undefined && (sub === undefined || m[key][sub] !== undefined))!;
const TONE = pcm16Base64(Float32Array.from({ length: 2400 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 24000)));
const audioMessage = (data = TONE, mimeType = "audio/pcm;rate=24000") => ({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType, data } }] } } });

describe("decoding the docs' server messages", () => {
  test("every example decodes to the events the client acts on", () => {
    expect(decode(first("setupComplete"))).toEqual([{ type: "setupComplete" }]);
    const audio = decode(first("serverContent", "modelTurn"));
    expect(audio).toHaveLength(1);
    expect(audio[0]).toMatchObject({ type: "audio" });
    expect((audio[0] as { pcm: Uint8Array }).pcm.byteLength).toBe(4); // the example's "AAAAAA==": two samples
    expect(decode(first("serverContent", "outputTranscription"))).toEqual([{ type: "outputTranscription", text: "Hello there" }]);
    expect(decode(first("serverContent", "inputTranscription"))).toEqual([{ type: "inputTranscription", text: "Hello, how are you?" }]);
    expect(decode(first("serverContent", "generationComplete"))).toEqual([{ type: "generationComplete" }]);
    expect(decode(first("serverContent", "turnComplete"))).toEqual([{ type: "turnComplete" }]);
    expect(decode(first("serverContent", "interrupted"))).toEqual([{ type: "interrupted" }]);
    expect(decode(first("toolCall"))).toEqual([{ type: "toolCall", calls: [{ id: "function-call-4497474458538163468", name: "get_time", arguments: "{}" }] }]);
    expect(decode(first("toolCallCancellation"))).toEqual([{ type: "toolCallCancellation", ids: ["function-call-4497474458538163468"] }]);
    expect(decode(first("goAway"))).toEqual([{ type: "goAway", timeLeft: "10s" }]);
    // A message with no part the client needs decodes to nothing.
    expect(decode({ usageMetadata: { totalTokenCount: 3 } })).toEqual([]);
    expect(decode({ sessionResumptionUpdate: { newHandle: "h", resumable: true } })).toEqual([]);
  });

  test("one serverContent may carry audio, its transcription and the turn's end: all of it, in the order to act on", () => {
    const m = { serverContent: { modelTurn: { parts: [{ text: "thinking" }, { inlineData: { mimeType: "audio/pcm;rate=24000", data: TONE } }] }, outputTranscription: { text: "Hi" }, turnComplete: true } };
    expect(decode(m).map((e) => e.type)).toEqual(["audio", "outputTranscription", "turnComplete"]);
    expect((decode(m)[0] as { pcm: Uint8Array }).pcm.byteLength).toBe(4800);
  });

  test("a binary frame holding the JSON reads as the text frame does; one that is not UTF-8 JSON is a ProtocolError", () => {
    const bytes = new TextEncoder().encode(JSON.stringify(first("serverContent", "outputTranscription")));
    expect(wire.decodeGeminiMessage(bytes.buffer as ArrayBuffer, ctx)).toEqual([{ type: "outputTranscription", text: "Hello there" }]);
    expect(() => wire.decodeGeminiMessage(new Uint8Array([0xff, 0xfe, 0x7b]).buffer as ArrayBuffer, ctx)).toThrow(ProtocolError);
  });

  test("malformed and oversized messages are ProtocolErrors naming the service's (secret-free) URL", () => {
    const cases: unknown[] = [
      "{not json",
      "[1,2]",
      { serverContent: "x" },
      { serverContent: { modelTurn: { parts: "x" } } },
      audioMessage("not base64!"),
      audioMessage(TONE, "audio/pcm;rate=16000"),
      audioMessage("A".repeat(wire.MAX_AUDIO_PART_CHARS + 4)),
      { serverContent: { outputTranscription: { text: "x".repeat(wire.MAX_TEXT_CHARS + 1) } } },
      { toolCall: { functionCalls: [{ id: 1, name: "get_time" }] } },
      { toolCall: { functionCalls: [{ id: "a", name: "get_time", args: "{}" }] } },
      { toolCallCancellation: { ids: [1] } },
    ];
    for (const c of cases) {
      const text = typeof c === "string" ? c : JSON.stringify(c);
      let error: unknown;
      try {
        wire.decodeGeminiMessage(text, ctx);
      } catch (err) {
        error = err;
      }
      expect(error, text.slice(0, 80)).toBeInstanceOf(ProtocolError);
      expect((error as BargeinError).message).toContain(ctx.url);
    }
  });

  test("a close that refuses us (1007 with a reason) is a ProtocolError quoting it and saying what to do; an ordinary drop is not", () => {
    const refused = closeError({ code: 1007, reason: "API key expired. Please renew the API key." }, ctx, "at setup");
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused!.message).toContain('"API key expired. Please renew the API key." (close 1007)');
    expect(refused!.message).toContain("fresh ephemeral token");
    expect(closeError({ code: 1006, reason: "" }, ctx, "")).toBeUndefined();
    expect(closeError({ code: 1011, reason: "Internal error" }, ctx, "")).toBeUndefined();
  });
});

describe("client messages", () => {
  test("the setup has the docs' shape; client detection disables automatic activity detection", () => {
    const setup = wire.setupMessage({ model: "gemini-2.0-flash-live-001", voice: "Kore", instructions: "You are a helpful assistant and answer in a friendly tone.", turnDetection: "client", tools: [{ name: "get_time", description: "The time now", parameters: { type: "object", properties: {} } }] }) as any;
    const docs = client.setup.setup;
    expect(setup.setup.model).toBe(docs.model);
    expect(setup.setup.generationConfig).toEqual(docs.generationConfig);
    expect(setup.setup.systemInstruction).toEqual(docs.systemInstruction);
    expect(setup.setup.tools[0].functionDeclarations[0]).toMatchObject(docs.tools[0].functionDeclarations[0]);
    expect(setup.setup.realtimeInputConfig).toEqual({ automaticActivityDetection: { disabled: true }, activityHandling: "START_OF_ACTIVITY_INTERRUPTS" });
    expect(setup.setup.inputAudioTranscription).toEqual({});
    expect(setup.setup.outputAudioTranscription).toEqual({});
    const server = wire.setupMessage({ model: "models/m", turnDetection: "server" }) as any;
    expect(server.setup.model).toBe("models/m");
    expect(server.setup.realtimeInputConfig).toEqual({ automaticActivityDetection: { disabled: false }, activityHandling: "NO_INTERRUPTION" });
    expect(server.setup.tools).toBeUndefined();
  });

  test("realtime input, clientContent and toolResponse have the docs' shapes", () => {
    const audio = wire.audioInput(new Int16Array([0, 0])) as any;
    expect(audio).toEqual(client.audio);
    expect(wire.activityStart()).toEqual(client.activityStart);
    expect(wire.activityEnd()).toEqual(client.activityEnd);
    expect(wire.userTurn("Hello, how are you?", true)).toEqual(client.clientContent);
    const docs = client.toolResponse.toolResponse.functionResponses[0];
    expect(wire.toolResponse([{ id: docs.id, name: docs.name, output: JSON.stringify(docs.response) }])).toEqual(client.toolResponse);
    // A result that is not a JSON object goes in an object (FunctionResponse.response is one).
    expect((wire.toolResponse([{ id: "a", name: "n", output: "done" }]) as any).toolResponse.functionResponses[0].response).toEqual({ output: "done" });
  });

  test("the heard-text note quotes the heard words, or says none were heard", () => {
    expect(wire.heardNote("Tell me")).toContain('"Tell me"');
    expect(wire.heardNote("")).toMatch(/before hearing any of it/);
  });
});

test("a reply first sends the tool results (with their names) after the last assistant message, or a typed user turn", () => {
  expect(pendingTurn([{ role: "user", content: "hi" }])).toEqual({ toolOutputs: [], userText: "hi" });
  const calls = [{ id: "c1", name: "get_time", rawArguments: "{}" }];
  expect(pendingTurn([{ role: "user", content: "time?" }, { role: "assistant", content: "", toolCalls: calls }, { role: "tool", content: '{"time":"2"}', toolCallId: "c1", name: "get_time" }])).toEqual({ toolOutputs: [{ callId: "c1", name: "get_time", output: '{"time":"2"}' }] });
});

test("the heard words are those whose midpoint was rendered (the history's rule)", () => {
  const words = [
    { text: "Tell", startS: 0, stopS: 0.4 },
    { text: "me", startS: 0.4, stopS: 0.6 },
    { text: "more", startS: 0.6, stopS: 1.0 },
  ];
  expect(heardText(words, 0.19)).toBe("");
  expect(heardText(words, 0.5)).toBe("Tell me");
  expect(heardText(words, 5)).toBe("Tell me more");
});

test("the pre-roll keeps the newest audio up to its limit and hands back the newest seconds asked for, in order", () => {
  const roll = new PreRoll(100, 1); // 100 samples a second, at most about 1 s kept
  for (let k = 0; k < 30; k++) roll.push(Int16Array.from({ length: 10 }, (_, i) => k * 10 + i));
  expect(roll.samples).toBeGreaterThanOrEqual(100);
  expect(roll.samples).toBeLessThan(110);
  const taken = roll.take(0.25);
  const joined = taken.flatMap((f) => Array.from(f));
  expect(joined).toEqual(Array.from({ length: 25 }, (_, i) => 275 + i));
  expect(roll.samples).toBe(0);
  expect(roll.take(1)).toEqual([]);
  roll.push(new Int16Array([1, 2, 3]));
  expect(roll.take(10).flatMap((f) => Array.from(f))).toEqual([1, 2, 3]);
});

describe("fuzz: mutated docs' messages", () => {
  test("every outcome is decoded events or a ProtocolError, never another error", () => {
    const r = prng(0x6e31);
    const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)]!;
    const scalars = [null, true, -1, 0, 1.5, "", "x", "A===", [], {}, { text: 3 }, [{ inlineData: 1 }]];
    const bases = [...server, audioMessage()];
    let protocolErrors = 0;
    for (let n = 0; n < 20_000; n++) {
      const base = structuredClone(pick(bases));
      // Mutate at a random depth along one path.
      let target: any = base;
      for (let d = 0; d < 4 && r() < 0.7; d++) {
        const inner = Object.values(target).filter((v) => typeof v === "object" && v !== null);
        if (!inner.length) break;
        target = pick(inner);
      }
      const keys = Object.keys(target);
      if (keys.length) {
        const key = pick(keys);
        if (r() < 0.3) delete target[key];
        else target[key] = pick(scalars);
      }
      const text = r() < 0.05 ? JSON.stringify(base).slice(0, Math.floor(r() * 80)) : JSON.stringify(base);
      try {
        const events = wire.decodeGeminiMessage(text, ctx);
        expect(Array.isArray(events)).toBe(true);
      } catch (err) {
        expect(err, `case ${n}: ${text.slice(0, 200)}`).toBeInstanceOf(ProtocolError);
        protocolErrors++;
      }
    }
    expect(protocolErrors).toBeGreaterThan(1000);
  });
});
