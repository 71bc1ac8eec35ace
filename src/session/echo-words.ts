/**
 * Words of the bot's own voice, heard back by the STT through open speakers.
 * The STT hears the raw microphone, so while the bot speaks (and for as long
 * as the STT lags behind it) it may return the bot's words as if the user
 * said them. A word that matches one the bot rendered within the last
 * `windowS` seconds of its audio is taken for echo: it neither confirms a
 * barge-in nor becomes a user turn. Pure: no clock, no DOM.
 */
import type { TimedWord } from "./history.js";

/** Lower case, letters, digits and apostrophes only: "Hello," → "hello". */
export function normalizeWord(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}']+/gu, "");
}

/**
 * True when `text` is one of `words` (a reply's TTS timings, in seconds of
 * its audio) that overlap the span from `renderedS − windowS` to `renderedS`:
 * what the user could have heard in the last `windowS` seconds.
 */
export function isRecentBotWord(text: string, words: readonly TimedWord[], renderedS: number, windowS: number): boolean {
  const wanted = normalizeWord(text);
  if (!wanted) return false;
  const from = renderedS - windowS;
  for (const word of words) {
    if (word.startS > renderedS) break;
    if (word.stopS >= from && normalizeWord(word.text) === wanted) return true;
  }
  return false;
}

/**
 * What the bot said recently: the reply playing now, or the last one for as
 * long as the STT may still be returning its words (`windowS` after it ended).
 */
export class RecentBotWords {
  readonly #windowS: number;
  #last: { words: readonly TimedWord[]; renderedS: number; endedAt: number } | undefined;

  constructor(windowMs: number) {
    this.#windowS = Math.max(0, windowMs) / 1000;
  }

  /** A reply stopped playing at `renderedS` seconds of its audio, at `now` (ms). */
  ended(words: readonly TimedWord[], renderedS: number, now: number): void {
    this.#last = { words, renderedS, endedAt: now };
  }

  /** Was the bot audible at `now`, or within the window before it? Then its echo may still reach the STT. */
  nearBot(now: number, playing: { renderedS: number } | undefined): boolean {
    if (playing && playing.renderedS > 0) return true;
    return this.#last !== undefined && now - this.#last.endedAt < this.#windowS * 1000;
  }

  /**
   * Both verdicts on an STT word, for the turn machine's `word` event.
   * `spokenAt` (ms, same clock as `now`): when the word's audio was captured,
   * when the STT link knows it. The word is then judged at that moment, not on
   * its arrival: an STT that lags (a loaded machine, a slow service) returns
   * the bot's last words more than the window after the bot stopped, and they
   * became user turns the bot answered ("out today", "today": 5 in 30
   * replies in `npm run bench -- echo` at load 3–5).
   */
  judge(text: string, now: number, playing: { words: readonly TimedWord[]; renderedS: number } | undefined, spokenAt?: number): { echo: boolean; nearBot: boolean } {
    const at = spokenAt !== undefined && spokenAt <= now ? spokenAt : now;
    // What the bot had rendered when the word was spoken.
    const then = playing ? { words: playing.words, renderedS: Math.max(0, playing.renderedS - (now - at) / 1000) } : undefined;
    return { echo: this.isEcho(text, at, then), nearBot: this.nearBot(at, then) };
  }

  /** Is `text` the bot's own voice heard back? `playing`: the reply playing now, if any. */
  isEcho(text: string, now: number, playing: { words: readonly TimedWord[]; renderedS: number } | undefined): boolean {
    if (playing && isRecentBotWord(text, playing.words, playing.renderedS, this.#windowS)) return true;
    const last = this.#last;
    if (!last) return false;
    const left = this.#windowS - (now - last.endedAt) / 1000;
    return left > 0 && isRecentBotWord(text, last.words, last.renderedS, left);
  }
}
