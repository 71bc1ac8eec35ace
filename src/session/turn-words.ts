/**
 * The turn machine's word transitions: what an STT word does (`heardWord`:
 * dropped as echo, owed to the last turn, held for real speech to vouch for
 * it, held by the backchannel wait, or the user's, confirming a barge-in),
 * and real speech vouching for the words held until then (`vouch`). Pure.
 */
import { isBackchannel } from "./backchannel.js";
import { backchannelWait, misfiredInterrupt, waitForWord, withWait } from "./backchannel-wait.js";
import { spokenBefore, splitHeld, vouchedAt, type HeldWord } from "./held-words.js";
import { andThen, confirm, owes, same, vadSpeaking } from "./turn-steps.js";
import type { TurnConfig, TurnEffect, TurnState, TurnStep } from "./turn-types.js";

/** An STT word as the machine takes it (the `word` event's data). */
export interface Word {
  readonly text: string;
  readonly at: number;
  readonly spokenAt?: number;
  readonly echo?: boolean;
  readonly nearBot?: boolean;
}

/**
 * An STT word: the `word` event, and each held word real speech vouches for.
 * Three questions, in order: is it the user's at all (`notTheUsers`)? Does
 * the backchannel policy hold it while the barge-in is decided
 * (`heldOverBot`)? Else it is the user's (`usersWord`).
 */
export function heardWord(s: TurnState, e: Word, config: TurnConfig): TurnStep {
  return notTheUsers(s, e, config) ?? heldOverBot(s, e, config) ?? usersWord(s, e, config);
}

/** The bot's echo, a word owed to the last turn, or a word over the bot that waits for real speech to vouch for it. */
function notTheUsers(s: TurnState, e: Word, config: TurnConfig): TurnStep | undefined {
  // The bot's own voice heard back: neither a confirmation nor the user's turn.
  if (e.echo) return echo(s, e.text);
  // Owed to the last turn (its flush timed out; the STT's marker has not come back): its audio came
  // before that turn ended, so not from this reply, even when the reply is audible by the time it comes.
  if (owes(s.stt)) return { state: s, effects: [{ kind: "lateUserWord", text: e.text }] };
  // Words over the bot's audio wait for real speech: with the echo guard (its
  // echo, misheard), or with confirmByWords off (a burst that will misfire).
  const overBot = (e.nearBot && config.vouchWordsMs !== undefined) || (!config.confirmByWords && s.phase === "bot_speaking");
  if (!overBot) return undefined;
  // Except an interrupting word of a burst the VAD called a misfire ("stop"), awaited by the backchannel policy.
  if (!vouched(s, e.at, config, e.spokenAt) && !misfiredInterrupt(s, e.text, config.backchannel)) {
    const { kept, expired } = splitHeldWords(s.heldWords, e.at, config);
    return { state: { ...s, heldWords: [...kept, { text: e.text, at: e.at, spokenAt: e.spokenAt }] }, effects: expired };
  }
  // Leading the user's turn, but spoken before the utterance began, while the bot was audible: the
  // bot's echo, however late it arrived. (Once the turn has words, a pause may start a new utterance
  // while the last one's words are still arriving: those stay the user's.)
  return s.userWords.length === 0 && spokenBefore(e, s.voice.startAt) ? echo(s, e.text) : undefined;
}

/** With the backchannel policy: a word of the speech over the bot, held until the barge-in is decided, or a late backchannel. */
function heldOverBot(s: TurnState, e: Word, config: TurnConfig): TurnStep | undefined {
  const policy = config.backchannel;
  if (!policy) return undefined;
  const wait = backchannelWait(s);
  // Held until the barge-in is decided (backchannel-wait.ts); "confirm" goes on as the user's word.
  if (wait) {
    const held = waitForWord(s, wait, policy, e.text);
    return held === "confirm" ? undefined : held;
  }
  // A late backchannel, its pause already resumed: not the user's turn either.
  return isBackchannel(policy, e.text) && s.phase === "bot_speaking" && !vadSpeaking(s) ? same(s) : undefined;
}

/** A word that is the user's: the held backchannel words go before it, into the user's words, and it may confirm a barge-in. */
function usersWord(s: TurnState, e: Word, config: TurnConfig): TurnStep {
  const wait = backchannelWait(s);
  const base = wait?.words.length ? withWait(s, { ...wait, words: [] }) : s;
  const userWords = [...s.userWords, ...(wait?.words ?? []), e.text];
  const heard: TurnStep = { state: { ...base, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
  return config.confirmByWords ? andThen(heard, (next) => confirm(next, "words", e.at, config)) : heard;
}

/**
 * Real speech at `at`: the held words still in the window become the user's,
 * in order (then as any word would). Not those that came before the
 * utterance began: the STT cannot have heard it yet, so they are echo.
 */
export function vouch(s: TurnState, at: number, config: TurnConfig): TurnStep {
  if (s.heldWords.length === 0) return same(s);
  const startAt = s.voice.startAt;
  const inWindow = splitHeldWords(s.heldWords, at, config);
  const kept = inWindow.kept.filter((w) => w.at >= startAt && !(s.userWords.length === 0 && spokenBefore(w, startAt)));
  const early: TurnEffect[] = inWindow.kept.filter((w) => !kept.includes(w)).map((w) => ({ kind: "echoWord", text: w.text }));
  let step: TurnStep = { state: { ...s, heldWords: [] }, effects: [...inWindow.expired, ...early] };
  for (const w of kept) step = andThen(step, (next) => heardWord(next, { text: w.text, at: w.at }, config));
  return step;
}

function echo(s: TurnState, text: string): TurnStep {
  return { state: s, effects: [{ kind: "echoWord", text }] };
}

/** True when real speech vouches for a word that came at `at`, spoken at `spokenAt` (held-words.ts). */
function vouched(s: TurnState, at: number, config: TurnConfig, spokenAt?: number): boolean {
  const speech = { realSpeech: s.voice.kind === "real", realSpeechAt: s.voice.realAt, speechStartAt: s.voice.startAt };
  return vouchedAt(speech, at, config.vouchWordsMs, spokenAt);
}

/** Held words still within the window at `at`, and an echoWord effect for each one past it. */
function splitHeldWords(held: readonly HeldWord[], at: number, config: TurnConfig): { kept: readonly HeldWord[]; expired: TurnEffect[] } {
  const { kept, expired } = splitHeld(held, at, config.vouchWordsMs);
  return { kept, expired: expired.map((text) => ({ kind: "echoWord", text })) };
}
