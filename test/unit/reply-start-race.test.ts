// A reply cancelled while it is still starting opens no LLM request.
//
// Reply.start() adds its "tts" quest, then its "llm" quest. The tts add waits
// behind the removal of the last reply's TTS (QuestManager runs one name's
// calls in order), and that close can take up to the socket's 1 s close wait
// when the server is busy synthesising. A barge-in in that window (the soak's
// retry speaks whatever the session is doing, so it can land in bot_thinking)
// cancels the reply and removes "llm" while there is none yet; start() then
// went on and added the LLM quest of a cancelled reply: the soak's "between
// turns" leak. The TTS, the LLM and the player are test doubles here: the race
// is between QuestManager calls on the main thread, with no I/O in it.
import { describe, expect, test } from "vitest";
import { QuestManager } from "../../src/quest/quest-manager.js";
import { Quest } from "../../src/quest/quest.js";
import { ConversationHistory } from "../../src/session/history.js";
import { Reply } from "../../src/session/reply.js";
import type { LlmOutput, LlmProvider, TtsProvider, TtsStream } from "../../src/providers/types.js";
import { FakePlayer } from "../../src/testing/index.js";
import { sleep } from "../lib/wait.mjs";

/** An LLM that counts its requests and streams nothing until aborted. */
function hangingLlm() {
  const requests: AbortSignal[] = [];
  const llm: LlmProvider = {
    name: "hanging-llm",
    async *stream(_messages, signal): AsyncIterable<LlmOutput> {
      requests.push(signal!);
      await new Promise((_, reject) => signal!.addEventListener("abort", () => reject(signal!.reason), { once: true }));
    },
  };
  return { llm, requests };
}

/** A TTS whose streams end when closed; counts connects. */
function quietTts() {
  let connects = 0;
  const tts: TtsProvider = {
    name: "quiet-tts",
    async connect(): Promise<TtsStream> {
      connects++;
      let closed!: () => void;
      const done = new Promise<void>((resolve) => (closed = resolve));
      return {
        sendText() {},
        end() {},
        async *events(signal) {
          await Promise.race([done, new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }))]);
        },
        async close() {
          closed();
        },
      };
    },
  };
  return { tts, connects: () => connects };
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await sleep(0);
};

function newReply(quests: QuestManager, llm: LlmProvider, tts: TtsProvider) {
  const history = new ConversationHistory();
  return new Reply({
    generation: 2,
    index: 2,
    message: history.addAssistant("a2"),
    chat: [{ role: "user", content: "hello" }],
    history,
    speechEndAt: 0,
    sttFinalMs: 0,
    llm,
    tts,
    player: new FakePlayer({ outputLatency: 0 }),
    quests,
    stallMs: 60_000,
    hooks: { transcript() {}, error() {}, stalled() {}, silentEnd() {}, warning() {} },
  });
}

describe("Reply.start() racing its own cancel", () => {
  test.each([
    ["cut to what was heard, then its streams removed (a barge-in)", true],
    ["its streams removed alone (no player to cut against)", false],
  ])("cancelled while its TTS add waits behind the last reply's slow TTS close — %s: no LLM quest is added and no LLM request is made", async (_how, cut) => {
    const quests = new QuestManager();
    // The last reply's TTS quest, whose close (the server answering the close frame) has not finished.
    let finishClose!: () => void;
    const slowClose = new Promise<void>((resolve) => (finishClose = resolve));
    await quests.add(new Quest("tts", () => "last reply's stream", (_r, signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })), () => slowClose));
    const lastRemoval = quests.remove("tts");

    const { llm, requests } = hangingLlm();
    const { tts, connects } = quietTts();
    const reply = newReply(quests, llm, tts);
    const starting = reply.start();
    await settle();
    expect(quests.names).toEqual([]); // still waiting behind the old close

    // The barge-in: interrupt steps 1 and 4 (cutToHeard cancels; removeStreams removes both streams).
    if (cut) reply.cancel();
    const removing = reply.removeStreams();
    finishClose();
    await Promise.all([lastRemoval, removing, starting]);
    await settle();

    expect(quests.names).toEqual([]);
    expect(requests).toHaveLength(0);
    // Its TTS quest ran and was removed in turn, so the one stream it opened is closed.
    expect(connects()).toBeLessThanOrEqual(1);
    await quests.dispose();
  });

  test("not cancelled, the same start adds both quests once the old close is done, and the LLM is asked once", async () => {
    const quests = new QuestManager();
    let finishClose!: () => void;
    const slowClose = new Promise<void>((resolve) => (finishClose = resolve));
    await quests.add(new Quest("tts", () => "last reply's stream", (_r, signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })), () => slowClose));
    const lastRemoval = quests.remove("tts");

    const { llm, requests } = hangingLlm();
    const { tts } = quietTts();
    const reply = newReply(quests, llm, tts);
    const starting = reply.start();
    finishClose();
    await Promise.all([lastRemoval, starting]);
    await settle();

    expect(quests.names.sort()).toEqual(["llm", "tts"]);
    expect(requests).toHaveLength(1);
    reply.cancel();
    await reply.removeStreams();
    expect(quests.names).toEqual([]);
    expect(requests[0].aborted).toBe(true);
    await quests.dispose();
  });
});
