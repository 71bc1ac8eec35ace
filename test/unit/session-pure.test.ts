import { describe, expect, test } from "vitest";
import { ConversationHistory, splitHeard } from "../../src/session/history.js";
import { WordChunker } from "../../src/session/word-chunker.js";

describe("WordChunker", () => {
  test("emits whole words as soon as whitespace completes them, whatever the delta boundaries", () => {
    const c = new WordChunker();
    expect(c.push("Hel")).toEqual([]);
    expect(c.push("lo wor")).toEqual(["Hello"]);
    expect(c.push("ld.  How")).toEqual(["world."]);
    expect(c.push(" are\nyou")).toEqual(["How", "are"]);
    expect(c.flush()).toEqual(["you"]);
    expect(c.flush()).toEqual([]);
  });
});

describe("splitHeard", () => {
  const words = [
    { text: "I", startS: 0.0, stopS: 0.1 },
    { text: "think", startS: 0.1, stopS: 0.4 },
    { text: "that", startS: 0.4, stopS: 0.6 },
    { text: "is", startS: 0.6, stopS: 0.7 },
  ];
  test("a word is heard once its midpoint was rendered", () => {
    expect(splitHeard(words, "I think that is right.", 0.26)).toEqual({ heard: "I think", unheard: "that is right." });
    expect(splitHeard(words, "I think that is right.", 0.24)).toEqual({ heard: "I", unheard: "think that is right." });
    expect(splitHeard(words, "I think that is right.", 0)).toEqual({ heard: "", unheard: "I think that is right." });
  });
  test("words never synthesised are unheard even when all timed words were heard", () => {
    expect(splitHeard(words, "I think that is right.", 5)).toEqual({ heard: "I think that is", unheard: "right." });
  });
});

describe("ConversationHistory", () => {
  test("an interrupted reply keeps only its heard words, and the chat sent to the LLM follows", () => {
    const h = new ConversationHistory();
    h.addUser("u1", "what is the weather like");
    const a = h.addAssistant("a2");
    a.text = "It is sunny and warm today.";
    h.interrupt(a, [
      { text: "It", startS: 0, stopS: 0.2 },
      { text: "is", startS: 0.2, stopS: 0.3 },
      { text: "sunny", startS: 0.3, stopS: 0.8 },
    ], 0.4);
    expect(a).toEqual({ id: "a2", role: "assistant", text: "It is", interrupted: true, unheardText: "sunny and warm today." });
    expect(h.toChat("Be brief.")).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "what is the weather like" },
      { role: "assistant", content: "It is" },
    ]);
  });
});
