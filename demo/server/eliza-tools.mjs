// The reference LLM's scripted tool calls (NOT a language model, like eliza.mjs):
// when a request offers a tool of the small scripted set and the last user
// message asks for it, the reply is a call of that tool; once the tool's
// result comes back, the reply reads it out. Pure: the emulator streams the
// call in each wire's format (openai-llm.mjs).
//
// - get_time: "what time is it", "the time" → get_time({}), then "It is <result>."
// - get_weather: "weather in Oslo" → get_weather({"city":"Oslo"}), then
//   "The weather in Oslo is <result>."
// A result `{"error": "..."}` is read out as "I could not <do it>: ...".
//
// Both wires are read: chat completions (`messages`, `tools[].function.name`,
// an assistant message's `tool_calls`, `role: "tool"` results) and the
// Responses API (`input`, `tools[].name`, `function_call` and
// `function_call_output` items).

/** @typedef {{ name: string, arguments: Record<string, unknown> }} ScriptedCall */

/** @type {{ name: string, pattern: RegExp, args: (m: RegExpExecArray) => Record<string, unknown>, doing: string, answer: (result: string, args: Record<string, unknown>) => string }[]} */
const SCRIPT = [
  {
    name: "get_time",
    pattern: /\b(what time|the time|time is it)\b/i,
    args: () => ({}),
    doing: "get the time",
    answer: (result) => `It is ${result}.`,
  },
  {
    name: "get_weather",
    pattern: /\bweather (?:in|for|at) ([A-Za-z][A-Za-z -]{0,40}?)\s*[?.!]*$/i,
    args: (m) => ({ city: m[1].trim() }),
    doing: "get the weather",
    answer: (result, args) => `The weather in ${args.city} is ${result}.`,
  },
];

/**
 * The names of the tools a request offers, in either wire's shape.
 * @param {any} body the request body (chat completions) or `response` (Responses)
 * @returns {string[]}
 */
export function offeredTools(body) {
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((/** @type {any} */ t) => t?.function?.name ?? t?.name).filter((/** @type {unknown} */ n) => typeof n === "string");
}

/**
 * What the scripted model does with this request: call a tool, answer from a
 * tool's result, or nothing scripted (undefined: ELIZA answers the user).
 * @param {any} body
 * @param {string} userText the last user message
 * @returns {{ kind: "call", call: ScriptedCall } | { kind: "answer", text: string } | undefined}
 */
export function toolTurn(body, userText) {
  const result = lastToolResult(body);
  if (result) {
    const rule = SCRIPT.find((r) => r.name === result.name);
    if (!rule) return undefined;
    return { kind: "answer", text: readOut(rule, result.output, result.args) };
  }
  const offered = offeredTools(body);
  for (const rule of SCRIPT) {
    if (!offered.includes(rule.name)) continue;
    const match = rule.pattern.exec(userText.trim());
    if (match) return { kind: "call", call: { name: rule.name, arguments: rule.args(match) } };
  }
  return undefined;
}

/**
 * Splits a call's JSON arguments into the pieces that are streamed, as a real
 * model streams them: a few characters each, which only parse once joined.
 * @param {string} json
 * @returns {string[]}
 */
export function argumentPieces(json) {
  const pieces = [];
  for (let i = 0; i < json.length; i += 6) pieces.push(json.slice(i, i + 6));
  return pieces.length ? pieces : [""];
}

/**
 * The last message, if it is a tool's result: its tool's name (from the call
 * it answers), the call's arguments and the result's text.
 * @param {any} body
 * @returns {{ name: string, args: Record<string, unknown>, output: string } | undefined}
 */
function lastToolResult(body) {
  const items = body?.messages ?? body?.input;
  if (!Array.isArray(items) || items.length === 0) return undefined;
  const last = items[items.length - 1];
  /** @type {string | undefined} */
  let callId;
  /** @type {unknown} */
  let output;
  if (last?.role === "tool") [callId, output] = [last.tool_call_id, last.content];
  else if (last?.type === "function_call_output") [callId, output] = [last.call_id, last.output];
  else return undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    const calls = item?.role === "assistant" && Array.isArray(item.tool_calls) ? item.tool_calls : item?.type === "function_call" ? [item] : [];
    for (const c of calls) {
      if (c.id !== callId && c.call_id !== callId) continue;
      const name = c.function?.name ?? c.name;
      return { name, args: parseObject(c.function?.arguments ?? c.arguments), output: typeof output === "string" ? output : JSON.stringify(output) };
    }
  }
  return undefined;
}

/** @param {typeof SCRIPT[number]} rule @param {string} output @param {Record<string, unknown>} args */
function readOut(rule, output, args) {
  /** @type {unknown} */
  let value = output;
  try {
    value = JSON.parse(output);
  } catch {
    // A plain string result: read as it is.
  }
  if (value && typeof value === "object" && "error" in value) return `I could not ${rule.doing}: ${String(/** @type {any} */ (value).error)}.`;
  if (typeof value === "string") return rule.answer(value.replace(/[.\s]+$/, ""), args);
  const first = value && typeof value === "object" ? Object.values(value).find((v) => typeof v === "string") : undefined;
  return rule.answer(String(first ?? output), args);
}

/** @param {unknown} text @returns {Record<string, unknown>} */
function parseObject(text) {
  try {
    const v = JSON.parse(String(text ?? "{}"));
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}
