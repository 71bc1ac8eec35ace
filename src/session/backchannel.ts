/**
 * The backchannel policy: while the bot speaks, a listener says "yeah",
 * "mm-hmm", "okay", "right". Those are not interruptions. With the policy on,
 * speech over the bot still pauses it at once (pause early), but what confirms
 * the interruption changes (confirm late):
 * - a word that is not a backchannel ("wait", "stop", "no") confirms at once;
 * - at the VAD's end of the speech, having been voiced for `maxMs` (its last
 *   speech frame less its onset) confirms, whatever its words;
 * - shorter speech whose words were all backchannels lets the reply resume
 *   where it paused, with nothing lost and no user turn, and the session
 *   emits `backchannel` instead of `interruption`; with no word yet, it waits
 *   `wordWaitMs` for one.
 * Off by default: any word and `minSpeechMs` of speech confirm, as before.
 *
 * Pure: no clock, no I/O; the turn machine calls it, the session parses the
 * options with it.
 */
import { ConfigError } from "../errors.js";

/** `bargeIn.backchannels`: true for the defaults, or these. */
export interface BackchannelOptions {
  /**
   * Words that are a listener's feedback, not an interruption. Compared with
   * the STT's words lower-cased, letters and digits only ("Mm-hmm." is "mmhmm");
   * a phrase ("i see") counts word by word. Default: BACKCHANNEL_WORDS_EN.
   */
  words?: readonly string[];
  /** Speech over the bot voiced this long (ms, its onset to its last speech frame) interrupts at its end, whatever its words. Default 700. */
  maxMs?: number;
  /** After shorter speech over the bot ends with no word yet, how long (ms) to wait for one before resuming. Default 700. */
  wordWaitMs?: number;
}

/** English backchannels (LiveKit's and Pipecat's lists are of this kind). Not "no", "wait", "stop": those interrupt. */
export const BACKCHANNEL_WORDS_EN: readonly string[] = [
  "yeah", "yes", "yep", "yup", "ok", "okay", "right", "sure", "alright", "uh", "huh", "uhhuh", "mm", "mmm", "hmm",
  "mhm", "mmhmm", "hm", "ah", "aha", "oh", "i see", "got it", "cool", "nice", "great", "wow", "really", "true",
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
  readonly maxMs: number;
  readonly wordWaitMs: number;
}

export const BACKCHANNEL_DEFAULTS = { maxMs: 700, wordWaitMs: 700 };

/** What the policy compares: lower case, letters and digits only. */
export function normaliseWord(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/** The policy for `bargeIn.backchannels`, or undefined when it is off. Throws a ConfigError naming a bad value. */
export function backchannelPolicyOf(option: boolean | BackchannelOptions | undefined): BackchannelPolicy | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  if (typeof given !== "object" || given === null) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels\` must be true, false or an object, not ${JSON.stringify(option)}`);
  const words = given.words ?? BACKCHANNEL_WORDS_EN;
  if (!Array.isArray(words) || words.some((w) => typeof w !== "string")) throw new ConfigError("VoiceSession: `bargeIn.backchannels.words` must be an array of strings");
  const maxMs = given.maxMs ?? BACKCHANNEL_DEFAULTS.maxMs;
  const wordWaitMs = given.wordWaitMs ?? BACKCHANNEL_DEFAULTS.wordWaitMs;
  for (const [name, value] of [["maxMs", maxMs], ["wordWaitMs", wordWaitMs]] as const) {
    if (!(Number.isFinite(value) && value >= 0)) throw new ConfigError(`VoiceSession: \`bargeIn.backchannels.${name}\` must be a number of ms ≥ 0, not ${value}`);
  }
  const tokens = new Set(words.flatMap((phrase) => phrase.split(/\s+/).map(normaliseWord)).filter((w) => w.length > 0));
  return { words: tokens, maxMs, wordWaitMs };
}

/** True when the STT's word is only a listener's feedback. A word that normalises to nothing (punctuation) is too. */
export function isBackchannel(policy: BackchannelPolicy, text: string): boolean {
  return text.split(/\s+/).every((w) => {
    const word = normaliseWord(w);
    return word.length === 0 || policy.words.has(word);
  });
}
