/**
 * The conversation as the user experienced it. An interrupted assistant
 * message keeps only what was heard: the words whose audio the playback
 * worklet actually rendered (less the output latency), mapped through the
 * TTS word timestamps. Pure, no DOM.
 */
import { ConfigError } from "../errors.js";
import type { ChatMessage } from "../providers/types.js";
import type { HistorySeed, ToolCallRecord } from "./types.js";

export interface UserMessage {
  /** Stable for the session: the `id` of this message's `transcript` events. */
  id: string;
  role: "user";
  text: string;
}

export interface AssistantMessage {
  /** Stable for the session: the `id` of this message's `transcript` events. */
  id: string;
  role: "assistant";
  /** What the user heard: the whole reply, or its heard part when interrupted. */
  text: string;
  /**
   * True when the reply was cut short: the user talked over it, `interrupt()`
   * was called, it stalled, its TTS failed, or the session stopped mid-reply.
   */
  interrupted: boolean;
  /** The part of the reply that was generated but never heard (empty unless interrupted). */
  unheardText: string;
  /** The tools the reply called, in order, with what the model was sent back (only when it called any). */
  toolCalls?: ToolCallRecord[];
}

export type HistoryMessage = UserMessage | AssistantMessage;

/** A word of the TTS output and where it sits in the reply's audio, in seconds. */
export interface TimedWord {
  text: string;
  startS: number;
  stopS: number;
}

/**
 * Splits a reply at `heardS` seconds of rendered audio. A word counts as heard
 * when its midpoint was rendered. Text that had no timestamp yet (never
 * synthesised) is unheard.
 */
export function splitHeard(words: readonly TimedWord[], fullText: string, heardS: number): { heard: string; unheard: string } {
  let heardCount = 0;
  for (const word of words) {
    if ((word.startS + word.stopS) / 2 <= heardS) heardCount++;
    else break;
  }
  const tokens = fullText.split(/\s+/).filter(Boolean);
  // The TTS words follow the reply's words in order; the count decides the cut.
  const cut = Math.min(heardCount, tokens.length);
  return { heard: tokens.slice(0, cut).join(" "), unheard: tokens.slice(cut).join(" ") };
}

export class ConversationHistory {
  readonly #messages: HistoryMessage[] = [];

  /** Earlier conversation, checked (a ConfigError names the bad entry); `newId` makes the ids not given. */
  seed(messages: ReadonlyArray<HistorySeed>, newId: (role: "user" | "assistant") => string): void {
    messages.forEach((m, i) => {
      if (!m || (m.role !== "user" && m.role !== "assistant") || typeof m.text !== "string") {
        throw new ConfigError(`VoiceSession: \`history[${i}]\` must be { role: "user" | "assistant", text: string }`);
      }
      const id = typeof m.id === "string" && m.id ? m.id : newId(m.role);
      if (m.role === "user") this.addUser(id, m.text);
      else {
        const message: AssistantMessage = { id, role: "assistant", text: m.text, interrupted: m.interrupted === true, unheardText: m.unheardText ?? "" };
        if (Array.isArray(m.toolCalls) && m.toolCalls.length) message.toolCalls = m.toolCalls.map((c) => ({ ...c }));
        this.#messages.push(message);
      }
    });
  }

  get messages(): readonly HistoryMessage[] {
    return this.#messages;
  }

  addUser(id: string, text: string): UserMessage {
    const message: UserMessage = { id, role: "user", text };
    this.#messages.push(message);
    return message;
  }

  /** Starts an assistant message; its text grows as the reply streams. */
  addAssistant(id: string): AssistantMessage {
    const message: AssistantMessage = { id, role: "assistant", text: "", interrupted: false, unheardText: "" };
    this.#messages.push(message);
    return message;
  }

  /** Adds an assistant message made outside the history (a held reply's, at its release). */
  append(message: AssistantMessage): void {
    this.#messages.push(message);
  }

  /**
   * Removes the replies after `message` that the user never heard (no text
   * heard, no tool called): a turn resumed before its reply was heard
   * (`turn.resumeUnheard`) gets one reply, to all its words.
   */
  dropUnheardAfter(message: HistoryMessage): void {
    const at = this.#messages.indexOf(message);
    if (at < 0) return;
    const kept = this.#messages.slice(at + 1).filter((m) => m.role !== "assistant" || m.text !== "" || (m.toolCalls?.length ?? 0) > 0);
    this.#messages.splice(at + 1, this.#messages.length - at - 1, ...kept);
  }

    /** Marks `message` interrupted and keeps only its heard part. */
  interrupt(message: AssistantMessage, words: readonly TimedWord[], heardS: number): { heard: string; unheard: string } {
    const split = splitHeard(words, message.text, heardS);
    message.interrupted = true;
    message.text = split.heard;
    message.unheardText = split.unheard;
    return split;
  }

  /** Records a tool call of `message`'s reply, not yet answered. */
  addToolCall(message: AssistantMessage, record: ToolCallRecord): ToolCallRecord {
    (message.toolCalls ??= []).push(record);
    return record;
  }

  /**
   * The messages to send to an LLM: the instructions, then every non-empty
   * turn. A reply that called tools is sent as the model's calls and their
   * results first, then what it said: its rounds collapse into one, which
   * keeps each call right before its answer (the order chat completions and
   * the Responses API require). A call with no answer (cancelled with its
   * reply) is left out: nothing was sent for it, and a call without a result
   * is an error for those APIs. `omit`: a message left out (a reply still
   * playing, whose heard part is not known yet).
   */
  toChat(instructions: string | undefined, omit?: HistoryMessage): ChatMessage[] {
    const chat: ChatMessage[] = instructions ? [{ role: "system", content: instructions }] : [];
    for (const m of this.#messages) {
      if (m === omit) continue;
      if (m.role === "assistant") chat.push(...toolRound(m.toolCalls));
      if (m.text) chat.push({ role: m.role, content: m.text });
    }
    return chat;
  }
}

/** A reply's answered tool calls as the assistant's call message and one tool message each. */
function toolRound(records: readonly ToolCallRecord[] | undefined): ChatMessage[] {
  const answered = (records ?? []).filter((r): r is ToolCallRecord & { output: string } => r.output !== undefined);
  if (answered.length === 0) return [];
  return [
    { role: "assistant", content: "", toolCalls: answered.map(({ id, name, rawArguments }) => ({ id, name, rawArguments })) },
    ...answered.map((r): ChatMessage => ({ role: "tool", content: r.output, toolCallId: r.id, name: r.name })),
  ];
}
