/**
 * How long ago the user's turn began, for what a speech stream opens the turn
 * with (SttStream.turnStarted: Gemini's pre-roll of the speech since the
 * onset). Pure.
 *
 * Measured on the audio clock where it can be: the audio captured since the
 * VAD frame that began the utterance. The main thread's clock alone is wrong
 * after a stall: the onset's event and the audio since it arrive together, in
 * one burst, so an onset half a second back in the audio looks like "now",
 * and the question's first words were left out of the turn (a backend test
 * under load heard "whether like today"). The larger of the two counts, so a
 * missing or stale audio time never shortens the main thread's.
 */
import type { TurnState } from "./turn-types.js";

/**
 * Seconds since the turn's onset (0 with no VAD utterance going on: push-to-talk, a typed start).
 * `nowMs`: the main thread's clock, as the machine's `voice.startAt`; `capturedUntil`: the
 * AudioContext time (s) at the end of the newest captured frame, undefined before the first.
 */
export function onsetAgeS(turn: Pick<TurnState, "voice">, nowMs: number, capturedUntil: number | undefined): number {
  const voice = turn.voice;
  if (voice.kind === "quiet") return 0;
  const wall = Math.max(0, nowMs - voice.startAt) / 1000;
  const audio = voice.startTime === undefined || capturedUntil === undefined ? 0 : capturedUntil - voice.startTime;
  return Math.max(wall, Number.isFinite(audio) ? audio : 0);
}
