/**
 * The turn machine's rules for what judges the voice (TurnState.vad): the
 * VAD's model, or its level-based fallback while the model loads. Pure.
 *
 * The level is a weak cue: it cannot tell the user from the bot's echo, a
 * cough or a door. Pausing the bot on it costs nothing (the pause loses no
 * audio), so the fallback's speech start pauses as the model's does; but
 * only a word of the user's confirms the interruption. The fallback's real
 * start still vouches for the words near it (the echo guard's held words),
 * since it counts only frames the guard calls the user's. When its utterance
 * over the bot ends with no word, the bot plays on, as after a misfire.
 */
import { misfireBargeIn } from "./barge-in.js";
import { same } from "./turn-steps.js";
import type { TurnState, TurnStep } from "./turn-types.js";

/** Whether the VAD's own cues (its real start, its end, its voiced length) may confirm a barge-in: the model's only. */
export function vadConfirms(s: TurnState): boolean {
  return s.vad.kind === "model";
}

/** The fallback's utterance over the bot ended and no word confirmed it: playback resumes, and words heard in it are dropped. */
export function unconfirmedEnd(s: TurnState): TurnStep {
  const misfired = misfireBargeIn(s.bargeIn, false);
  if (!misfired) return same(s);
  return { state: { ...s, bargeIn: misfired.bargeIn, userWords: s.userWords.slice(0, misfired.wordsBefore) }, effects: misfired.effects };
}

/** The session is degraded while it listens and the level fallback judges the voice (the app's `degraded`). */
export function presentedDegraded(s: TurnState): boolean {
  return s.vad.kind === "level" && s.phase !== "idle" && s.phase !== "connecting";
}
