// The scripted "model" the speech-to-speech emulators share (OpenAI Realtime, Gemini Live):
// it reads the conversation as one line per turn ({ role, text }) and decides what to do
// next: answer a tool's result, call the one function tool it knows (get_time, when the user
// asks the time and the session declared it), or give ELIZA's reply to the last user text.
// Pure: no I/O, no clock.
import { elizaReply } from "../eliza.mjs";

/** The function tool the scripted model calls, and the question that makes it call it. */
export const TIME_TOOL = "get_time";
const TIME_QUESTION = /\bwhat time is it\b/i;

/**
 * What the scripted model does next, from what it reads.
 * @param {{ role: string, text: string }[]} input   the last line with role "function_call_output" (or
 *   "tool") is a tool's result
 * @param {string[]} toolNames  the function tools the session declared
 * @returns {{ kind: "message", text: string } | { kind: "function_call", name: string, arguments: string }}
 */
export function planReply(input, toolNames) {
  const last = input.at(-1);
  if (last?.role === "function_call_output" || last?.role === "tool") {
    /** @type {any} */
    let result = null;
    try {
      result = JSON.parse(last.text);
    } catch {}
    return { kind: "message", text: typeof result?.time === "string" ? `The time is ${result.time}.` : `The tool answered ${last.text}.` };
  }
  const userText = [...input].reverse().find((i) => i.role === "user")?.text ?? "";
  if (TIME_QUESTION.test(userText) && toolNames.includes(TIME_TOOL)) return { kind: "function_call", name: TIME_TOOL, arguments: "{}" };
  return { kind: "message", text: elizaReply(userText) };
}
