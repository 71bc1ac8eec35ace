/**
 * The end of the user's turn by its words: after the VAD's silence, a turn
 * whose last word leaves it unfinished ("I want to go to…", "and…", "um…")
 * is held open a while longer for the user to go on; one that reads as
 * finished ends at once. So the VAD's silence (`vad.redemptionMs`) can be
 * short, answering a finished question sooner, while a hesitation after
 * "to" or "and" does not split the user's words into two turns.
 *
 * The words judged are the STT's, after its flush at the VAD's end of speech
 * (so the last word is in), lower-cased, letters and digits only. Only the
 * last word counts: a list of English function words, fillers and
 * continuations (CONTINUATION_WORDS_EN), configurable per language.
 *
 * A turn the STT service itself judged over (`turn.serviceEndOfTurn`, parsed
 * here too) is not held: the service had the words and the audio.
 *
 * Pure: no clock, no I/O; the turn machine applies it at `turnFlushed`.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import { normaliseWord } from "./backchannel.js";

/**
 * `turn.holdUnfinished`: true for the defaults, or these.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface HoldUnfinishedOptions {
  /**
   * How long (ms) after the flush an unfinished turn waits for more speech before it is answered anyway.
   * @defaultValue 700
   */
  holdMs?: number;
  /** Last words that leave a turn unfinished. Default CONTINUATION_WORDS_EN. */
  words?: readonly string[];
}

export interface TurnEndPolicy {
  readonly holdMs: number;
  readonly words: ReadonlySet<string>;
}

/**
 * English words after which a sentence is seldom over: conjunctions,
 * articles, prepositions, possessives, auxiliaries and fillers. Not nouns,
 * verbs at a clause's end, or "please", "thanks", "yes", "no".
 */
export const CONTINUATION_WORDS_EN: readonly string[] = [
  "and", "but", "or", "so", "because", "if", "when", "then", "that", "which", "who", "while", "although", "unless", "than",
  "the", "a", "an", "some", "any", "this", "these", "those", "every", "each",
  "to", "of", "in", "on", "at", "for", "with", "from", "by", "about", "into", "like", "as", "between", "after", "before",
  "my", "your", "his", "her", "our", "their", "its",
  "i", "we", "you", "he", "she", "they", "it's", "i'm",
  "is", "are", "was", "were", "be", "am", "have", "has", "had", "do", "does", "did", "can", "could", "will", "would", "should", "want", "wanna", "gonna",
  "um", "uh", "er", "erm", "hmm", "mm", "like", "well", "also", "maybe", "just",
];

/** The policy for `turn.holdUnfinished`, or undefined when it is off. Throws a ConfigError naming a bad value. */
export function turnEndPolicyOf(option: boolean | HoldUnfinishedOptions | undefined): TurnEndPolicy | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  if (typeof given !== "object" || given === null) throw new ConfigError(`VoiceSession: \`turn.holdUnfinished\` must be true, false or an object, not ${JSON.stringify(option)}`);
  const holdMs = given.holdMs ?? DEFAULTS.turn.holdUnfinished.holdMs;
  if (!(Number.isFinite(holdMs) && holdMs >= 0)) throw new ConfigError(`VoiceSession: \`turn.holdUnfinished.holdMs\` must be a number of ms ≥ 0, not ${holdMs}`);
  const words = given.words ?? CONTINUATION_WORDS_EN;
  if (!Array.isArray(words) || words.some((w) => typeof w !== "string")) throw new ConfigError("VoiceSession: `turn.holdUnfinished.words` must be an array of strings");
  return { holdMs, words: new Set(words.map(normaliseWord).filter((w) => w.length > 0)) };
}

/** `turn.serviceEndOfTurn` as the turn machine takes it (TurnConfig.serviceEndOfTurn); undefined: off. */
export function serviceEndOfTurnOf(option: boolean | { quietMs?: number } | undefined): { quietMs: number } | undefined {
  if (option === false) return undefined;
  const given = option === undefined || option === true ? {} : option;
  if (typeof given !== "object" || given === null) throw new ConfigError(`VoiceSession: \`turn.serviceEndOfTurn\` must be true, false or { quietMs }, not ${JSON.stringify(option)}`);
  const quietMs = given.quietMs ?? DEFAULTS.turn.serviceEndOfTurn.quietMs;
  if (!(Number.isFinite(quietMs) && quietMs >= 0)) throw new ConfigError(`VoiceSession: \`turn.serviceEndOfTurn.quietMs\` must be a number of ms ≥ 0, not ${quietMs}`);
  return { quietMs };
}

/** `turn.detector`'s verdicts as the turn machine takes them (TurnConfig.turnDetector). */
export interface TurnDetectorPolicy {
  /** A verdict at or over this says the turn is over. */
  readonly threshold: number;
  /** How long (ms) a turn the model calls unfinished waits for more speech. */
  readonly holdMs: number;
}

/** The policy of `turn.detector` (its threshold and hold), or undefined without one. Throws a ConfigError naming a bad value. */
export function turnDetectorPolicyOf(option: { threshold?: number; holdMs?: number } | undefined): TurnDetectorPolicy | undefined {
  if (option === undefined) return undefined;
  const threshold = option.threshold ?? DEFAULTS.turn.detector.threshold;
  const holdMs = option.holdMs ?? DEFAULTS.turn.detector.holdMs;
  if (!(threshold >= 0 && threshold <= 1)) throw new ConfigError(`VoiceSession: \`turn.detector.threshold\` must be a probability from 0 to 1, not ${threshold}`);
  if (!(Number.isFinite(holdMs) && holdMs >= 0)) throw new ConfigError(`VoiceSession: \`turn.detector.holdMs\` must be a number of ms ≥ 0, not ${holdMs}`);
  return { threshold, holdMs };
}

/**
 * How long (ms) a flushed turn is held open for more speech, or undefined to
 * answer it now. The turn detector's verdict on the utterance decides when
 * there is one (the model heard the audio; `turnProbability` under its
 * threshold holds), and a verdict still "due" is waited for (up to the
 * detector's holdMs: how fast the model answers is not the turn's business);
 * else the last word does (`holdUnfinished`).
 */
export function holdMsFor(
  config: { turnEnd?: TurnEndPolicy; turnDetector?: TurnDetectorPolicy },
  turnProbability: number | "due" | undefined,
  text: string,
): number | undefined {
  const detector = config.turnDetector;
  if (detector && turnProbability !== undefined) return turnProbability === "due" || turnProbability < detector.threshold ? detector.holdMs : undefined;
  return config.turnEnd && looksUnfinished(config.turnEnd, text) ? config.turnEnd.holdMs : undefined;
}

/** True when the turn's last word leaves it unfinished. An empty text is not (there is nothing to hold). */
export function looksUnfinished(policy: TurnEndPolicy, text: string): boolean {
  const last = text.trim().split(/\s+/).at(-1) ?? "";
  const word = normaliseWord(last);
  return word.length > 0 && policy.words.has(word);
}
