/** Tool calls: the `tools` option, the handler an app gives, and the events and records of each call. All public. */
import type { ToolCall, ToolDefinition } from "../providers/types.js";

/**
 * The tools the model may call (the `tools` option): settings only. The app
 * answers a call with a handler given to `session.handleTool(name, handler)`.
 * @see docs/guides/providers.md
 */
export interface ToolOptions {
  /** What each request offers the model. */
  definitions: readonly ToolDefinition[];
  /**
   * A handler that has not answered within this many ms is aborted (its
   * signal), and the model is told the tool timed out; a `warning` says so.
   * @defaultValue 10000
   */
  timeoutMs?: number;
  /**
   * How many times one reply may stop to call tools. A model that asks again
   * after that gets no more answers: the reply ends with what it said, and a
   * `warning` says so.
   * @defaultValue 5
   */
  maxRoundsPerReply?: number;
}

/**
 * Answers the model's call: the resolved value goes back to the model (a
 * string as it is, anything else as JSON); a throw or a rejection goes back
 * as `{"error": message}`. `signal` aborts when the reply is cancelled (a
 * barge-in, interrupt(), stop()) or the tool's time is up: stop the work
 * then; whatever the handler returns afterwards is dropped.
 */
export type ToolHandler = (call: ToolCall, context: { signal: AbortSignal }) => unknown;

/** How a tool call ended: answered, failed, out of time, or cancelled with its reply (nothing was sent then). */
export type ToolCallStatus = "ok" | "error" | "timeout" | "cancelled";

/** A tool call in `session.history`: in the assistant message whose reply made it. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  rawArguments: string;
  /** Absent while the handler runs. */
  status?: ToolCallStatus;
  /** What the model was sent: the result's text, or `{"error": …}`; absent while running and when cancelled. */
  output?: string;
}

/** The model asked for a tool, and its handler starts now (bot_thinking goes on meanwhile). */
export interface ToolCallEvent {
  /** The assistant message (history, transcript id) whose reply made the call. */
  messageId: string;
  call: ToolCall;
}

/** A tool call ended; `output` is what the model was sent (absent when cancelled: nothing was). */
export interface ToolResultEvent {
  messageId: string;
  id: string;
  name: string;
  status: ToolCallStatus;
  output?: string;
  /** From the call's start to its end, in ms. */
  durationMs: number;
}
