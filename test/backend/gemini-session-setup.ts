/**
 * A VoiceSession on `geminiLive` against the reference backend's Gemini Live
 * emulator (real pocketsphinx hears, ELIZA answers, flite speaks), with
 * client turn detection: a full turn (activityStart at the user's onset,
 * activityEnd at the turn's end), a barge-in (the heard-text clientContent,
 * as the emulator's /__gemini/log shows, and the next turn's context), a VAD
 * misfire (nothing sent), a tool call and a refused token.
 *
 * The audio parts are bargein/testing's public fakes, as in
 * realtime-session-setup.ts: a FakePlayer on a FakeClock that runs with real
 * time, a FakeVad whose speech events the test emits where its speech is,
 * and a FakeMicrophone fed with flite's speech at 16 kHz in 20 ms frames at
 * real-time pace. The real worklets and VAD worker are the browser specs'.
 *
 * The story is told in two files, so that vitest runs them side by side:
 * gemini-session.test.ts (a full turn, a stall at the onset, a misfire, a
 * tool call, a refused token, server turn detection) and
 * gemini-session-barge-in.test.ts (the barge-ins, a socket that drops
 * mid-reply). Each starts its own backend.
 */
import { mintGeminiToken } from "./speech-to-speech-rig.js";
import { useSpeechToSpeechBackend } from "./speech-to-speech-backend.js";

export const KEY = "gemini-session-key";
export const STORY = "tell me a long story";
/** A question whose reply lasts about 6 s: long enough to speak over, shorter than the story. */
export const WEATHER = "what is the weather like today";

/**
 * Starts a reference backend for the calling test file (beforeAll, stopped in afterAll): call it at
 * the file's top level. Returns the file's helpers on that backend: `rig` (geminiLive's sessions,
 * with an ephemeral token by default), `mintToken` (as an app's server would: POST
 * /v1alpha/auth_tokens with the API key) and `geminiLog` (the emulator's newest session).
 */
export function useGeminiBackend() {
  const { rig, lastSession, backend } = useSpeechToSpeechBackend("gemini", KEY, (b) => () => mintGeminiToken(b, KEY));
  const mintToken = () => mintGeminiToken(backend(), KEY);
  return { mintToken, rig, geminiLog: lastSession };
}
