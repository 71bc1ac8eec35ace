/**
 * Tools on the LLM providers' wires, against small real servers: openaiChat
 * offers them in chat completions' shape and joins the streamed
 * `delta.tool_calls` fragments by index (the format of
 * https://platform.openai.com/docs/api-reference/chat-streaming); websocketLlm
 * offers Responses-API function tools and reads `function_call` items. The
 * follow-up request carries the calls and their results in each wire's shape.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, test } from "vitest";
import { ProtocolError } from "../../src/errors.js";
import { openaiChat } from "../../src/providers/openai-chat.js";
import type { ChatMessage, ToolDefinition } from "../../src/providers/types.js";
import { websocketLlm } from "../../src/providers/websocket-llm.js";
import { collect, rejectionOf, startHttpServer, startWsServer, type TestHttpServer, type TestWsServer } from "./providers-servers.js";

let http: TestHttpServer | undefined;
let ws: TestWsServer | undefined;
afterEach(async () => {
  await http?.close();
  await ws?.close();
  http = ws = undefined;
});

const TOOLS: ToolDefinition[] = [
  { name: "get_time", description: "The time now.", parameters: { type: "object", properties: { timezone: { type: "string" } } } },
  { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
];

const sseChunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function sse(res: ServerResponse): void {
  res.writeHead(200, { "Content-Type": "text/event-stream" });
}

const followUp: ChatMessage[] = [
  { role: "user", content: "time and weather in Oslo?" },
  {
    role: "assistant",
    content: "Let me look.",
    toolCalls: [
      { id: "call_a", name: "get_time", rawArguments: '{"timezone":"Europe/Oslo"}' },
      { id: "call_b", name: "get_weather", rawArguments: '{"city":"Oslo"}' },
    ],
  },
  { role: "tool", content: "09:10", toolCallId: "call_a", name: "get_time" },
  { role: "tool", content: '{"sky":"clear"}', toolCallId: "call_b", name: "get_weather" },
];

describe("openaiChat tools", () => {
  test("offers the tools, and yields two calls streamed as interleaved fragments by index, whole, after the text", async () => {
    http = await startHttpServer(async (_req, res) => {
      sse(res);
      res.write(sseChunk({ role: "assistant", content: "Let me look." }));
      res.write(sseChunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_time", arguments: "" } }] }));
      res.write(sseChunk({ tool_calls: [{ index: 0, function: { arguments: '{"timez' } }] }));
      res.write(sseChunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"ci' } }] }));
      res.write(sseChunk({ tool_calls: [{ index: 0, function: { arguments: 'one":"Europe/Oslo"}' } }] }));
      res.write(sseChunk({ tool_calls: [{ index: 1, function: { arguments: 'ty":"Oslo"}' } }] }));
      res.write(sseChunk({}, "tool_calls"));
      res.end("data: [DONE]\n\n");
    });
    const llm = openaiChat({ url: `${http.url}/v1`, model: "m" });
    const out = await collect(llm.stream([{ role: "user", content: "time and weather in Oslo?" }], undefined, { tools: TOOLS }));
    expect(out).toEqual([
      "Let me look.",
      {
        kind: "toolCalls",
        calls: [
          { id: "call_a", name: "get_time", rawArguments: '{"timezone":"Europe/Oslo"}' },
          { id: "call_b", name: "get_weather", rawArguments: '{"city":"Oslo"}' },
        ],
      },
    ]);
    expect(JSON.parse(http.requests[0].body).tools).toEqual([
      { type: "function", function: { name: "get_time", description: "The time now.", parameters: TOOLS[0].parameters } },
      { type: "function", function: { name: "get_weather", parameters: TOOLS[1].parameters } },
    ]);
  });

  test("the follow-up sends the assistant's tool_calls and one role:tool message per result; no tools offered, no tools field", async () => {
    http = await startHttpServer(async (_req, res) => {
      sse(res);
      res.write(sseChunk({ content: "It is 09:10 and clear." }, "stop"));
      res.end("data: [DONE]\n\n");
    });
    const llm = openaiChat({ url: `${http.url}/v1`, model: "m" });
    expect(await collect(llm.stream(followUp))).toEqual(["It is 09:10 and clear."]);
    const body = JSON.parse(http.requests[0].body);
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: "user", content: "time and weather in Oslo?" },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_time", arguments: '{"timezone":"Europe/Oslo"}' } },
          { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "09:10" },
      { role: "tool", tool_call_id: "call_b", content: '{"sky":"clear"}' },
    ]);
  });

  test("calls that share index 0 but carry their own ids (Ollama's parallel calls) stay apart", async () => {
    http = await startHttpServer(async (_req, res) => {
      sse(res);
      res.write(sseChunk({ tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "get_time", arguments: "{}" } }] }));
      res.write(sseChunk({ tool_calls: [{ index: 0, id: "call_y", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] }));
      res.write(sseChunk({}, "tool_calls"));
      res.end("data: [DONE]\n\n");
    });
    const out = await collect(openaiChat({ url: `${http.url}/v1`, model: "m" }).stream(followUp, undefined, { tools: TOOLS }));
    expect(out).toEqual([
      {
        kind: "toolCalls",
        calls: [
          { id: "call_x", name: "get_time", rawArguments: "{}" },
          { id: "call_y", name: "get_weather", rawArguments: '{"city":"Rome"}' },
        ],
      },
    ]);
  });

  test("a fragment with a bad index, or a call with no name, is a ProtocolError naming it", async () => {
    for (const bad of [{ index: -1, function: { arguments: "{}" } }, { index: 0, id: "c", function: { arguments: "{}" } }]) {
      http = await startHttpServer(async (_req, res) => {
        sse(res);
        res.write(sseChunk({ tool_calls: [bad] }, "tool_calls"));
        res.end("data: [DONE]\n\n");
      });
      const err = await rejectionOf(collect(openaiChat({ url: `${http.url}/v1`, model: "m" }).stream(followUp)));
      expect(err).toBeInstanceOf(ProtocolError);
      expect((err as Error).message).toMatch(/bad `index`|no `function.name`/);
      await http.close();
      http = undefined;
    }
  });
});

describe("websocketLlm tools", () => {
  test("offers Responses function tools, sends a tool round as function_call and function_call_output items, and yields the calls at response.completed", async () => {
    ws = await startWsServer(async (conn) => {
      await conn.next();
      conn.sendJson({ type: "response.created", response: { id: "r1" } });
      const item = { type: "function_call", id: "fc_1", call_id: "call_c", name: "get_time", arguments: "" };
      conn.sendJson({ type: "response.output_item.added", output_index: 0, item });
      conn.sendJson({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: '{"timezone":' });
      conn.sendJson({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: '"UTC"}' });
      conn.sendJson({ type: "response.output_item.done", output_index: 0, item: { ...item, arguments: '{"timezone":"UTC"}' } });
      conn.sendJson({ type: "response.completed", response: { id: "r1", status: "completed" } });
    });
    const llm = websocketLlm({ url: ws.url });
    const out = await collect(llm.stream(followUp, undefined, { tools: TOOLS }));
    expect(out).toEqual([{ kind: "toolCalls", calls: [{ id: "call_c", name: "get_time", rawArguments: '{"timezone":"UTC"}' }] }]);
    const create = ws.connections[0].received[0] as { response: { input: unknown[]; tools: unknown[] } };
    expect(create.response.tools).toEqual([
      { type: "function", name: "get_time", description: "The time now.", parameters: TOOLS[0].parameters },
      { type: "function", name: "get_weather", parameters: TOOLS[1].parameters },
    ]);
    expect(create.response.input).toEqual([
      { role: "user", content: "time and weather in Oslo?" },
      { role: "assistant", content: "Let me look." },
      { type: "function_call", call_id: "call_a", name: "get_time", arguments: '{"timezone":"Europe/Oslo"}' },
      { type: "function_call", call_id: "call_b", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", call_id: "call_a", output: "09:10" },
      { type: "function_call_output", call_id: "call_b", output: '{"sky":"clear"}' },
    ]);
  });
});
