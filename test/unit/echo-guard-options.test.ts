// The echo guard's session options: on by default when the session builds its
// own audio, off with the app's own components (no capture worklet to run it
// in), and bad values are ConfigErrors that name the option.
import { describe, expect, test } from "vitest";
import { checkSessionOptions, echoGuardEnabled, turnConfigOf } from "../../src/session/session-options.js";
import { DEFAULTS } from "../../src/defaults.js";
import { fakeSession } from "../../src/testing/index.js";
import { ConfigError } from "../../src/index.js";
import type { VoiceSessionOptions } from "../../src/session/types.js";

const stt = {} as VoiceSessionOptions["stt"];
const base = { stt, llm: {}, tts: {} } as unknown as VoiceSessionOptions;

describe("echoGuard options", () => {
  test("on by default without components, off by default with them, and `enabled` wins either way", () => {
    expect(echoGuardEnabled(base)).toBe(true);
    expect(echoGuardEnabled({ ...base, echoGuard: { enabled: false } })).toBe(false);
    const withComponents = { ...base, components: {} } as unknown as VoiceSessionOptions;
    expect(echoGuardEnabled(withComponents)).toBe(false);
    expect(echoGuardEnabled({ ...withComponents, echoGuard: { enabled: true } })).toBe(true);
    // The word check follows the guard: words near the bot's audio wait for real speech only with it on.
    expect(turnConfigOf(checkSessionOptions(base)).vouchWordsMs).toBe(DEFAULTS.echoGuard.wordWindowMs);
    expect(turnConfigOf(checkSessionOptions({ ...base, echoGuard: { enabled: false } })).vouchWordsMs).toBeUndefined();
  });

  test("a tail outside 32–1024 ms, or a negative word window, is a ConfigError naming the option", () => {
    for (const tailMs of [0, 31, 1025, Number.NaN, -5]) {
      expect(() => fakeSession({ echoGuard: { tailMs } })).toThrow(ConfigError);
      expect(() => fakeSession({ echoGuard: { tailMs } })).toThrow(/echoGuard\.tailMs/);
    }
    expect(() => fakeSession({ echoGuard: { wordWindowMs: -1 } })).toThrow(/echoGuard\.wordWindowMs/);
    expect(() => fakeSession({ echoGuard: { tailMs: 768, wordWindowMs: 0 } })).not.toThrow();
  });

  test("audio.outputRoute: only \"context\" or \"webrtc-loopback\", and the loopback not with the app's own output node", () => {
    for (const outputRoute of ["webrtc", "", 1]) {
      expect(() => fakeSession({ audio: { outputRoute } as never })).toThrow(/audio\.outputRoute/);
    }
    expect(() => fakeSession({ audio: { outputRoute: "webrtc-loopback", output: {} as AudioNode } })).toThrow(/not both/);
    expect(() => fakeSession({ audio: { outputRoute: "webrtc-loopback" } })).not.toThrow();
    expect(() => fakeSession({ audio: { outputRoute: "context" } })).not.toThrow();
  });
});
