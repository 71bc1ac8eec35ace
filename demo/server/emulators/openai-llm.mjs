// OpenAI-compatible LLM emulator, from one scripted ELIZA-style responder (eliza.mjs,
// NOT a language model), over two transports:
// - POST /v1/chat/completions: OpenAI-compatible; `stream:true` answers with
//   text/event-stream chunks `data: {choices:[{delta:{content}}]}` and `data: [DONE]`.
// - WebSocket /v1/responses: JSON text frames with Responses-API event names;
//   in `response.create` / `response.cancel`, out `response.created`,
//   `response.output_text.delta{delta}`, `response.completed`, `error`.
// Replies stream word by word, `wordMs` apart (default 40 ms). A client that goes
// away stops the stream at once; the stats count it as aborted.
// Tools (eliza-tools.mjs): a request that offers `get_time` or `get_weather`
// and asks for it gets a streamed call in each wire's documented format —
// chat completions' `delta.tool_calls` fragments by index then
// `finish_reason: "tool_calls"` (https://platform.openai.com/docs/api-reference/chat-streaming),
// the Responses API's `function_call` item with its
// `response.function_call_arguments.delta` pieces
// (https://platform.openai.com/docs/api-reference/responses-streaming) — and the
// request that brings the result back gets an answer that reads it out.
import { randomUUID } from "node:crypto";
import { elizaReply, streamPieces } from "../eliza.mjs";
import { argumentPieces, toolTurn } from "../eliza-tools.mjs";
import { SocketFaults } from "../socket-faults.mjs";
import { StallWindow, isAuthorized, sleep } from "../knobs.mjs";

const MODEL = "bargein-eliza";
const MAX_BODY_BYTES = 1 << 20;

/**
 * The text of the last user message, from Chat Completions `messages` or a
 * Responses `input` (a string, or items whose content is a string or parts).
 * @param {any} body
 */
export function lastUserText(body) {
  const input = body?.messages ?? body?.input ?? body?.response?.input;
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (item?.role !== "user") continue;
    const content = item.content;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map((/** @type {any} */ p) => (typeof p === "string" ? p : p?.text ?? "")).join(" ");
    }
  }
  return "";
}

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 * @returns {import("../backend.mjs").Emulator}
 */
export function openaiLlmEmulator({ stats, token }) {
  /**
   * Streams `pieces` to `emit`, honouring pace, stall and cancellation.
   * Resolves true when every piece was sent, false when aborted.
   * @param {string[]} pieces
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {StallWindow} stall
   * @param {AbortSignal} signal
   * @param {(piece: string, index: number) => void} emit
   */
  async function streamReply(pieces, knobs, stall, signal, emit) {
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0) await sleep(knobs.wordMs ?? 40, signal);
      await stall.waitIfStalled(signal);
      if (signal.aborted) return false;
      emit(pieces[i], i);
      stats.add("llm", "piecesSent");
    }
    return true;
  }

  /**
   * A Responses-API function call: the item is added, its arguments stream as
   * deltas, then the item is done and the response completes with it as output.
   * @param {string} responseId
   * @param {import("../eliza-tools.mjs").ScriptedCall} call
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {StallWindow} stall
   * @param {AbortSignal} signal
   * @param {(event: Record<string, unknown>) => void} send
   */
  async function streamFunctionCall(responseId, call, knobs, stall, signal, send) {
    const args = JSON.stringify(call.arguments);
    const item = { type: "function_call", id: `fc_${randomUUID().slice(0, 8)}`, call_id: `call_${randomUUID().slice(0, 8)}`, name: call.name, arguments: "", status: "in_progress" };
    const base = { response_id: responseId, output_index: 0 };
    send({ type: "response.output_item.added", ...base, item });
    const ok = await streamReply(argumentPieces(args), knobs, stall, signal, (delta) => {
      send({ type: "response.function_call_arguments.delta", ...base, item_id: item.id, delta });
    });
    if (!ok) {
      send({ type: "response.completed", response: { id: responseId, status: "cancelled", output: [] } });
      return false;
    }
    const done = { ...item, arguments: args, status: "completed" };
    send({ type: "response.function_call_arguments.done", ...base, item_id: item.id, arguments: args });
    send({ type: "response.output_item.done", ...base, item: done });
    send({ type: "response.completed", response: { id: responseId, status: "completed", output: [done] } });
    return true;
  }

  /**
   * POST /v1/chat/completions
   * @param {import("node:http").IncomingMessage} req
   * @param {import("node:http").ServerResponse} res
   * @param {import("../knobs.mjs").Knobs} knobs
   */
  async function handleChat(req, res, knobs) {
    const cors = { "Access-Control-Allow-Origin": "*" };
    if (knobs.capacity !== undefined && stats.counters.llm.active >= knobs.capacity) {
      stats.add("llm", "rejected");
      res.writeHead(429, { "Content-Type": "application/json", ...cors });
      res.end(JSON.stringify({ error: { message: "no free channels", type: "at_capacity" } }));
      return;
    }
    /** @type {any} */
    let body;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      res.writeHead(400, { "Content-Type": "application/json", ...cors });
      res.end(JSON.stringify({ error: { message: `bad request body: ${/** @type {Error} */ (err).message}` } }));
      return;
    }
    const abort = new AbortController();
    let completed = false;
    stats.add("llm", "requestsStarted");
    stats.add("llm", "active");
    res.on("close", () => {
      stats.add("llm", "active", -1);
      if (!completed) stats.add("llm", "requestsAborted");
      abort.abort();
    });
    const stall = new StallWindow(knobs);
    const drop = () => {
      stats.add("llm", "dropped");
      res.socket?.destroy();
    };
    const dropTimer = knobs.dropAfterMs !== undefined ? setTimeout(drop, knobs.dropAfterMs) : null;
    abort.signal.addEventListener("abort", () => dropTimer && clearTimeout(dropTimer), { once: true });

    await sleep(knobs.delayMs ?? 0, abort.signal);
    if (abort.signal.aborted) return;
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const userText = lastUserText(body);
    const tool = toolTurn(body, userText);
    const reply = tool?.kind === "answer" ? tool.text : elizaReply(userText);
    const call = tool?.kind === "call" ? { id: `call_${randomUUID().slice(0, 8)}`, name: tool.call.name, arguments: JSON.stringify(tool.call.arguments) } : undefined;
    if (call) stats.add("llm", "toolCalls");
    const pieces = call ? argumentPieces(call.arguments) : streamPieces(reply);

    if (!body?.stream) {
      const ok = await streamReply(pieces, knobs, stall, abort.signal, () => {});
      if (!ok) return;
      completed = true;
      stats.add("llm", "requestsEnded");
      res.writeHead(200, { "Content-Type": "application/json", ...cors });
      const message = call
        ? { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }] }
        : { role: "assistant", content: reply };
      res.end(JSON.stringify({
        id, object: "chat.completion", created, model: MODEL,
        choices: [{ index: 0, message, finish_reason: call ? "tool_calls" : "stop" }],
      }));
      return;
    }

    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      ...cors,
    });
    let chunks = 0;
    /** @param {string} data */
    const writeEvent = (data) => {
      res.write(`data: ${data}\n\n`);
      chunks++;
      if (knobs.dropAfter !== undefined && chunks >= knobs.dropAfter) drop();
    };
    /** @param {Record<string, unknown>} delta @param {string | null} finish */
    const chunk = (delta, finish = null) =>
      JSON.stringify({ id, object: "chat.completion.chunk", created, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] });

    // A call's first fragment names it (index, id, type, name); the rest carry pieces of its arguments.
    writeEvent(chunk(call
      ? { role: "assistant", content: null, tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }
      : { role: "assistant", content: "" }));
    if (knobs.malformed) writeEvent(knobs.malformed === "notype" ? JSON.stringify({ unexpected: true }) : "{not json");
    if (knobs.oversize) writeEvent(chunk({ content: "x".repeat(knobs.oversize) }));
    const ok = await streamReply(pieces, knobs, stall, abort.signal, (piece) => {
      if (res.destroyed) return;
      writeEvent(chunk(call ? { tool_calls: [{ index: 0, function: { arguments: piece } }] } : { content: piece }));
    });
    if (!ok || res.destroyed) return;
    writeEvent(chunk({}, call ? "tool_calls" : "stop"));
    writeEvent("[DONE]");
    completed = true;
    stats.add("llm", "requestsEnded");
    res.end();
  }

  /**
   * WebSocket /v1/responses
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   */
  function handleResponses(ws, knobs) {
    /** @param {Record<string, unknown>} event */
    const sendNow = (event) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(event));
    if (knobs.capacity !== undefined && stats.counters.llm.open >= knobs.capacity) {
      stats.add("llm", "rejected");
      sendNow({ type: "error", error: { type: "at_capacity", message: "no free channels" } });
      ws.close(1013, "no free channels");
      return;
    }
    stats.add("llm", "open");
    stats.add("llm", "opened");
    const faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("llm", "dropped") });
    /** @param {Record<string, unknown>} event */
    const send = (event) => faults.send(JSON.stringify(event));
    /** @type {{ id: string, abort: AbortController } | null} */
    let current = null;
    let first = true;

    ws.on("close", () => {
      stats.add("llm", "open", -1);
      current?.abort.abort();
      faults.dispose();
    });

    ws.on("message", async (data) => {
      /** @type {any} */
      let event;
      try {
        event = JSON.parse(data.toString());
      } catch {
        send({ type: "error", error: { type: "invalid_request_error", message: "message is not JSON" } });
        return;
      }
      if (event?.type === "response.cancel") {
        if (current && (!event.response_id || event.response_id === current.id)) current.abort.abort();
        return;
      }
      if (event?.type !== "response.create") {
        send({ type: "error", error: { type: "invalid_request_error", message: `unknown event type ${JSON.stringify(event?.type)}` } });
        return;
      }
      if (current) {
        send({ type: "error", error: { type: "invalid_request_error", message: "a response is already in progress; cancel it first" } });
        return;
      }
      const response = { id: `resp_${randomUUID()}`, abort: new AbortController() };
      current = response;
      stats.add("llm", "requestsStarted");
      stats.add("llm", "active");
      const signal = response.abort.signal;
      let text = "";
      try {
        await sleep(knobs.delayMs ?? 0, signal);
        if (signal.aborted) {
          stats.add("llm", "requestsAborted");
          return;
        }
        send({ type: "response.created", response: { id: response.id, status: "in_progress" } });
        if (first) {
          first = false;
          if (knobs.malformed) faults.send(knobs.malformed === "notype" ? JSON.stringify({ delta: "no type" }) : "{not json");
          if (knobs.oversize) send({ type: "response.output_text.delta", response_id: response.id, delta: "x".repeat(knobs.oversize) });
        }
        const userText = lastUserText(event);
        const tool = toolTurn(event.response, userText);
        if (tool?.kind === "call") {
          stats.add("llm", "toolCalls");
          const ok = await streamFunctionCall(response.id, tool.call, knobs, faults.stall, signal, send);
          stats.add("llm", ok ? "requestsEnded" : "requestsAborted");
          return;
        }
        const reply = tool?.kind === "answer" ? tool.text : elizaReply(userText);
        const ok = await streamReply(streamPieces(reply), knobs, faults.stall, signal, (piece) => {
          text += piece;
          send({ type: "response.output_text.delta", response_id: response.id, delta: piece });
        });
        const status = ok ? "completed" : "cancelled";
        stats.add("llm", ok ? "requestsEnded" : "requestsAborted");
        send({ type: "response.completed", response: { id: response.id, status, output_text: text } });
      } finally {
        stats.add("llm", "active", -1);
        if (current === response) current = null;
      }
    });
  }

  /**
   * POST /v1/chat/completions, with its CORS preflight and bearer check.
   * @param {import("node:http").IncomingMessage} req
   * @param {import("node:http").ServerResponse} res
   * @param {URL} url
   * @param {import("../knobs.mjs").Knobs} knobs
   */
  function routeChat(req, res, url, knobs) {
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Access-Control-Allow-Headers": "Authorization, Content-Type",
      });
      return res.end();
    }
    if (req.method !== "POST") return sendJson(res, 405, { error: { message: "use POST" } });
    if (!isAuthorized(req, url, token)) {
      stats.add("http", "unauthorized");
      return sendJson(res, 401, { error: { message: "missing or wrong bearer token", type: "unauthorized" } });
    }
    handleChat(req, res, knobs).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err?.message ?? err) } });
      else res.destroy();
    });
  }

  return {
    name: "llm",
    http: { "/v1/chat/completions": routeChat },
    sockets: { "/v1/responses": handleResponses },
    health: () => ({ model: MODEL, languageModel: false }),
  };
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {unknown} body */
function sendJson(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
}

/** @param {import("node:http").IncomingMessage} req @returns {Promise<string>} */
function readBody(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const parts = [];
    let size = 0;
    req.on("data", (/** @type {Buffer} */ part) => {
      size += part.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("body too large"));
        req.destroy();
      } else parts.push(part);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}
