/**
 * The conversation as a speech-to-speech service's new context takes it
 * (openaiRealtime's and geminiLive's restore after a reconnect): the user's
 * and the assistant's words, in order. Not the instructions (the service's
 * session has them), not tool rounds (their calls were the old socket's
 * items), not empty turns. Pure.
 */
import type { ChatMessage } from "./types.js";

export function spokenTurns(messages: readonly ChatMessage[]): Array<{ role: "user" | "assistant"; text: string }> {
  return messages.flatMap((m) => ((m.role === "user" || m.role === "assistant") && m.content.trim() ? [{ role: m.role, text: m.content }] : []));
}
