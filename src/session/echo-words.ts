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

/** How far an STT's word start may lead the bot's sound it heard, in seconds. */
const WORD_LEAD_S = 0.3;

/** Samples of the playing reply's position kept (one per mic frame, ~10–20 ms apart: 5–10 s). */
const POSITIONS = 512;

/**
 * What the bot said recently: the reply playing now, or the last one for as
 * long as the STT may still be returning its words (`windowS` after it ended).
 */
export class RecentBotWords {
  readonly #windowS: number;
  #last: { words: readonly TimedWord[]; renderedS: number; endedAt: number } | undefined;
  /** The playing reply's rendered seconds over time (ms, same clock as `now`): a ring, oldest first from #head. */
  readonly #times = new Float64Array(POSITIONS);
  readonly #positions = new Float64Array(POSITIONS);
  #head = 0;
  #count = 0;

  constructor(windowMs: number) {
    this.#windowS = Math.max(0, windowMs) / 1000;
  }

  /**
   * The playing reply had rendered `renderedS` seconds at `now` (ms). Sampled
   * as the mic's frames arrive, so a word is judged against where the reply
   * was when the word was spoken. Reading it back from the wall clock alone
   * (rendered now less the time since) is wrong once playback paused in
   * between: a word spoken during a barge-in's pause then seemed to come
   * before the reply began, and the bot's "interesting", 2 s late, became a
   * user turn (test/browser/echo.spec.ts under load).
   */
  rendered(now: number, renderedS: number): void {
    const at = (this.#head + this.#count) % POSITIONS;
    this.#times[at] = now;
    this.#positions[at] = renderedS;
    if (this.#count < POSITIONS) this.#count++;
    else this.#head = (this.#head + 1) % POSITIONS;
  }

  /** A new reply starts: the positions of the last one no longer apply. */
  replyStarted(): void {
    this.#head = 0;
    this.#count = 0;
  }

  /** Where the playing reply was at `at` (ms): the latest sample at or before it, or undefined when none is held. */
  renderedAt(at: number): number | undefined {
    let found: number | undefined;
    for (let i = 0; i < this.#count; i++) {
      const k = (this.#head + i) % POSITIONS;
      if (this.#times[k] > at) break;
      found = this.#positions[k];
    }
    return found;
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
   * became user turns the bot answered ("out today", "today", in
   * `npm run bench -- echo` on a loaded machine).
   */
  judge(text: string, now: number, playing: { words: readonly TimedWord[]; renderedS: number } | undefined, spokenAt?: number): { echo: boolean; nearBot: boolean } {
    const at = spokenAt !== undefined && spokenAt <= now ? spokenAt : now;
    // What the bot had rendered when the word was spoken: from the samples, else (none that old) from the wall clock.
    const renderedS = playing ? (this.renderedAt(at) ?? Math.max(0, playing.renderedS - (now - at) / 1000)) : 0;
    const then = playing ? { words: playing.words, renderedS } : undefined;
    // An STT's word start can lead its sound (pocketsphinx counts the silence before it): a bot
    // word that began just after the position at `at` was still the one heard ("that", the
    // reply's first word, 0.26 s in, became a user turn).
    const lenient = then && { words: then.words, renderedS: then.renderedS + WORD_LEAD_S };
    return { echo: this.isEcho(text, at, lenient), nearBot: this.nearBot(at, then) };
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
