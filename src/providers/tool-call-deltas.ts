/**
 * Chat completions' tools on the wire, both ways (pure, no I/O):
 * - out: `ToolDefinition`s as the request's `tools`, and `ChatMessage`s with
 *   their tool calls and results as the request's `messages`;
 * - in: the streamed `choices[0].delta.tool_calls` fragments put back
 *   together into whole calls.
 *
 * The streamed format, as OpenAI documents it for `stream: true`
 * (https://platform.openai.com/docs/api-reference/chat-streaming and
 * https://platform.openai.com/docs/guides/function-calling, "Streaming"):
 * each fragment names its call by `index`; the first fragment of a call
 * carries its `id`, `type: "function"` and `function.name`, and every
 * fragment may carry a piece of `function.arguments`, a JSON text whose
 * pieces only parse once joined. The message ends with
 * `finish_reason: "tool_calls"`. The follow-up request repeats the assistant
 * message with `tool_calls` (and `content` null when it said nothing), then
 * one `{ role: "tool", tool_call_id, content }` per call.
 */
import type { ChatMessage, ToolCallRequest, ToolDefinition } from "./types.js";
import { protocolError, type WireContext } from "./wire.js";

/** Largest number of calls one message may ask for: a bound on what a hostile server can make us hold. */
const MAX_CALLS = 64;

/**
 * Collects one message's tool-call fragments, by index. Owner: one stream of
 * one request. Ollama's OpenAI-compatible endpoint gives every call of a
 * parallel batch index 0 and tells them apart only by their ids, so a new id
 * at an index whose call already has one starts another call.
 */
export class ToolCallDeltas {
  readonly #calls: { id: string; name: string; args: string[] }[] = [];
  /** The call each wire index feeds now. */
  readonly #byIndex = new Map<number, number>();

  get size(): number {
    return this.#calls.length;
  }

  /** Adds a chunk's `delta.tool_calls` (anything else is a ProtocolError naming the field). */
  push(fragments: unknown, ctx: WireContext): void {
    if (!Array.isArray(fragments)) throw protocolError(ctx, "`choices[0].delta.tool_calls` is not an array");
    for (const fragment of fragments as unknown[]) {
      const f = (fragment ?? {}) as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
      // Some servers (older llama.cpp) leave `index` out when there is one call.
      const index = f.index ?? 0;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0) {
        throw protocolError(ctx, `a tool call fragment has a bad \`index\` (${JSON.stringify(f.index)})`);
      }
      const id = typeof f.id === "string" ? f.id : "";
      let slot = this.#byIndex.get(index);
      if (slot === undefined || (id && this.#calls[slot].id && this.#calls[slot].id !== id)) {
        if (this.#calls.length >= MAX_CALLS) throw protocolError(ctx, `a message asks for more than ${MAX_CALLS} tool calls`);
        slot = this.#calls.push({ id: "", name: "", args: [] }) - 1;
        this.#byIndex.set(index, slot);
      }
      const call = this.#calls[slot];
      if (id) call.id = id;
      const name = f.function?.name;
      if (typeof name === "string") call.name += name;
      const args = f.function?.arguments;
      if (args !== undefined && args !== null && typeof args !== "string") {
        throw protocolError(ctx, "a tool call fragment's `function.arguments` is not a string");
      }
      if (args) call.args.push(args);
    }
  }

  /** The whole calls, in the order they began. A call with no name is a ProtocolError: nothing could run it. */
  calls(ctx: WireContext): ToolCallRequest[] {
    return this.#calls.map((call, n) => {
      if (!call.name) throw protocolError(ctx, `tool call ${n} has no \`function.name\``);
      return { id: call.id || `call_${n}`, name: call.name, rawArguments: call.args.join("") };
    });
  }
}

/** The request's `tools`, in chat completions' shape. */
export function chatTools(tools: readonly ToolDefinition[]): unknown[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.parameters },
  }));
}

/** A message in chat completions' shape: plain messages stay `{ role, content }`. */
export function chatWireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  if (m.role === "assistant" && m.toolCalls?.length) {
    return {
      role: "assistant",
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.rawArguments || "{}" } })),
    };
  }
  return { role: m.role, content: m.content };
}
