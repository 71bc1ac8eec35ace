/**
 * The app's tools: what each request offers the model (`tools.definitions`),
 * the handlers that answer (`session.handleTool`), and one round of calls:
 * each call parsed, recorded in the reply's history message, announced
 * (`toolCall`), run under the reply's signal and the tool's time limit, and
 * answered (`toolResult`) with the text the model gets back.
 *
 * Why a handler registered by a method, and not a handler in the options or
 * an event answered by `respondToTool(id, result)`: the peers an app comes
 * from hand the client a function per tool that returns the result —
 * ElevenLabs' `clientTools` (name → async function), Pipecat's
 * `registerFunctionCallHandler(name, fn)`, agents-realtime's `tool({ execute })`
 * — because a returned promise answers each call exactly once, and a throw
 * becomes the model's error by itself; with an event plus a respond method
 * the app keeps ids, can answer twice or never, and its exceptions are lost.
 * The house keeps callbacks out of the options (STYLE.md lesson 6: options
 * hold settings), so the definitions and limits are options and the handler
 * is given the way `on` gives a listener, by a method that returns its
 * removal. The `toolCall` and `toolResult` events are for the UI (a tool
 * call shown in the transcript); they answer nothing.
 *
 * Cancellation: the handler gets a signal that aborts with the reply (a
 * barge-in, interrupt(), stop()) or when its time is up. The round is raced
 * against it, so a handler that ignores its signal holds up nothing, and its
 * late answer is dropped: no result goes to the model after a cancel.
 *
 * Thread: main. Owner: VoiceSession (one per session); Reply runs rounds.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import type { ChatMessage, ToolCall, ToolCallRequest, ToolDefinition } from "../providers/types.js";
import { raceAbort } from "../util/abort.js";
import { timeout } from "../util/timeout.js";
import type { AssistantMessage, ConversationHistory } from "./history.js";
import type { ToolCallEvent, ToolCallRecord, ToolCallStatus, ToolHandler, ToolOptions, ToolResultEvent, WarningEvent } from "./types.js";


/** Where the runner reports: the session's events. */
export interface ToolRunnerSink {
  toolCall(event: ToolCallEvent): void;
  toolResult(event: ToolResultEvent): void;
  warning(event: WarningEvent): void;
}

export class ToolRunner {
  readonly definitions: readonly ToolDefinition[];
  readonly maxRoundsPerReply: number;
  readonly #timeoutMs: number;
  readonly #handlers = new Map<string, ToolHandler>();
  readonly #sink: ToolRunnerSink;
  readonly #now: () => number;

  constructor(options: ToolOptions, sink: ToolRunnerSink, now: () => number = () => performance.now()) {
    this.definitions = checkDefinitions(options);
    this.#timeoutMs = options.timeoutMs ?? DEFAULTS.tools.timeoutMs;
    this.maxRoundsPerReply = options.maxRoundsPerReply ?? DEFAULTS.tools.maxRoundsPerReply;
    if (!(this.#timeoutMs > 0)) throw new ConfigError(`VoiceSession: \`tools.timeoutMs\` must be a number > 0, not ${options.timeoutMs}`);
    if (!(this.maxRoundsPerReply >= 1)) throw new ConfigError(`VoiceSession: \`tools.maxRoundsPerReply\` must be ≥ 1, not ${options.maxRoundsPerReply}`);
    this.#sink = sink;
    this.#now = now;
  }

  /** Sets the handler of tool `name`; returns the function that removes it. */
  handle(name: string, handler: ToolHandler): () => void {
    if (!this.definitions.some((d) => d.name === name)) {
      const known = this.definitions.map((d) => d.name).join(", ") || "none";
      throw new ConfigError(`VoiceSession.handleTool(): there is no tool named ${JSON.stringify(name)} in \`tools.definitions\` (defined: ${known})`);
    }
    if (typeof handler !== "function") throw new ConfigError(`VoiceSession.handleTool(${JSON.stringify(name)}): the handler must be a function (call, { signal }) => result`);
    if (this.#handlers.has(name)) {
      throw new ConfigError(`VoiceSession.handleTool(${JSON.stringify(name)}): the tool already has a handler; call the function handleTool returned to remove it first`);
    }
    this.#handlers.set(name, handler);
    return () => {
      if (this.#handlers.get(name) === handler) this.#handlers.delete(name);
    };
  }

  /**
   * Runs one round: every call at once, each recorded in `message`. Resolves
   * with the `tool` messages for the model's next request, in the calls'
   * order; rejects with `signal.reason` if the reply was cancelled meanwhile
   * (the unanswered calls are then recorded as cancelled, and nothing is sent).
   */
  async run(requests: readonly ToolCallRequest[], message: AssistantMessage, history: ConversationHistory, signal: AbortSignal): Promise<ChatMessage[]> {
    signal.throwIfAborted();
    const outputs = await Promise.all(requests.map((request) => this.#runOne(request, message, history, signal)));
    signal.throwIfAborted();
    return requests.map((r, i): ChatMessage => ({ role: "tool", content: outputs[i] ?? "", toolCallId: r.id, name: r.name }));
  }

  /** One call: its output for the model, or undefined when cancelled. Never rejects. */
  async #runOne(request: ToolCallRequest, message: AssistantMessage, history: ConversationHistory, signal: AbortSignal): Promise<string | undefined> {
    const startedAt = this.#now();
    const parsed = parseArguments(request.rawArguments);
    const call: ToolCall = { ...request, arguments: parsed.ok ? parsed.value : {} };
    const record = history.addToolCall(message, { id: call.id, name: call.name, arguments: call.arguments, rawArguments: call.rawArguments });
    this.#sink.toolCall({ messageId: message.id, call });
    const handler = this.#handlers.get(call.name);
    let outcome: { status: ToolCallStatus; output?: string; problem?: string; cause?: unknown };
    if (!parsed.ok) {
      outcome = failed(`the arguments of ${call.name} are not a JSON object (${parsed.error})`);
    } else if (!handler) {
      const why = this.definitions.some((d) => d.name === call.name) ? "has no handler (session.handleTool)" : "is not one of `tools.definitions`";
      outcome = failed(`the tool ${call.name} ${why}`);
    } else {
      outcome = await this.#invoke(handler, call, signal);
    }
    this.#finish(record, message, outcome, startedAt);
    return outcome.output;
  }

  async #invoke(handler: ToolHandler, call: ToolCall, signal: AbortSignal): Promise<{ status: ToolCallStatus; output?: string; problem?: string; cause?: unknown }> {
    const limit = timeout(this.#timeoutMs, signal);
    try {
      const result = await raceAbort(
        Promise.resolve().then(() => handler(call, { signal: limit.signal })),
        limit.signal,
      );
      const output = serialise(result);
      return output === undefined ? failed(`the result of ${call.name} cannot be turned into JSON`) : { status: "ok", output };
    } catch (err) {
      if (signal.aborted) return { status: "cancelled" };
      if (limit.expired) {
        return { ...failed(`the tool ${call.name} did not answer within ${this.#timeoutMs} ms (tools.timeoutMs)`), status: "timeout", cause: err };
      }
      return { ...failed(`the tool ${call.name} failed: ${errorMessage(err)}`), cause: err };
    } finally {
      limit.clear();
    }
  }

  #finish(record: ToolCallRecord, message: AssistantMessage, outcome: { status: ToolCallStatus; output?: string; problem?: string; cause?: unknown }, startedAt: number): void {
    record.status = outcome.status;
    if (outcome.output !== undefined) record.output = outcome.output;
    if (outcome.problem) {
      this.#sink.warning({ service: "tool", message: `${outcome.problem}; the model was told so`, ...(outcome.cause === undefined ? {} : { cause: outcome.cause }) });
    }
    this.#sink.toolResult({
      messageId: message.id,
      id: record.id,
      name: record.name,
      status: outcome.status,
      ...(outcome.output === undefined ? {} : { output: outcome.output }),
      durationMs: this.#now() - startedAt,
    });
  }
}

/** A failure the model reads as `{"error": …}`. */
function failed(problem: string): { status: ToolCallStatus; output: string; problem: string } {
  return { status: "error", output: JSON.stringify({ error: problem }), problem };
}

/** A string goes back as it is; anything else as JSON (undefined as null). Undefined when it cannot be. */
function serialise(result: unknown): string | undefined {
  if (typeof result === "string") return result;
  try {
    return JSON.stringify(result ?? null);
  } catch {
    return undefined;
  }
}

function parseArguments(raw: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (!raw.trim()) return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
    return { ok: false, error: `got ${Array.isArray(value) ? "an array" : typeof value}` };
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `tools.definitions`, checked: each a { name, parameters } with a name the APIs accept, names unique. */
function checkDefinitions(options: ToolOptions): readonly ToolDefinition[] {
  const definitions = options?.definitions;
  if (!Array.isArray(definitions)) throw new ConfigError("VoiceSession: `tools.definitions` must be an array of { name, description?, parameters }");
  const seen = new Set<string>();
  definitions.forEach((d: ToolDefinition, i) => {
    if (!d || typeof d.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(d.name)) {
      throw new ConfigError(`VoiceSession: \`tools.definitions[${i}].name\` must be 1–64 letters, digits, "_" or "-" (the LLM APIs' rule)`);
    }
    if (typeof d.parameters !== "object" || d.parameters === null || Array.isArray(d.parameters)) {
      throw new ConfigError(`VoiceSession: \`tools.definitions[${i}].parameters\` (${d.name}) must be a JSON Schema object, e.g. { type: "object", properties: {} }`);
    }
    if (seen.has(d.name)) throw new ConfigError(`VoiceSession: two tools are named ${JSON.stringify(d.name)} in \`tools.definitions\``);
    seen.add(d.name);
  });
  return definitions;
}
