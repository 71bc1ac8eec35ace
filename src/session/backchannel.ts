/**
 * The backchannel policy: while the bot speaks, a listener says "yeah",
 * "mm-hmm", "okay", "right". Those are not interruptions. With the policy on,
 * speech over the bot still pauses it at once (pause early), but what confirms
 * the interruption changes (confirm late):
 * - an interrupting word ("wait", "stop", "no": `interruptWords`) confirms at
 *   once, and so do `minWords` words that are not backchannels;
 * - at the VAD's end of the speech, having been voiced for `maxMs` (its last
 *   speech frame less its onset) confirms, whatever its words;
 * - shorter speech with none of those lets the reply resume where it paused,
 *   with nothing lost and no user turn, and the session emits `backchannel`
 *   instead of `interruption`: at once when its words were all backchannels,
 *   else once `wordWaitMs` has passed with no word that confirms. A word or
 *   two that is neither, in speech that short, is most often a backchannel
 *   the STT misheard: on the reference STT, flite's "sure" came as "share",
 *   "got it" as "go to", "yeah" as "you have".
 * Off by default: any word and `minSpeechMs` of speech confirm, as before.
 *
 * Pure: no clock, no I/O; the turn machine calls it, the session parses the
 * options with it.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";

/**
 * `bargeIn.backchannels`: true for the defaults, or these.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface BackchannelOptions {
  /**
   * Words that are a listener's feedback, not an interruption. Compared with
   * the STT's words lower-cased, letters and digits only ("Mm-hmm." is "mmhmm");
   * a phrase ("i see") counts word by word. Default: BACKCHANNEL_WORDS_EN.
   */
  words?: readonly string[];
  /**
   * Words that interrupt at once ("wait", "stop", "no"), compared as `words`
   * are; a phrase counts word by word, so "hold on" makes "hold" and "on"
   * interrupt. Default: INTERRUPT_WORDS_EN.
   */
  interruptWords?: readonly string[];
  /**
   * This many words over the bot that are not backchannels interrupt, whatever they are.
   * @defaultValue 3
   */
  minWords?: number;
  /**
   * Speech over the bot voiced this long (ms, its onset to its last speech frame) interrupts at its end, whatever its words.
   * @defaultValue 700
   */
  maxMs?: number;
  /**
   * After shorter speech over the bot ends with no word yet, how long (ms) to wait for one before resuming.
   * @defaultValue 700
   */
  wordWaitMs?: number;
}

/** English backchannels (LiveKit's and Pipecat's lists are of this kind). Not "no", "wait", "stop": those interrupt. */
export const BACKCHANNEL_WORDS_EN: readonly string[] = [
  "yeah", "yes", "yep", "yup", "ok", "okay", "right", "sure", "alright", "uh", "huh", "uhhuh", "mm", "mmm", "hmm",
  "mhm", "mmhmm", "hm", "ah", "aha", "oh", "i see", "got it", "cool", "nice", "great", "wow", "really", "true",
];

/**
 * English words that interrupt at once: a listener who says them wants the
 * floor. Not "on" or "me" of "hold on" and "excuse me": their first word is
 * enough, and alone they are not.
 */
export const INTERRUPT_WORDS_EN: readonly string[] = [
  "wait", "stop", "no", "nope", "hold", "hang", "excuse", "sorry", "pardon", "actually", "but", "hey", "what", "repeat", "enough", "listen",
];

/** The `backchannel` event: speech over the bot that did not interrupt it. */
export interface BackchannelEvent {
  /** The STT's words for it (empty when none came in time: a hum, a laugh). */
  words: readonly string[];
  /** How long it was voiced, from its onset to its last speech frame (not the VAD's end, `redemptionMs` later), in ms. */
  speechMs: number;
}

export interface BackchannelPolicy {
  readonly words: ReadonlySet<string>;
  readonly interruptWords: ReadonlySet<string>;
  readonly minWords: number;
  readonly maxMs: number;
  readonly wordWaitMs: number;
}

/** What the policy compares: lower case, letters and digits only. */
export function normaliseWord(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/** The policy for `bargeIn.backchannels`, or undefined when it is off. Throws a ConfigError naming a bad value. */
export function backchannelPolicyOf(option: boolean | BackchannelOptions | undefined): BackchannelPolicy | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  if (typeof given !== "object" || given === null) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels\` must be true, false or an object, not ${JSON.stringify(option)}`);
  const words = wordSet(given.words ?? BACKCHANNEL_WORDS_EN, "words");
  const interruptWords = wordSet(given.interruptWords ?? INTERRUPT_WORDS_EN, "interruptWords");
  const maxMs = given.maxMs ?? DEFAULTS.bargeIn.backchannels.maxMs;
  const wordWaitMs = given.wordWaitMs ?? DEFAULTS.bargeIn.backchannels.wordWaitMs;
  for (const [name, value] of [["maxMs", maxMs], ["wordWaitMs", wordWaitMs]] as const) {
    if (!(Number.isFinite(value) && value >= 0)) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels.${name}\` must be a number of ms ≥ 0, not ${value}`);
  }
  const minWords = given.minWords ?? DEFAULTS.bargeIn.backchannels.minWords;
  if (!(Number.isInteger(minWords) && minWords >= 1)) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels.minWords\` must be a whole number ≥ 1, not ${minWords}`);
  return { words, interruptWords, minWords, maxMs, wordWaitMs };
}

/** The option's phrases as the normalised words the policy compares. */
function wordSet(phrases: unknown, name: string): ReadonlySet<string> {
  if (!Array.isArray(phrases) || phrases.some((w) => typeof w !== "string")) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels.${name}\` must be an array of strings`);
  return new Set(tokensOf(phrases as string[]));
}

/** Phrases as the words the policy compares: word by word, normalised, none empty. */
function tokensOf(phrases: readonly string[]): string[] {
  return phrases.flatMap((phrase) => phrase.split(/\s+/).map(normaliseWord)).filter((w) => w.length > 0);
}

/** True when the STT's word is only a listener's feedback. A word that normalises to nothing (punctuation) is too. */
export function isBackchannel(policy: BackchannelPolicy, text: string): boolean {
  return tokensOf([text]).every((w) => policy.words.has(w));
}

/**
 * What the words heard over the bot so far say: `interrupt` (an interrupting
 * word, or `minWords` that are not backchannels), `backchannel` (all of them
 * are, and there is one at least), or `unsure` (none yet, or too few others).
 */
export function wordsVerdict(policy: BackchannelPolicy, words: readonly string[]): "interrupt" | "backchannel" | "unsure" {
  const tokens = tokensOf(words);
  const others = tokens.filter((w) => !policy.words.has(w));
  if (others.some((w) => policy.interruptWords.has(w)) || others.length >= policy.minWords) return "interrupt";
  return tokens.length > 0 && others.length === 0 ? "backchannel" : "unsure";
}
