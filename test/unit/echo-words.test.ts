/** Echo words: the bot's own voice heard back by the STT is told apart by what the bot just rendered. Pure, no timers. */
import { expect, test } from "vitest";
import { isRecentBotWord, normalizeWord, RecentBotWords } from "../../src/session/echo-words.js";
import { INITIAL_TURN_STATE, step } from "../../src/session/turn-machine.js";

const words = [
  { text: "Hello,", startS: 0, stopS: 0.4 },
  { text: "there", startS: 0.4, stopS: 0.8 },
  { text: "friend.", startS: 2.0, stopS: 2.5 },
];

test("a word matches when the bot rendered it within the window, case and punctuation aside", () => {
  expect(normalizeWord("Hello,")).toBe("hello");
  expect(isRecentBotWord("hello", words, 0.5, 1.5)).toBe(true);
  expect(isRecentBotWord("HELLO", words, 1.8, 1.5)).toBe(true); // stopped at 0.4, 1.4 s ago
  expect(isRecentBotWord("hello", words, 2.2, 1.5)).toBe(false); // 1.8 s ago: too long
  expect(isRecentBotWord("friend", words, 1.0, 1.5)).toBe(false); // not rendered yet
  expect(isRecentBotWord("wait", words, 0.5, 1.5)).toBe(false);
  expect(isRecentBotWord("...", words, 0.5, 1.5)).toBe(false);
});

test("after a reply ends its words stay echo for what is left of the window, then are the user's", () => {
  const recent = new RecentBotWords(1500);
  recent.ended(words, 2.5, 10_000);
  expect(recent.isEcho("friend", 10_500, undefined)).toBe(true);
  expect(recent.isEcho("there", 10_500, undefined)).toBe(false); // 1.7 s before the end + 0.5 s since
  expect(recent.isEcho("friend", 11_600, undefined)).toBe(false);
  expect(recent.isEcho("stop", 10_100, { words: [{ text: "stop", startS: 0, stopS: 0.3 }], renderedS: 0.3 })).toBe(true);
});

test("a late STT word is judged when it was spoken, not when it arrived: an STT lag past the window still leaves the bot's words echo", () => {
  const recent = new RecentBotWords(1500);
  recent.ended(words, 2.5, 10_000);
  // "friend" arrives 2.5 s after the reply ended (a lagging STT) but was spoken 0.3 s after it.
  expect(recent.judge("friend", 12_500, undefined)).toEqual({ echo: false, nearBot: false });
  expect(recent.judge("friend", 12_500, undefined, 10_300)).toEqual({ echo: true, nearBot: true });
  // Spoken 2 s after the end, it is the user's whenever it arrives.
  expect(recent.judge("friend", 12_500, undefined, 12_000)).toEqual({ echo: false, nearBot: false });
  // While a reply plays: the word spoken 1 s ago is checked against what had been rendered then (0.5 s of audio)…
  const playing = { words: [{ text: "stop", startS: 0, stopS: 0.3 }, { text: "now", startS: 1.2, stopS: 1.5 }], renderedS: 1.5 };
  expect(recent.judge("now", 20_000, playing, 19_000).echo).toBe(false);
  expect(recent.judge("stop", 20_000, playing, 19_000).echo).toBe(true);
  // …and a spoken time later than the arrival (clock skew) counts as the arrival.
  expect(recent.judge("now", 20_000, playing, 21_000).echo).toBe(true);
});

test("a word spoken before a pause of playback is judged where the reply was then, not by the wall clock (seen: the bot's own word became a user turn)", () => {
  const recent = new RecentBotWords(1500);
  const reply = { words: [{ text: "That", startS: 0, stopS: 0.2 }, { text: "is", startS: 0.2, stopS: 0.4 }, { text: "interesting.", startS: 0.45, stopS: 1.1 }] };
  // The reply plays from 15 800 ms; at 16 400 ms (0.6 s in) a barge-in pauses it for 0.7 s; then it plays on.
  recent.replyStarted();
  for (let t = 15_800; t <= 19_000; t += 20) {
    const played = t <= 16_400 ? t - 15_800 : t <= 17_100 ? 600 : t - 17_100 + 600;
    recent.rendered(t, played / 1000);
  }
  expect(recent.renderedAt(16_450)).toBeCloseTo(0.6, 6);
  // "interesting", spoken at 16 460 ms while 0.6 s was rendered, arrives 2 s later with 1.9 s rendered.
  const now = { words: reply.words, renderedS: 1.9 };
  expect(recent.judge("interesting", 18_460, now, 16_460)).toEqual({ echo: true, nearBot: true });
  // An STT's word start leads its sound: "interesting" (from 0.45 s) heard with its start stamped at 0.3 s rendered.
  expect(recent.judge("interesting", 18_460, now, 16_100).echo).toBe(true);
  expect(recent.renderedAt(16_100)).toBeCloseTo(0.3, 6);
  // Without the samples (a new reply, nothing sampled yet), the wall clock put it before the reply began.
  const unsampled = new RecentBotWords(1500);
  expect(unsampled.judge("interesting", 18_460, now, 16_460)).toEqual({ echo: false, nearBot: false });
});

test("the turn machine drops an echo word: no user word, no confirmation of a pending barge-in", () => {
  const config = { bargeInEnabled: true, confirmByWords: true, pauseThreshold: 0.8 };
  const speaking = { ...INITIAL_TURN_STATE, phase: "bot_speaking" as const, generation: 1, reply: { kind: "playing" as const, generation: 1, audible: true } };
  const paused = step(speaking, { kind: "speechStart", pausedByWorker: true, at: 0 }, config).state;
  const echo = step(paused, { kind: "word", text: "hello", at: 50, echo: true }, config);
  expect(echo.effects).toEqual([{ kind: "echoWord", text: "hello" }]);
  expect(echo.state.userWords).toEqual([]);
  expect(echo.state.bargeIn.kind).toBe("pending");
  const user = step(paused, { kind: "word", text: "wait", at: 50, echo: false }, config);
  expect(user.effects.map((e) => e.kind)).toContain("announceInterruption");
});
