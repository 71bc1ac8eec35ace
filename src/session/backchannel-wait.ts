/**
 * The turn machine's transitions for speech over the bot under the backchannel
 * policy (backchannel.ts): what the pending barge-in's wait holds, and what
 * its speech's end, a misfire, a word or the word wait's end make of it. Pure;
 * a verdict of "confirm" goes back to the machine, which owns the interrupt.
 */
import { wordsVerdict, type BackchannelPolicy } from "./backchannel.js";
import { NO_BARGE_IN, type BackchannelWait } from "./barge-in.js";
import type { TurnEffect, TurnState, TurnStep } from "./turn-types.js";

/** The pending barge-in's backchannel wait, when the policy is on. */
export function backchannelWait(s: TurnState): BackchannelWait | undefined {
  return s.bargeIn.kind === "pending" ? s.bargeIn.backchannel : undefined;
}

export function withWait(s: TurnState, wait: BackchannelWait): TurnState {
  return s.bargeIn.kind === "pending" ? { ...s, bargeIn: { ...s.bargeIn, backchannel: wait } } : s;
}

/**
 * The VAD ended the speech over the bot. Voiced for `maxMs` (its last speech
 * frame less its onset, in context time: the VAD ends it `redemptionMs`
 * later), it confirms; shorter speech whose words were all backchannels lets
 * the bot go on, and otherwise it waits `wordWaitMs` for a word that confirms.
 */
export function waitAtSpeechEnd(s: TurnState, wait: BackchannelWait, policy: BackchannelPolicy, at: number, voiceEnd: number | undefined): TurnStep | "confirm" {
  const speechMs = voiceEnd !== undefined && wait.onsetContextTime !== undefined ? Math.max(0, (voiceEnd - wait.onsetContextTime) * 1000) : at - wait.speechAt;
  if (speechMs >= policy.maxMs) return "confirm";
  if (wordsVerdict(policy, wait.words) === "backchannel") return backchannelHeard(s, wait, speechMs);
  return { state: withWait(s, { ...wait, endedAt: at, speechMs }), effects: [{ kind: "armTimer", at: at + policy.wordWaitMs }] };
}

/**
 * The VAD called the speech over the bot a misfire. A burst that short may
 * still be "wait" or "stop": the bot plays on (resumed here, unless the
 * worker did), and the burst's words are awaited `wordWaitMs`; only an
 * interrupting one cuts the reply.
 */
export function waitAfterMisfire(s: TurnState, wait: BackchannelWait, policy: BackchannelPolicy, at: number, resumedByWorker: boolean): TurnStep {
  if (s.bargeIn.kind !== "pending") return { state: s, effects: [] };
  const resume: TurnEffect[] = resumedByWorker ? [] : [{ kind: "resumePlayback", token: s.bargeIn.token }];
  return { state: withWait(s, { ...wait, endedAt: at, misfired: true }), effects: [...resume, { kind: "armTimer", at: at + policy.wordWaitMs }] };
}

/** An interrupting word while a misfired burst's words are awaited: it needs no vouching by the VAD (the echo guard's rule). */
export function misfiredInterrupt(s: TurnState, text: string, policy: BackchannelPolicy | undefined): boolean {
  return policy !== undefined && backchannelWait(s)?.misfired === true && wordsVerdict(policy, [text]) === "interrupt";
}

/** A word of the speech over the bot: "confirm" when the words so far interrupt, else held (and, all backchannels once the speech ended, the bot goes on). */
export function waitForWord(s: TurnState, wait: BackchannelWait, policy: BackchannelPolicy, text: string): TurnStep | "confirm" {
  const held = { ...wait, words: [...wait.words, text] };
  const verdict = wordsVerdict(policy, held.words);
  if (verdict === "interrupt") return "confirm";
  if (verdict === "backchannel" && held.speechMs !== undefined) return backchannelHeard(s, held, held.speechMs);
  return { state: withWait(s, held), effects: [] };
}

/** The word wait is over with no word that confirms (`undefined`: not yet, or no wait): a hum, a laugh, a misheard backchannel, or a misfire. */
export function wordWaitOver(s: TurnState, policy: BackchannelPolicy, at: number): TurnStep | undefined {
  const wait = backchannelWait(s);
  if (!wait || wait.endedAt === undefined || at < wait.endedAt + policy.wordWaitMs) return undefined;
  // A misfire stays one: the bot already plays on, and no event says so.
  if (wait.misfired) return { state: { ...s, bargeIn: NO_BARGE_IN }, effects: [] };
  return wait.speechMs === undefined ? undefined : backchannelHeard(s, wait, wait.speechMs);
}

/** Only backchannels (or no words) came: the reply goes on where it paused, and the user's words are as before. */
function backchannelHeard(s: TurnState, wait: BackchannelWait, speechMs: number): TurnStep {
  if (s.bargeIn.kind !== "pending") return { state: s, effects: [] };
  return {
    state: { ...s, bargeIn: NO_BARGE_IN, userWords: s.userWords.slice(0, s.bargeIn.wordsBefore) },
    effects: [{ kind: "resumePlayback", token: s.bargeIn.token }, { kind: "backchannel", words: wait.words, speechMs: Math.round(speechMs) }],
  };
}
