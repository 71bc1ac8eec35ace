/**
 * A VoiceSession on `openaiRealtime` against the reference backend's OpenAI
 * Realtime emulator (real pocketsphinx hears, ELIZA answers, flite speaks),
 * with client turn detection: a full turn, a barge-in (cancel + truncate
 * with the rendered ms of the item, as the emulator's /__realtime/log
 * shows) and a VAD misfire (nothing sent).
 *
 * The audio parts are bargein/testing's public fakes: a FakePlayer on a
 * FakeClock that runs with real time (it "renders" what the session
 * writes), a FakeVad whose speech events the test emits where its speech
 * is, and a FakeMicrophone that the test feeds with real speech (flite's
 * words, 24 kHz s16) and silence in 20 ms frames at real-time pace. The real
 * worklets and VAD worker run in test/browser/realtime.spec.ts.
 *
 * The story is told in two files, so that vitest runs them side by side:
 * realtime-session.test.ts (a full turn, a tool call, a refused key, server
 * turn detection) and realtime-session-barge-in.test.ts (a barge-in, a
 * misfire, a socket that drops mid-reply). Each starts its own backend.
 */
import { useSpeechToSpeechBackend } from "./speech-to-speech-backend.js";

export const KEY = "realtime-session-key";
export const STORY = "tell me a long story";

/**
 * Starts a reference backend for the calling test file (beforeAll, stopped in afterAll): call it at
 * the file's top level. Returns the file's helpers on that backend: `rig` (openaiRealtime's sessions,
 * given the API key by default) and `realtimeLog` (the emulator's newest session).
 */
export function useRealtimeBackend() {
  const { rig, lastSession } = useSpeechToSpeechBackend("openai", KEY, () => async () => KEY);
  return { rig, realtimeLog: lastSession };
}
