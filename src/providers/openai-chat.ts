/**
 * openaiChat: an OpenAI-compatible `POST …/chat/completions` with
 * `stream: true`, read as server-sent events (eventsource-parser). Served by
 * vLLM, llama.cpp server, Ollama, and OpenAI through the app's own proxy.
 *
 * Each `data:` event is a JSON chunk whose `choices[0].delta.content` is the
 * next text delta; `data: [DONE]` ends the stream. Cancellation aborts the
 * fetch, so the server sees the request end. With `request.tools`, the
 * request offers them, and the calls the model streams as
 * `delta.tool_calls` fragments are yielded last, whole (tool-call-deltas.ts).
 */
import { DEFAULTS } from "../defaults.js";
import { EventSourceParserStream, ParseError, type EventSourceMessage } from "eventsource-parser/stream";
import {
  AtCapacityError,
  BargeinError,
  ConfigError,
  ConnectionClosedError,
  ProtocolError,
  ServiceTimeoutError,
} from "../errors.js";
import { linkAbort, raceAbort } from "../util/abort.js";
import { timeout } from "../util/timeout.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { ToolCallDeltas, chatTools, chatWireMessage } from "./tool-call-deltas.js";
import type { ChatMessage, LlmOutput, LlmProvider, LlmRequest } from "./types.js";
import { protocolError, type WireContext } from "./wire.js";

export interface OpenaiChatOptions {
  /** The API base, e.g. "http://127.0.0.1:8080/v1"; "/chat/completions" is appended unless present. */
  url: string;
  /** The model name the server expects. */
  model: string;
  /** Returns a short-lived token, sent as `Authorization: Bearer …`. Called once per request. */
  token?: () => Promise<string>;
  /** Extra request headers (not for secrets that outlive a page: use `token`). */
  headers?: Record<string, string>;
  /** The sampling temperature sent with each request (default: the service's). */
  temperature?: number;
  /** Sent as `max_tokens`. */
  maxTokens?: number;
  /** Extra fields merged into the request body (e.g. `top_p`, `stop`). */
  body?: Record<string, unknown>;
  /** Largest server-sent event accepted, in bytes (default 256 KiB; a chunk is about 200 bytes). */
  maxEventBytes?: number;
  /** The response headers must arrive within this many ms of the call, token included (default 10 000). */
  responseTimeoutMs?: number;
}

const SERVICE = "llm";
/** How much of an error response body is read for the error message. */
const ERROR_BODY_LIMIT = 2048;

export function openaiChat(options: OpenaiChatOptions): LlmProvider {
  const endpoint = serviceUrl(options.url, "/chat/completions", {});
  const ctx: WireContext = { service: SERVICE, url: endpoint.safeUrl };
  const timeoutMs = options.responseTimeoutMs ?? DEFAULTS.providers.openaiChat.responseTimeoutMs;

  async function* stream(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncGenerator<LlmOutput, void, undefined> {
    signal?.throwIfAborted();
    // Our own controller: it aborts the fetch on the caller's abort, and when
    // the consumer stops iterating early (or the response timed out), in `finally`.
    const controller = new AbortController();
    const unlink = linkAbort(signal, controller);
    // The response timeout covers the token and the response headers, not the body.
    const limit = timeout(timeoutMs, controller.signal);
    // Cancellation wins over whatever error the cancelled fetch produced.
    const throwIfCancelled = (err: unknown): void => {
      if (signal?.aborted) throw signal.reason;
      if (limit.expired) {
        throw new ServiceTimeoutError(`${SERVICE}: ${ctx.url} did not answer within ${timeoutMs} ms`, {
          service: SERVICE,
          url: ctx.url,
          timeoutMs,
          cause: err,
        });
      }
    };
    try {
      const headers: Record<string, string> = {
        "Content-Type": "application/json",
        Accept: "text/event-stream",
        ...options.headers,
      };
      const token = await fetchToken(options.token, limit.signal).catch((err) => {
        throwIfCancelled(err);
        throw err;
      });
      if (token !== undefined) headers.Authorization = `Bearer ${token}`;
      const body = {
        ...options.body,
        model: options.model,
        messages: messages.map(chatWireMessage),
        ...(request?.tools?.length ? { tools: chatTools(request.tools) } : {}),
        stream: true,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      };
      let response: Response;
      try {
        // The fetch itself takes the controller's signal, which lives as long as the body.
        const request = fetch(endpoint.url, {
          method: "POST",
          headers,
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        response = await raceAbort(request, limit.signal);
      } catch (err) {
        throwIfCancelled(err);
        throw new ConnectionClosedError(`${SERVICE}: could not reach ${ctx.url}`, { service: SERVICE, url: ctx.url, cause: err });
      }
      limit.clear();
      if (!response.ok) throw await httpError(response, ctx);
      if (!response.body) throw protocolError(ctx, "the response has no body");

      // The parser bounds a partial event; a complete one that arrived in a
      // single chunk is checked below, so either way no event exceeds the limit.
      const maxEventBytes = options.maxEventBytes ?? DEFAULTS.providers.openaiChat.maxEventBytes;
      const reader = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream({ maxBufferSize: maxEventBytes, onError: "terminate" }))
        .getReader();
      let finished = false;
      const toolCalls = new ToolCallDeltas();
      for (;;) {
        let result: ReadableStreamReadResult<EventSourceMessage>;
        try {
          result = await reader.read();
        } catch (err) {
          throwIfCancelled(err);
          if (err instanceof ParseError) throw protocolError(ctx, `the event stream is malformed (${err.message})`, err);
          throw new ConnectionClosedError(`${SERVICE}: the response from ${ctx.url} broke off`, { service: SERVICE, url: ctx.url, cause: err });
        }
        if (result.done) {
          if (finished) break;
          throw new ConnectionClosedError(`${SERVICE}: the response from ${ctx.url} ended before [DONE]`, {
            service: SERVICE,
            url: ctx.url,
          });
        }
        const data = result.value.data;
        if (data.length > maxEventBytes) {
          throw protocolError(ctx, `an event of ${data.length} characters exceeds the limit of ${maxEventBytes} (maxEventBytes)`);
        }
        if (data.trim() === "[DONE]") break;
        const chunk = parseChunk(data, ctx);
        if (chunk.finished) finished = true;
        if (chunk.toolCalls !== undefined) toolCalls.push(chunk.toolCalls, ctx);
        if (chunk.delta) yield chunk.delta;
      }
      if (toolCalls.size) yield { kind: "toolCalls", calls: toolCalls.calls(ctx) };
    } finally {
      limit.clear();
      unlink();
      // Ends the request if the consumer stopped early; a no-op after [DONE].
      controller.abort();
    }
  }

  return { name: "openai-chat", stream };
}

/** One streamed chunk: its text delta, its tool-call fragments, and whether it carried a finish_reason. */
function parseChunk(data: string, ctx: WireContext): { delta: string; finished: boolean; toolCalls?: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (err) {
    throw protocolError(ctx, "an event's data is not valid JSON", err);
  }
  if (typeof value !== "object" || value === null) throw protocolError(ctx, "an event's data is not a JSON object");
  const error = (value as { error?: unknown }).error;
  if (error !== undefined && error !== null) {
    throw new BargeinError(`${SERVICE} at ${ctx.url} reported an error mid-stream: ${errorText(error)}`, {
      service: SERVICE,
      url: ctx.url,
    });
  }
  const choices = (value as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) throw protocolError(ctx, "a chunk has no `choices` array");
  const choice = choices[0] as { delta?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown } | undefined;
  const content = choice?.delta?.content;
  if (content !== undefined && content !== null && typeof content !== "string") {
    throw protocolError(ctx, "`choices[0].delta.content` is not a string");
  }
  const toolCalls = choice?.delta?.tool_calls ?? undefined;
  return { delta: content ?? "", finished: choice?.finish_reason != null, ...(toolCalls === undefined ? {} : { toolCalls }) };
}

/** The typed error for a non-2xx response, with the server's own message when it gave one. */
async function httpError(response: Response, ctx: WireContext): Promise<BargeinError> {
  const detail = await readErrorBody(response);
  const what = `${SERVICE} at ${ctx.url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`;
  const options = { service: SERVICE, url: ctx.url };
  switch (response.status) {
    case 401:
    case 403:
      return new ConfigError(`${what}. The token was refused: check the token function.`, options);
    case 404:
      return new ConfigError(`${what}. Check the \`url\` (the API base, e.g. …/v1) and the \`model\`.`, options);
    case 429:
    case 503:
      return new AtCapacityError(`${what}. The service is at capacity; try again later.`, options);
    default:
      return response.status >= 500
        ? new BargeinError(`${what}. The service failed; try again later.`, options)
        : new ProtocolError(`${what}.`, options);
  }
}

/** Reads at most ERROR_BODY_LIMIT bytes of an error body: a hostile server cannot make us buffer more. */
async function readErrorBody(response: Response): Promise<string> {
  try {
    const reader = response.body?.getReader();
    if (!reader) return "";
    const bytes = new Uint8Array(ERROR_BODY_LIMIT);
    let length = 0;
    while (length < ERROR_BODY_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, ERROR_BODY_LIMIT - length);
      bytes.set(value.subarray(0, take), length);
      length += take;
    }
    void reader.cancel().catch(() => {});
    const text = new TextDecoder().decode(bytes.subarray(0, length));
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (parsed && parsed.error !== undefined && parsed.error !== null) return errorText(parsed.error);
    } catch {
      // Not JSON: fall back to the text itself.
    }
    return text.trim();
  } catch {
    return "";
  }
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  return JSON.stringify(error);
}
