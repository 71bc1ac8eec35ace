/**
 * fakeSession(): a whole VoiceSession on fakes, for an app's tests in Node:
 * the scripted providers (fakeStt, fakeLlm, fakeTts) and the scripted audio
 * parts (fakeAudio), wired together. The test plays the user and the
 * loudspeaker; the session under test is the real one.
 *
 *     const { session, user, player, waitForState } = fakeSession({ replies: ["Sure, I can help."] });
 *     await session.start();
 *     await user.says("can you help me");
 *     await waitForState("bot_speaking");
 *     await player.play(); // the whole reply is heard
 */
import { StateError, VoiceSession, type SessionState, type VoiceSessionOptions } from "../index.js";
import { fakeAudio, type FakeAudioOptions } from "./fake-audio.js";
import type { FakeClock } from "./fake-clock.js";
import type { FakePlayer } from "./fake-player.js";
import { fakeLlm, fakeStt, fakeTts, type FakeLlmTurn, type FakeSttControl } from "./fake-providers.js";
import type { FakeUser } from "./fake-user.js";

export interface FakeSessionOptions extends Omit<VoiceSessionOptions, "stt" | "llm" | "tts" | "components"> {
  /**
   * What the LLM answers, one entry per request, in order: a user turn's
   * reply (an interrupted reply uses one up too), or a FakeLlmTurn that calls
   * tools, whose answer after the results is the next entry. Past the last
   * one it answers "You said <the user's words>."
   */
  replies?: readonly (string | FakeLlmTurn)[];
  /** Real-time ms between the LLM's words. Default 1. */
  msPerToken?: number;
  /** Seconds of speech per word of the fake TTS. Default 0.25. */
  secondsPerWord?: number;
  /** The page's devices (`new FakeDevices()`), for device swaps and `devicechange`. */
  devices?: FakeAudioOptions["devices"];
  /** The clock the audio plays and the user speaks on. Default: a new virtual FakeClock. */
  clock?: FakeAudioOptions["clock"];
  /** Seconds between rendering and hearing the bot's audio. Default 0: what was played was heard. */
  outputLatency?: number;
  /** How long each of the user's words lasts, in ms. Default 250. */
  msPerUserWord?: number;
  /** The VAD's model is still loading at start(): the session listens `degraded` until `user.vad.modelLoaded()`. Default false. */
  modelLoading?: boolean;
}

export interface FakeSession {
  session: VoiceSession;
  /** The user: `await user.says("…")`, `user.startSpeaking()`, `user.noise(ms)`… */
  user: FakeUser;
  /** The loudspeaker: `await player.play(ms)` lets the user hear `ms` of the reply, `play()` all of it. */
  player: FakePlayer;
  clock: FakeClock;
  /** The fake providers, to look at what they were sent (`llm.requests`, `tts.streams`) or to fault them (`stt.drop()`). */
  stt: FakeSttControl;
  llm: ReturnType<typeof fakeLlm>;
  tts: ReturnType<typeof fakeTts>;
  /** Resolves once the session is in `state` (at once if it is); fails after `timeoutMs` (real time, default 2000). */
  waitForState(state: SessionState, timeoutMs?: number): Promise<void>;
  /**
   * Resolves once the bot's latest reply is all generated: the LLM has sent
   * its last word and the TTS was told the text is complete (the audio still
   * has to be played). Then an interruption's `unheardText` is the whole rest
   * of the reply, not whatever the LLM had streamed so far.
   */
  waitForReply(timeoutMs?: number): Promise<void>;
}

export function fakeSession(options: FakeSessionOptions = {}): FakeSession {
  const { replies = [], msPerToken = 1, secondsPerWord = 0.25, clock, outputLatency, msPerUserWord, devices, modelLoading, ...sessionOptions } = options;
  const stt = fakeStt();
  let turn = 0;
  const llm = fakeLlm({ reply: () => replies[turn++], msPerWord: msPerToken });
  const tts = fakeTts({ secondsPerWord });
  const audio = fakeAudio({ stt, clock, outputLatency, msPerWord: msPerUserWord, devices, modelLoading });
  const session = new VoiceSession({ ...sessionOptions, stt: stt.provider, llm: llm.provider, tts: tts.provider, components: audio.components });
  const waitForState = (state: SessionState, timeoutMs = 2000) =>
    new Promise<void>((resolve, reject) => {
      if (session.state === state) return resolve();
      const timer = setTimeout(() => {
        off();
        reject(new StateError(`fakeSession: the session did not reach "${state}" within ${timeoutMs} ms; it is "${session.state}"`));
      }, timeoutMs);
      const off = session.on("state", (e) => {
        if (e.state !== state) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  const waitForReply = async (timeoutMs = 2000) => {
    const end = performance.now() + timeoutMs;
    // A reply that called tools made more than one request: the last one, with no call, ends it.
    const replies = () => llm.requests.filter((r) => !r.calledTools).length;
    const generated = () => {
      const last = llm.requests.at(-1);
      return last?.completed === true && !last.calledTools && tts.streams.length >= replies() && tts.streams.at(-1)!.ended;
    };
    while (!generated()) {
      if (llm.requests.length === 0 && session.state !== "bot_thinking" && session.state !== "bot_speaking") {
        throw new StateError(`fakeSession.waitForReply(): there is no reply to wait for; the session is "${session.state}" and the LLM was never asked`);
      }
      if (performance.now() > end) throw new StateError(`fakeSession.waitForReply(): the reply was not all generated within ${timeoutMs} ms`);
      // The fake LLM streams on real timers: poll them.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  return { session, user: audio.user, player: audio.player, clock: audio.clock, stt, llm, tts, waitForState, waitForReply };
}
