/**
 * Who holds the floor, and the state the app sees of it. Pure; shared by the
 * turn machine (which decides the floor) and VoiceSession (which reports it).
 */
import type { SessionState } from "./types.js";

/** Who holds the floor. The session shows it as its state, except "reconnecting" (see `presentedState`). */
export type FloorPhase = Exclude<SessionState, "reconnecting">;

/**
 * The state the app sees: the floor's phase, but "reconnecting" while no one
 * has the floor and the STT is down (the user would not be heard). A user
 * speaking or a reply going on shows as such: the speech is kept for the new
 * stream (SpeechReplay), and the reply plays on.
 */
export function presentedState(s: { readonly phase: FloorPhase; readonly stt: { readonly kind: string } }): SessionState {
  return s.phase === "listening" && s.stt.kind === "down" ? "reconnecting" : s.phase;
}

export function botHasFloor(s: { readonly phase: FloorPhase }): boolean {
  return s.phase === "bot_speaking" || s.phase === "bot_thinking";
}

export function userHasFloor(s: { readonly phase: FloorPhase }): boolean {
  return s.phase === "listening" || s.phase === "user_speaking";
}

/** No one holds the floor, and no turn is under way (a quiet moment: SttLink moves to a new stream then). */
export function floorFree(s: { readonly phase: FloorPhase; readonly voice: { readonly kind: string }; readonly turn: { readonly kind: string } }): boolean {
  return s.phase === "listening" && s.voice.kind === "quiet" && s.turn.kind !== "ending" && s.turn.kind !== "flushing";
}
