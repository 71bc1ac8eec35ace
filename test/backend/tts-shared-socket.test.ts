/**
 * One TTS socket per conversation: a VoiceSession (on bargein/testing's
 * scripted audio, a scripted STT and LLM) speaks five replies through the
 * real elevenlabsTts or cartesiaTts against the reference backend's emulator,
 * and the third is cut by a barge-in while the LLM is still writing it. The
 * emulator's stats count the sockets and the contexts: one socket, five
 * contexts, the cut one cancelled (ElevenLabs close_context with no flush,
 * Cartesia cancel), and the reply after the cut hears only its own words:
 * nothing of the cancelled context that was still on the way.
 *
 * The same conversation with the provider's `connect()` alone (no `session()`,
 * what every reply did before) opens a socket per reply: 5.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { cartesiaTts } from "../../src/providers/cartesia-tts.js";
import { elevenlabsTts } from "../../src/providers/elevenlabs-tts.js";
import type { TtsEvent, TtsProvider, TtsStream } from "../../src/providers/types.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeAudio } from "../../src/testing/fake-audio.js";
import { fakeLlm, fakeStt } from "../../src/testing/fake-providers.js";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false });
}, 60_000);
afterAll(() => backend?.close());

const REPLIES = [
  "Hello, nice to meet you.",
  "The weather is sunny today.",
  "Well, let me think about that, because there are many parts to it, and each of them takes a while to explain, so bear with me.",
  "Of course, go ahead.",
  "Goodbye, and have a nice day.",
];
const words = (text: string) => text.split(" ");

/** pace=1: the audio comes as fast as it plays, so the cut reply's is still on the way when the next one starts. */
const providers: Record<string, (pace: number) => TtsProvider> = {
  elevenlabsTts: (pace) => elevenlabsTts({ voiceId: "slt", url: `${backend.wsUrl}?pace=${pace}` }),
  cartesiaTts: (pace) => cartesiaTts({ voiceId: "slt", url: `${backend.wsUrl}?pace=${pace}` }),
};

/** The provider with each reply's stream recorded (its events, in order). */
function recorded(provider: TtsProvider, shared: boolean): { tts: TtsProvider; streams: TtsEvent[][] } {
  const streams: TtsEvent[][] = [];
  const record = (stream: TtsStream): TtsStream => {
    const mine: TtsEvent[] = [];
    streams.push(mine);
    return {
      sendText: (text) => stream.sendText(text),
      end: () => stream.end(),
      close: () => stream.close(),
      async *events(signal) {
        for await (const event of stream.events(signal)) {
          mine.push(event);
          yield event;
        }
      },
    };
  };
  const connect = async (signal?: AbortSignal) => record(await provider.connect(signal));
  if (!shared) return { tts: { name: provider.name, connect }, streams };
  return {
    tts: {
      name: provider.name,
      connect,
      session() {
        const session = provider.session!();
        return { connect: async (signal) => record(await session.connect(signal)), close: () => session.close() };
      },
    },
    streams,
  };
}

/** Five replies; the third is cut 0.8 s in by the user's "hold on", whose reply is the fourth. */
async function conversation(tts: TtsProvider) {
  let turn = 0;
  const stt = fakeStt();
  const audio = fakeAudio({ stt });
  const llm = fakeLlm({ reply: () => REPLIES[turn++], msPerWord: 60 });
  const session = new VoiceSession({ stt: stt.provider, llm: llm.provider, tts, components: audio.components });
  const interruptions: number[] = [];
  session.on("interruption", (e) => interruptions.push(e.heardMs));
  const openBetweenReplies: number[] = [];
  await session.start();
  try {
    for (const question of ["hi there", "how is the weather", "tell me everything"]) {
      await audio.user.says(question);
      if (question === "tell me everything") await audio.player.play(800, { timeoutMs: 10_000 });
      else await audio.player.play(undefined, { timeoutMs: 10_000 });
      openBetweenReplies.push(backend.stats().tts.open);
    }
    await audio.user.says("hold on one more thing");
    await audio.player.play(undefined, { timeoutMs: 10_000 });
    await audio.user.says("thanks bye");
    await audio.player.play(undefined, { timeoutMs: 10_000 });
  } finally {
    await session.stop();
  }
  return { interruptions, openBetweenReplies, turns: turn };
}

describe.each(Object.keys(providers))("%s: the session's sockets", (name) => {
  test("five replies, one cut by a barge-in mid-generation: one socket, five contexts, the cut one cancelled, the next reply clean", async () => {
    const { tts, streams } = recorded(providers[name](1), true);
    const before = backend.stats().tts;
    const { interruptions, openBetweenReplies, turns } = await conversation(tts);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
    const after = backend.stats().tts;
    const sockets = after.opened - before.opened;
    const contexts = after.contexts - before.contexts;
    const cancelled = after.contextsCancelled - before.contextsCancelled;
    console.log(`${name}: ${sockets} socket(s) for ${turns} replies; ${contexts} contexts, ${cancelled} cancelled`);
    expect(turns).toBe(5);
    expect(interruptions).toHaveLength(1);
    expect(sockets).toBe(1);
    expect(contexts).toBe(5);
    expect(cancelled).toBe(1);
    // The socket stayed open between the replies (the session's), and closed with the session.
    expect(openBetweenReplies).toEqual([1, 1, 1]);
    // Each whole reply heard its own words and nothing else; the one after the cut first of all.
    const spoken = streams.map((events) => events.filter((e): e is Extract<TtsEvent, { kind: "text" }> => e.kind === "text").map((e) => e.text));
    expect(streams).toHaveLength(5);
    const same = (said: string[], text: string) => expect(said.map(bare)).toEqual(words(text).map(bare));
    for (const i of [0, 1, 3, 4]) same(spoken[i], REPLIES[i]);
    // The cut reply: a beginning of its own words, then nothing.
    expect(words(REPLIES[2]).map(bare).slice(0, spoken[2].length)).toEqual(spoken[2].map(bare));
    expect(spoken[2].length).toBeLessThan(words(REPLIES[2]).length);
    // The reply after the cut: its audio no longer than its words need (no tail of the cut one in front).
    const seconds = (events: TtsEvent[]) => events.reduce((s, e) => (e.kind === "audio" ? s + e.pcm.length / e.sampleRate : s), 0);
    const lastWord = streams[3].filter((e) => e.kind === "text").at(-1) as Extract<TtsEvent, { kind: "text" }>;
    expect(seconds(streams[3])).toBeLessThan(lastWord.stopS + 0.6);
  }, 60_000);

  test("the same conversation with connect() alone (what each reply did before session()): a socket per reply", async () => {
    const { tts, streams } = recorded(providers[name](0), false);
    const before = backend.stats().tts.opened;
    await conversation(tts);
    await expect.poll(() => backend.stats().tts.open).toBe(0);
    const sockets = backend.stats().tts.opened - before;
    console.log(`${name} without session(): ${sockets} sockets for ${streams.length} replies`);
    expect(streams).toHaveLength(5);
    expect(sockets).toBe(5);
  }, 60_000);
});

/** Cartesia's timestamps carry no punctuation ("Hello," → Hello); ElevenLabs' alignment does. */
function bare(word: string): string {
  return word.replace(/^[^\p{L}\p{N}']+|[^\p{L}\p{N}']+$/gu, "");
}
