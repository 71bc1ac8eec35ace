/**
 * The preemptive reply (`turn.preemptive`): answer as soon as the user's turn
 * is likely over, and play it only once it is certain.
 *
 * The VAD's utterance ends `vad.redemptionMs` after the voice stops; that wait
 * is what keeps a pause inside a sentence from ending the turn, and it is
 * dead time before every reply. With this policy the VAD also says when the
 * utterance has been quiet a shorter `quietMs` (`speechQuiet`). Then:
 * 1. the STT is flushed for the turn's words (the usual `endUserTurn`);
 * 2. with words that look finished (turn-end.ts), a reply is started for them,
 *    held: its LLM and TTS run, but nothing of it plays or shows;
 * 3. the utterance's end (`speechEnd`, no voice since) releases it: the user's
 *    message joins the history and the reply plays at once, its first audio
 *    often ready already;
 * 4. the voice coming back (`speechResumed`) drops it: its streams are
 *    cancelled and counted as wasted, none of it was ever heard, and the turn
 *    goes on with its words. So do new words by the utterance's end.
 * At most one preemptive reply a turn: after a dropped one, the turn ends the
 * usual way.
 *
 * An STT service's eager end of turn (Deepgram Flux's `EagerEndOfTurn`, with
 * its words) is the same cue from the service's side: the reply starts held
 * for those words at once (no flush: the words came with it). Its
 * `TurnResumed` drops it; its `EndOfTurn` brings the final words, and the
 * utterance's end, or the turn's flush when the VAD ended first, releases it
 * if they are the same words.
 *
 * Pure: the turn machine calls these with its state and applies the steps.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import { userHasFloor } from "./floor.js";
import { normaliseWord } from "./backchannel.js";
import { looksUnfinished } from "./turn-end.js";
import { flushInFlight, holdOf, marksOf, vadSpeaking } from "./turn-steps.js";
import type { PreemptiveOptions } from "./turn-options.js";
import type { TurnConfig, TurnEffect, TurnState, TurnStep } from "./turn-types.js";

/** The VAD's utterance went quiet: flush for the turn's words, the first step of a held reply (once a turn). */
export function quietNoticed(s: TurnState, voiceEnd: number | undefined, config: TurnConfig): TurnStep | undefined {
  if (!vadSpeaking(s) || !maySpeculate(s, config)) return undefined;
  return {
    state: { ...s, turn: { kind: "flushing", ...marksOf(s.turn), speculated: true } },
    effects: [{ kind: "endUserTurn", voiceEnd }],
  };
}

/**
 * The STT service's eager end of turn, with its words: for words that read as
 * finished, the reply starts held at once (the same conditions as a quiet's).
 */
export function eagerEnded(s: TurnState, text: string | undefined, config: TurnConfig): TurnStep | undefined {
  const words = (text ?? "").trim();
  if (!words || !maySpeculate(s, config)) return undefined;
  if (config.turnEnd && looksUnfinished(config.turnEnd, words)) return undefined;
  return holdReply({ ...s, turn: { ...s.turn, speculated: true } }, words, true);
}

/** The turn may have its preemptive reply now: the option on, the user speaking, none yet, nothing else under way. */
function maySpeculate(s: TurnState, config: TurnConfig): boolean {
  if (!config.preemptive || config.pushToTalk || s.phase !== "user_speaking") return false;
  return !(s.reply.kind !== "none" || flushInFlight(s.turn) || s.turn.speculated || holdOf(s.turn) !== undefined || s.stt.kind === "down");
}

/** Starts the reply to `text`, held (`eager`: on the service's eager end of turn). */
function holdReply(s: TurnState, text: string, eager: boolean): TurnStep {
  const generation = s.generation + 1;
  return {
    state: { ...s, generation, reply: { kind: "speculative", generation, text, ...(eager ? { eager: true as const } : {}) } },
    // A resumed turn's words replace the last user message (TurnMarks.resumed): the held reply's LLM is not sent both.
    effects: [{ kind: "startReply", generation, held: { text, ...(s.turn.resumed ? { resumed: true } : {}) } }],
  };
}

/** The held reply `generation` is dropped: its streams are closed, none of it was heard. */
function dropHeld(s: TurnState, generation: number): TurnStep {
  return { state: { ...s, reply: { kind: "none" } }, effects: [{ kind: "dropHeldReply", generation }] };
}

/** The service heard the user go on after its eager end (`TurnResumed`): the reply held for it is dropped. */
export function serviceResumed(s: TurnState): TurnStep | undefined {
  if (s.reply.kind !== "speculative" || !s.reply.eager) return undefined;
  return dropHeld(s, s.reply.generation);
}

/** The voice came back: a flush under way starts no reply, and a held reply is dropped. The turn goes on. */
export function voiceResumed(s: TurnState): TurnStep | undefined {
  if (s.turn.kind === "flushing") return { state: { ...s, turn: { ...s.turn, voiceBack: true as const } }, effects: [] };
  return s.reply.kind === "speculative" ? dropHeld(s, s.reply.generation) : undefined;
}

/**
 * The preemptive flush is back: start the reply, held, for words that read
 * as finished. Not when the voice came back meanwhile, the words are none or
 * unfinished, or the flush missed (words may still come). The user's words
 * stay in the turn either way: it has not ended.
 */
export function preemptiveFlushed(s: TurnState & { turn: { kind: "flushing" } }, missed: boolean, config: TurnConfig): TurnStep {
  const goOn: TurnState = { ...s, turn: { kind: "open", ...marksOf(s.turn) } };
  const text = s.userWords.join(" ").trim();
  const unfinished = config.turnEnd !== undefined && looksUnfinished(config.turnEnd, text);
  if (s.turn.voiceBack || missed || !text || unfinished || !userHasFloor(s) || s.reply.kind === "playing") return { state: goOn, effects: [] };
  return holdReply(goOn, text, false);
}

/**
 * The VAD's utterance ended (or, `flushed`, the turn's flush came back). A
 * flush under way becomes the turn's own (its `turnFlushed` ends the turn as
 * usual). A held reply whose words are still the turn's is to be released now
 * (`release`: the machine starts the reply with it), with no second flush: the
 * VAD heard no voice since its flush. One whose words changed is dropped, and
 * the turn ends the usual way. An eager one whose words have not come yet (the
 * service sends them with its end of turn) waits for the turn's flush.
 */
export function utteranceEnded(s: TurnState, flushed = false): { step: TurnStep; release?: { generation: number; text: string } } {
  if (s.turn.kind === "flushing") return { step: { state: { ...s, turn: { kind: "ending", ...marksOf(s.turn) } }, effects: [] } };
  const held = s.reply;
  if (held.kind !== "speculative") return { step: { state: s, effects: [] } };
  const words = s.userWords.join(" ").trim();
  if (held.eager && !words && !flushed) return { step: { state: s, effects: [] } };
  if (!sameWords(words, held.text)) return { step: dropHeld(s, held.generation) };
  // The service's judgement was of this turn, which ends here.
  return { step: { state: { ...s, reply: { kind: "none" }, turn: { ...s.turn, serviceEnded: undefined } }, effects: [] }, release: { generation: held.generation, text: words } };
}

/** The same words, whatever their case and punctuation (a service's eager transcript against its final words). */
function sameWords(a: string, b: string): boolean {
  const norm = (text: string) => text.split(/\s+/).map(normaliseWord).filter(Boolean).join(" ");
  return norm(a) === norm(b);
}

/** The turn is taken over (typed text, stop()): a held reply is dropped; a flush under way just ends (as the turn's own). */
export function dropSpeculation(s: TurnState): TurnStep {
  if (s.turn.kind === "flushing") return { state: { ...s, turn: { kind: "ending", ...marksOf(s.turn) } }, effects: [] };
  if (s.reply.kind !== "speculative") return { state: s, effects: [] };
  const effects: TurnEffect[] = [{ kind: "dropHeldReply", generation: s.reply.generation }];
  return { state: { ...s, reply: { kind: "none" } }, effects };
}

/** `turn.preemptive` as the turn machine takes it (TurnConfig.preemptive); undefined: off. Throws a ConfigError naming a bad value. */
export function preemptiveOf(option: boolean | PreemptiveOptions | undefined): { quietMs: number } | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  if (typeof given !== "object" || given === null) throw new ConfigError(`VoiceSession: \`turn.preemptive\` must be true, false or { quietMs }, not ${JSON.stringify(option)}`);
  const quietMs = given.quietMs ?? DEFAULTS.turn.preemptive.quietMs;
  if (!(Number.isFinite(quietMs) && quietMs > 0)) throw new ConfigError(`VoiceSession: \`turn.preemptive.quietMs\` must be a number of ms > 0, not ${quietMs}`);
  return { quietMs };
}
