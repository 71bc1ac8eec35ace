/**
 * websocketLlm: a language model over a WebSocket with Responses-API event
 * names, one socket per reply. JSON text frames.
 *   client → `{type:"response.create", response:{model?, input:[{role,content}…]}}`,
 *            `{type:"response.cancel"}`
 *   server → `{type:"response.output_text.delta", delta}`, `{type:"response.completed"}`,
 *            `{type:"error", error:{message}|message}`
 * On abort (or when the consumer stops early) the client sends
 * `response.cancel`, then closes the socket.
 *
 * Tools, in the Responses API's shape (https://platform.openai.com/docs/guides/function-calling
 * and https://platform.openai.com/docs/api-reference/responses-streaming):
 * `response.tools` is `[{type:"function", name, description, parameters}]`;
 * a call arrives as a `function_call` item (`response.output_item.done`
 * with `{type:"function_call", call_id, name, arguments}`, after its
 * `response.function_call_arguments.delta` pieces, which we need not join:
 * the done item has them all). The follow-up's `input` repeats the call as
 * that item and answers it with `{type:"function_call_output", call_id, output}`.
 */
import { DEFAULTS } from "../defaults.js";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ServiceTimeoutError } from "../errors.js";
import { timeout } from "../util/timeout.js";
import { MessageSocket } from "./message-socket.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import type { ChatMessage, LlmOutput, LlmProvider, LlmRequest, ToolCallRequest, ToolDefinition } from "./types.js";
import { decodeJson, protocolError, stringField, type TaggedMessage, type WireContext } from "./wire.js";

export interface WebsocketLlmOptions {
  /** The full socket URL, e.g. "ws://127.0.0.1:8080/v1/responses" (http(s) is mapped to ws(s)). */
  url: string;
  /** Returns a short-lived token. Called once per reply (each reply is a connection). */
  token?: () => Promise<string>;
  /**
   * Where the token goes (default "query"). "query": the `tokenParam` query
   * parameter. "subprotocol": offered as the subprotocol `subprotocolPrefix + token`
   * (the token must then be a valid subprotocol token: no spaces, commas or "/").
   */
  tokenIn?: "query" | "subprotocol";
  /** The query parameter for the token (default "auth_id"). */
  tokenParam?: string;
  /** The prefix of the token subprotocol (default "bearer."). */
  subprotocolPrefix?: string;
  /** Sent as `response.model` when given. */
  model?: string;
  /** Largest inbound message, in bytes (default 256 KiB). */
  maxMessageBytes?: number;
  /** The socket must open within this, in ms (default 5000). */
  connectTimeoutMs?: number;
}

const SERVICE = "llm";

type LlmEvent = { kind: "delta"; text: string } | { kind: "toolCall"; call: ToolCallRequest } | { kind: "completed" };

export function websocketLlm(options: WebsocketLlmOptions): LlmProvider {
  const tokenIn = options.tokenIn ?? DEFAULTS.providers.websocketLlm.tokenIn;
  if (tokenIn !== "query" && tokenIn !== "subprotocol") {
    throw new ConfigError(`websocketLlm: \`tokenIn\` must be "query" or "subprotocol", got ${String(tokenIn)}`, { service: SERVICE });
  }
  const tokenParam = options.tokenParam ?? DEFAULTS.providers.websocketLlm.tokenParam;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.providers.websocketLlm.connectTimeoutMs;

  async function* stream(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncGenerator<LlmOutput, void, undefined> {
    const token = await fetchToken(options.token, signal);
    const endpoint = serviceUrl(
      options.url,
      "",
      { [tokenParam]: tokenIn === "query" ? token : undefined },
      { websocket: true, secrets: [tokenParam] },
    );
    const protocols = tokenIn === "subprotocol" && token !== undefined ? [`${options.subprotocolPrefix ?? DEFAULTS.providers.websocketLlm.subprotocolPrefix}${token}`] : undefined;

    const opening = timeout(connectTimeoutMs, signal);
    let socket: MessageSocket<LlmEvent>;
    try {
      socket = await MessageSocket.open(
        { service: SERVICE, url: endpoint.url, safeUrl: endpoint.safeUrl, protocols, maxMessageBytes: options.maxMessageBytes ?? DEFAULTS.providers.websocketLlm.maxMessageBytes, decode: toLlmEvent },
        opening.signal,
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (opening.expired) {
        throw new ServiceTimeoutError(`${SERVICE}: ${endpoint.safeUrl} did not open within ${connectTimeoutMs} ms`, {
          service: SERVICE,
          url: endpoint.safeUrl,
          timeoutMs: connectTimeoutMs,
        });
      }
      throw err;
    } finally {
      opening.clear();
    }

    let completed = false;
    try {
      socket.send(
        JSON.stringify({
          type: "response.create",
          response: {
            ...(options.model ? { model: options.model } : {}),
            input: messages.flatMap(inputItems),
            ...(request?.tools?.length ? { tools: request.tools.map(responsesTool) } : {}),
          },
        }),
      );
      const calls: ToolCallRequest[] = [];
      for await (const event of socket.messages(signal)) {
        if (event.kind === "completed") {
          completed = true;
          if (calls.length) yield { kind: "toolCalls", calls };
          return;
        }
        if (event.kind === "toolCall") calls.push(event.call);
        else yield event.text;
      }
      throw new ConnectionClosedError(`${SERVICE}: ${socket.ctx.url} closed the socket before response.completed`, {
        service: SERVICE,
        url: socket.ctx.url,
      });
    } finally {
      // Aborted, failed, or the consumer stopped early: tell the server first,
      // so it stops generating even if the close takes a while.
      if (!completed && socket.isOpen) {
        try {
          socket.send(JSON.stringify({ type: "response.cancel" }));
        } catch {
          // The socket closed in between; closing below is all that is left.
        }
      }
      await socket.close();
    }
  }

  return { name: "websocket-llm", stream };
}

function toLlmEvent(data: ArrayBuffer | string, ctx: WireContext): LlmEvent | undefined {
  const msg = decodeJson(data, ctx);
  switch (msg.type) {
    case "response.output_text.delta":
      return { kind: "delta", text: stringField(msg, "delta", ctx) };
    case "response.output_item.done": {
      const item = msg.item as { type?: unknown; call_id?: unknown; id?: unknown; name?: unknown; arguments?: unknown } | undefined;
      if (item?.type !== "function_call") return undefined;
      if (typeof item.name !== "string" || !item.name) throw protocolError(ctx, "a function_call item has no `name`");
      const id = typeof item.call_id === "string" && item.call_id ? item.call_id : typeof item.id === "string" ? item.id : "";
      if (!id) throw protocolError(ctx, "a function_call item has no `call_id`");
      return { kind: "toolCall", call: { id, name: item.name, rawArguments: typeof item.arguments === "string" ? item.arguments : "" } };
    }
    case "response.completed":
    case "response.done":
      return { kind: "completed" };
    case "error": {
      const text = errorMessage(msg);
      const options = { service: SERVICE, url: ctx.url };
      // The refusal of a full server ("no free channels", type at_capacity) is AtCapacityError, as for the other services.
      const type = (msg.error as { type?: unknown } | undefined)?.type;
      if (type === "at_capacity" || /no free channels/i.test(text)) {
        throw new AtCapacityError(`${SERVICE} at ${ctx.url} is at capacity ("${text}"); try again later`, options);
      }
      throw new BargeinError(`${SERVICE} at ${ctx.url} reported an error: ${text}`, options);
    }
    default:
      // response.created and other lifecycle events carry nothing we need.
      return undefined;
  }
}

function errorMessage(msg: TaggedMessage): string {
  const error = msg.error;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  if (typeof msg.message === "string") return msg.message;
  return "no message";
}

/** A message as Responses `input` items: a tool round becomes its function_call and function_call_output items. */
function inputItems(m: ChatMessage): Record<string, unknown>[] {
  if (m.role === "tool") return [{ type: "function_call_output", call_id: m.toolCallId, output: m.content }];
  if (m.role !== "assistant" || !m.toolCalls?.length) return [{ role: m.role, content: m.content }];
  return [
    ...(m.content ? [{ role: "assistant", content: m.content }] : []),
    ...m.toolCalls.map((c) => ({ type: "function_call", call_id: c.id, name: c.name, arguments: c.rawArguments || "{}" })),
  ];
}

function responsesTool(t: ToolDefinition): Record<string, unknown> {
  return { type: "function", name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.parameters };
}
