/**
 * bargein/testing, used as an app's test would use it: only the public entry
 * points, a whole scripted conversation in Node, no AudioContext. The test
 * between the markers is the one docs/testing.md shows (a test below checks
 * that the two agree).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe } from "vitest";
import { FakeClock, FakePlayer, fakeAudio, fakeLlm, fakeStt, fakeTts } from "../../src/testing/index.js";
import { MicrophoneError, VoiceSession } from "../../src/index.js";
// example:start
import { expect, test } from "vitest";
import { fakeSession } from "../../src/testing/index.js";
import type { InterruptionEvent, SessionState } from "../../src/index.js";

test("a scripted conversation: the user asks, the bot answers, the user barges in, history keeps what was heard", async () => {
  const { session, user, player, llm, waitForState, waitForReply } = fakeSession({
    instructions: "Be brief.",
    replies: ["Sure, I can help. What do you need?", "Okay."],
  });
  const states: SessionState[] = [];
  const finals: string[] = [];
  const interruptions: InterruptionEvent[] = [];
  session.on("state", (e) => states.push(e.state));
  session.on("transcript", (e) => e.final && finals.push(`${e.role}: ${e.text}`));
  session.on("interruption", (e) => interruptions.push(e));

  await session.start(); // no AudioContext, microphone or VAD worker: the fakes stand in
  expect(session.state).toBe("listening");

  await user.says("can you help me");
  expect(finals).toContain("user: can you help me");
  await waitForState("bot_speaking");
  expect(llm.requests[0].messages).toEqual([
    { role: "system", content: "Be brief." },
    { role: "user", content: "can you help me" },
  ]);

  // The user hears one second of the reply (the fake TTS speaks 0.25 s a word), then talks over it.
  await waitForReply();
  await player.play(1000);
  await user.says("wait a moment");
  expect(interruptions).toMatchObject([{ reason: "speech", heardText: "Sure, I can help.", unheardText: "What do you need?", heardMs: 1000 }]);

  // The interruption was the user's next turn: the bot answers it, and the user hears all of it.
  await waitForState("bot_speaking");
  await player.play();
  expect(session.state).toBe("listening");
  expect(session.history).toEqual([
    { id: "u1", role: "user", text: "can you help me" },
    { id: "a2", role: "assistant", text: "Sure, I can help.", interrupted: true, unheardText: "What do you need?" },
    { id: "u3", role: "user", text: "wait a moment" },
    { id: "a4", role: "assistant", text: "Okay.", interrupted: false, unheardText: "" },
  ]);

  await session.stop();
  expect(states).toEqual([
    "connecting",
    "listening",
    "user_speaking",
    "bot_thinking",
    "bot_speaking",
    "user_speaking", // the barge-in
    "bot_thinking",
    "bot_speaking",
    "listening",
    "idle",
  ]);
});
// example:end

test("docs/testing.md shows the test above as it runs, with the package's import names", () => {
  const here = readFileSync(fileURLToPath(import.meta.url), "utf8");
  const example = here.slice(here.indexOf("// example:start\n") + 17, here.indexOf("// example:end"));
  const asAnAppWritesIt = example.replace('"../../src/testing/index.js"', '"bargein/testing"').replace('"../../src/index.js"', '"bargein"');
  const doc = readFileSync(fileURLToPath(new URL("../../docs/testing.md", import.meta.url)), "utf8");
  const shown = doc.match(/<!-- example -->\n```ts\n([\s\S]*?)```/)?.[1];
  expect(shown, "docs/testing.md: the ```ts block after <!-- example -->").toBe(asAnAppWritesIt);
});

describe("the public fakes, scene by scene", () => {
  test("a cough while the bot speaks is a VAD misfire: playback pauses, goes on from where it stopped, and nothing is interrupted", async () => {
    const { session, user, player, waitForState, waitForReply } = fakeSession({ replies: ["one two three four"] });
    const interruptions: InterruptionEvent[] = [];
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    await user.says("hello");
    await waitForState("bot_speaking");
    await waitForReply();
    expect(await player.play(500)).toBeCloseTo(0.5, 9);
    await user.noise(100); // under bargeIn.minSpeechMs (200): a misfire
    expect(player.paused).toBe(false);
    expect(session.state).toBe("bot_speaking");
    expect(await player.play()).toBeCloseTo(0.5, 9); // the rest: 1 s of reply in all, none of it lost
    expect(interruptions).toEqual([]);
    expect(session.history[1]).toEqual({ id: "a2", role: "assistant", text: "one two three four", interrupted: false, unheardText: "" });
    await session.stop();
  });

  test("a word shorter than bargeIn.minSpeechMs confirms a barge-in by the STT (reason 'words'); the VAD's misfire ends the turn it began, with no STT pause", async () => {
    const { session, user, player, waitForState, waitForReply } = fakeSession({ replies: ["one two three four", "Yes?"], bargeIn: { minSpeechMs: 300 } });
    const reasons: string[] = [];
    session.on("interruption", (e) => reasons.push(e.reason));
    await session.start();
    await user.says("hello there"); // 500 ms: real speech
    await waitForState("bot_speaking");
    await waitForReply();
    await player.play(600);
    await user.says("stop"); // 250 ms: the word comes before the VAD's real start would
    expect(reasons).toEqual(["words"]);
    expect(session.history[1]).toMatchObject({ text: "one two", interrupted: true });
    // The misfire ended the turn (its flush under way); no stt.pause() is needed.
    expect(session.state).not.toBe("user_speaking");
    await waitForState("bot_speaking");
    expect(session.history[2]).toEqual({ id: "u3", role: "user", text: "stop" });
    await session.stop();
  });

  test("with barge-in off, the bot plays on while the user talks over it", async () => {
    const { session, user, player, waitForState, waitForReply } = fakeSession({ replies: ["one two three four"], bargeIn: { enabled: false } });
    const interruptions: InterruptionEvent[] = [];
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    await user.says("hello");
    await waitForState("bot_speaking");
    await waitForReply();
    await player.play(250);
    await user.says("excuse me"); // two words: 0.5 s on the clock, and the player renders through it
    expect(player.renderedSeconds()).toBeCloseTo(0.75, 9);
    expect(interruptions).toEqual([]);
    expect(session.state).toBe("bot_speaking");
    await session.stop();
  });

  test("a microphone unplugged mid-conversation is a fatal MicrophoneError: the session stops and keeps the transcript", async () => {
    const { session, user, waitForState } = fakeSession();
    const errors: Array<{ error: Error; fatal: boolean }> = [];
    session.on("error", (e) => errors.push(e));
    await session.start();
    await user.says("remember the milk");
    user.micEnded();
    await waitForState("idle");
    expect(errors).toHaveLength(1);
    expect(errors[0].fatal).toBe(true);
    expect(errors[0].error).toBeInstanceOf(MicrophoneError);
    expect(session.history[0]).toEqual({ id: "u1", role: "user", text: "remember the milk" });
  });

  test("on a running clock the audio plays by itself, at real time × speed", async () => {
    const clock = new FakeClock();
    clock.run({ speed: 20 });
    const { session, user, player, waitForState } = fakeSession({ replies: ["one two three four"], clock });
    try {
      await session.start();
      const startedAt = performance.now();
      await user.says("hello"); // 250 ms of speech: about 12 ms of real time
      await waitForState("bot_speaking");
      await player.play(); // 1 s of reply: about 50 ms of real time
      expect(session.state).toBe("listening");
      expect(clock.now).toBeGreaterThanOrEqual(1250);
      expect(performance.now() - startedAt).toBeLessThan(1000);
    } finally {
      clock.pause();
      await session.stop();
    }
  });

  test("FakePlayer keeps the real player's rules: stale audio is dropped, a pause holds only its own generation, `ended` comes once an ended generation has played", async () => {
    const player = new FakePlayer();
    const ended: number[] = [];
    player.on("ended", (e) => ended.push(e.generation));
    player.setGeneration(1);
    player.write(new Float32Array(24000), { sampleRate: 24000, generation: 1 }); // 1 s
    player.write(new Float32Array(24000), { sampleRate: 24000, generation: 0 }); // stale: dropped
    expect(player.writtenSeconds).toBe(1);
    player.pause(0); // a stale token: holds nothing
    player.clock.advance(250);
    expect(player.renderedSeconds()).toBe(0.25);
    player.pause(1);
    player.clock.advance(250);
    expect(player.renderedSeconds()).toBe(0.25); // paused: nothing rendered
    player.resume(0); // another token's resume lifts nothing
    expect(player.paused).toBe(true);
    player.resume(1);
    player.endGeneration(1);
    await player.play();
    expect(player.renderedSeconds()).toBe(1);
    expect(ended).toEqual([1]);
    player.pause(1);
    player.write(new Float32Array(2400), { sampleRate: 24000, generation: 2 }); // a newer generation starts unpaused
    expect(player.paused).toBe(false);
  });

  test("misuse fails with errors that name the option or the step", async () => {
    const stt = fakeStt();
    const providers = { stt: stt.provider, llm: fakeLlm().provider, tts: fakeTts().provider };
    expect(() => new VoiceSession({ ...providers, components: {} as never })).toThrow(/`components` must be a function/);
    const partial = new VoiceSession({ ...providers, components: async () => ({ player: new FakePlayer() }) as never });
    await expect(partial.start()).rejects.toThrow(/the `components` factory returned no `vad`, `capture`, `dispose`/);
    expect(partial.state).toBe("idle");
    const audio = fakeAudio({ stt });
    await expect(audio.user.word("hi")).rejects.toThrow(/FakeUser.word\(\): the user is not speaking; call startSpeaking\(\) first/);
    const first = new VoiceSession({ ...providers, components: audio.components });
    const second = new VoiceSession({ ...providers, components: audio.components });
    await first.start();
    await expect(second.start()).rejects.toThrow(/fakeAudio: its components are already in use by a started session/);
    await first.stop();
    const third = new VoiceSession({ ...providers, components: audio.components });
    await third.start(); // released by the first session's stop: usable again
    expect(audio.starts).toBe(2);
    await third.stop();
    expect(audio.disposals).toBe(2);
  });
});
