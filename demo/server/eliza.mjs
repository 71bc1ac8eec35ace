// A scripted ELIZA-style responder. It is NOT a language model: it matches a few
// patterns in the last user message, reflects pronouns, and picks one of a few
// canned replies with a hash of the input, so a given input always gets the
// same 1–3 sentence reply. It exists so the demo and the tests run offline;
// point the SDK's `openaiChat` provider at a real model for real answers
// (see demo/README.md).

const REFLECTIONS = new Map(Object.entries({
  i: "you", me: "you", my: "your", mine: "yours", am: "are", "i'm": "you're",
  you: "I", your: "my", yours: "mine", are: "am", "you're": "I'm", myself: "yourself",
}));

/** @type {{ pattern: RegExp, replies: string[] }[]} */
const RULES = [
  { pattern: /\b(hello|hi|hey|good (morning|afternoon|evening))\b/i, replies: [
    "Hello there. What would you like to talk about today?",
    "Hi! It is nice to hear from you. How can I help?",
  ] },
  { pattern: /\bweather\b/i, replies: [
    "I cannot look outside, but I hope it is pleasant where you are. Are you planning to go out today?",
    "I have no weather report, I am only a scripted demo. What would you do if it were sunny?",
  ] },
  { pattern: /\btime\b/i, replies: [
    "I do not keep a clock, but it feels like a good time to talk. What is on your mind?",
  ] },
  { pattern: /\bi need (.+)/i, replies: [
    "Why do you need {1}? Would it really help you?",
    "What would it mean to you if you got {1}?",
  ] },
  { pattern: /\bi (?:am|'m) (.+)/i, replies: [
    "How long have you been {1}? Tell me more about it.",
    "Why do you think you are {1}?",
  ] },
  { pattern: /\bi feel (.+)/i, replies: [
    "Do you often feel {1}? When did that start?",
    "Tell me more about feeling {1}.",
  ] },
  { pattern: /\bi (?:want|would like) (.+)/i, replies: [
    "What would change if you had {1}?",
    "Why do you want {1}? I am curious.",
  ] },
  { pattern: /\bbecause\b(.*)/i, replies: [
    "Is that the real reason? What else comes to mind?",
  ] },
  { pattern: /\b(sorry|apologi[sz]e)\b/i, replies: [
    "There is no need to apologize. Please go on.",
  ] },
  { pattern: /\b(thanks|thank you)\b/i, replies: [
    "You are welcome. Is there anything else you would like to talk about?",
  ] },
  { pattern: /\b(bye|goodbye)\b/i, replies: [
    "Goodbye. It was nice talking with you.",
  ] },
  { pattern: /\b(story|long)\b/i, replies: [
    "Once upon a time there was a small robot who loved to listen. Every day it asked people about their plans, and every day it learned something new. One morning someone finally asked the robot about its own plans, and it did not know what to say.",
  ] },
  { pattern: /\?\s*$|^(what|why|how|who|where|when|can|could|do|does|is|are)\b/i, replies: [
    "That is a good question. What do you think the answer is?",
    "Why do you ask? Tell me a little more.",
    "I am only a scripted demo, so I cannot really know. What would you guess?",
  ] },
];

const FALLBACK = [
  "Please tell me more.",
  "I see. How does that make you feel?",
  "Let us explore that a little. Can you give me an example?",
  "That is interesting. Go on.",
];

/** FNV-1a, for a deterministic choice among replies. @param {string} s */
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Swap first and second person, and trim the phrase to a few words. @param {string} phrase */
function reflect(phrase) {
  const words = phrase.replace(/[.!?,;:]+.*$/, "").trim().split(/\s+/).slice(0, 8);
  return words.map((w) => REFLECTIONS.get(w.toLowerCase()) ?? w).join(" ");
}

/**
 * The reply to the last user message: 1–3 short sentences, deterministic.
 * @param {string} userText
 * @returns {string}
 */
export function elizaReply(userText) {
  const text = userText.trim();
  if (!text) return "I did not catch that. Could you say it again?";
  const h = hash(text.toLowerCase());
  for (const rule of RULES) {
    const match = rule.pattern.exec(text);
    if (!match) continue;
    const template = rule.replies[h % rule.replies.length];
    return template.replace("{1}", reflect(match[1] ?? ""));
  }
  return FALLBACK[h % FALLBACK.length];
}

/**
 * Splits a reply into the pieces that are streamed: each word with its leading space,
 * so that joining the pieces gives back the reply exactly.
 * @param {string} reply
 * @returns {string[]}
 */
export function streamPieces(reply) {
  return reply.split(/(?=\s)/).filter((p) => p.length > 0);
}
