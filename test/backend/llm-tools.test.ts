// The reference LLM's scripted tool calls, on both wires: a request that offers
// get_time (or get_weather) and asks for it gets the call streamed in the real
// format — chat completions' `delta.tool_calls` fragments by index ending with
// finish_reason "tool_calls", or the Responses API's function_call item with its
// argument deltas — and the request that brings the result back is answered
// with it. Last, a VoiceSession on the SDK's own openaiChat runs the round trip.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply } from "../../demo/server/eliza.mjs";
import type { ToolCall } from "../../src/advanced.js";
import { VoiceSession, openaiChat, websocketLlm } from "../../src/index.js";
import { fakeAudio, fakeStt, fakeTts } from "../../src/testing/index.js";
import { RecordingSocket } from "./helpers";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false });
});
afterAll(() => backend?.close());

const GET_TIME = { type: "function", function: { name: "get_time", description: "The time now.", parameters: { type: "object", properties: {} } } };
const GET_WEATHER = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

/** POSTs a streaming chat completion and returns every SSE data payload, parsed ([DONE] as the string). */
async function chat(body: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${backend.url}/v1/chat/completions?word_ms=5`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "any", stream: true, ...body }),
  });
  expect(res.status).toBe(200);
  const events: string[] = [];
  const parser = createParser({ onEvent: (e: EventSourceMessage) => events.push(e.data) });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  return events.map((d) => (d === "[DONE]" ? d : JSON.parse(d)));
}

describe("reference LLM tool calls, chat completions (SSE)", () => {
  test("asked the time with get_time offered, it streams a call: first fragment names it, the arguments come in pieces by index, finish_reason tool_calls", async () => {
    const before = backend.stats().llm.toolCalls;
    const events = await chat({ messages: [{ role: "user", content: "what time is it" }], tools: [GET_WEATHER, GET_TIME] });
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1);
    const deltas = chunks.map((c) => c.choices[0].delta);
    expect(deltas[0]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_time", arguments: "" } }],
    });
    expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: "tool_calls" });
    const fragments = deltas.slice(1, -1).flatMap((d) => d.tool_calls);
    expect(fragments.every((f: any) => f.index === 0 && f.id === undefined && typeof f.function.arguments === "string")).toBe(true);
    expect(JSON.parse(fragments.map((f: any) => f.function.arguments).join(""))).toEqual({});
    expect(deltas.some((d) => typeof d.content === "string" && d.content)).toBe(false);
    expect(backend.stats().llm.toolCalls).toBe(before + 1);
  });

  test("get_weather's arguments come from the user's words, split in several fragments that only parse joined", async () => {
    const events = await chat({ messages: [{ role: "user", content: "what is the weather in Oslo?" }], tools: [GET_TIME, GET_WEATHER] });
    const fragments = events.slice(1, -2).flatMap((c) => c.choices[0].delta.tool_calls);
    expect(fragments.length).toBeGreaterThan(1);
    expect(() => JSON.parse(fragments[0].function.arguments)).toThrow();
    expect(JSON.parse(fragments.map((f: any) => f.function.arguments).join(""))).toEqual({ city: "Oslo" });
    expect(events[0].choices[0].delta.tool_calls[0].function.name).toBe("get_weather");
  });

  test("with no tool offered it answers as ELIZA does; the follow-up with the tool's result reads the result out", async () => {
    const plain = await chat({ messages: [{ role: "user", content: "what time is it" }] });
    expect(plain.slice(0, -1).map((c) => c.choices[0].delta.content ?? "").join("")).toBe(elizaReply("what time is it"));

    const call = { id: "call_42", type: "function", function: { name: "get_time", arguments: "{}" } };
    const answer = async (content: string) => {
      const events = await chat({
        messages: [
          { role: "user", content: "what time is it" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_42", content },
        ],
        tools: [GET_TIME],
      });
      expect(events.at(-2).choices[0].finish_reason).toBe("stop");
      return events.slice(0, -1).map((c) => c.choices[0].delta.content ?? "").join("");
    };
    expect(await answer("ten past nine")).toBe("It is ten past nine.");
    expect(await answer(JSON.stringify({ time: "09:10" }))).toBe("It is 09:10.");
    expect(await answer(JSON.stringify({ error: "no clock" }))).toBe("I could not get the time: no clock.");
  });
});

describe("reference LLM tool calls, WebSocket /v1/responses", () => {
  test("a function_call item with argument deltas, then the follow-up with function_call_output is answered with it", async () => {
    const ws = new RecordingSocket(`${backend.wsUrl}/v1/responses?word_ms=5`, "json");
    await ws.opened;
    const tools = [{ type: "function", name: "get_weather", parameters: GET_WEATHER.function.parameters }];
    ws.send({ type: "response.create", response: { input: [{ role: "user", content: "weather in Paris" }], tools } });
    await ws.next("response.completed");
    const done = ws.of("response.output_item.done")[0].item;
    expect(done).toMatchObject({ type: "function_call", name: "get_weather", call_id: expect.stringMatching(/^call_/), arguments: '{"city":"Paris"}' });
    expect(ws.of("response.function_call_arguments.delta").map((e) => e.delta).join("")).toBe('{"city":"Paris"}');
    expect(ws.of("response.completed")[0].response).toMatchObject({ status: "completed", output: [done] });

    ws.send({
      type: "response.create",
      response: {
        input: [
          { role: "user", content: "weather in Paris" },
          { type: "function_call", call_id: done.call_id, name: "get_weather", arguments: done.arguments },
          { type: "function_call_output", call_id: done.call_id, output: "sunny" },
        ],
        tools,
      },
    });
    await ws.until(() => ws.of("response.completed").length === 2, 5000, "second response");
    expect(ws.of("response.output_text.delta").map((e) => e.delta).join("")).toBe("The weather in Paris is sunny.");
    ws.close();
  });
});

describe("a VoiceSession's tool round trip on the reference LLM", () => {
  for (const [name, llm] of [
    ["openaiChat", () => openaiChat({ url: `${backend.url}/v1?word_ms=5`, model: "eliza" })],
    ["websocketLlm", () => websocketLlm({ url: `${backend.wsUrl}/v1/responses?word_ms=5` })],
  ] as const) {
    test(`${name}: "what time is it" calls the page's get_time, and the reply says its answer`, async () => {
      const stt = fakeStt();
      const tts = fakeTts();
      const audio = fakeAudio({ stt });
      const session = new VoiceSession({
        stt: stt.provider,
        llm: llm(),
        tts: tts.provider,
        components: audio.components,
        tools: { definitions: [{ name: "get_time", description: "The time now.", parameters: { type: "object", properties: {} } }] },
      });
      const calls: ToolCall[] = [];
      session.handleTool("get_time", (call) => {
        calls.push(call);
        return "ten past nine";
      });
      await session.start();
      await audio.user.says("what time is it");
      await expect.poll(() => session.history[1]?.text, { timeout: 5000, interval: 10 }).toBe("It is ten past nine.");
      expect(calls).toEqual([{ id: expect.stringMatching(/^call_/), name: "get_time", arguments: {}, rawArguments: "{}" }]);
      expect(session.history[1]).toMatchObject({ role: "assistant", toolCalls: [{ name: "get_time", status: "ok", output: "ten past nine" }] });
      await session.stop();
    });
  }
});
