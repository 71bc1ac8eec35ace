/**
 * The playback pause, decided by token: the one statement of its rules, used
 * by the playback worklet (on both transports), by playback-control.ts (any
 * thread holding `Player.controlBuffer`, such as the VAD worker) and by the
 * unit tests. Pure: no DOM, no imports but the slot layout; nothing here
 * allocates, so the worklet calls it from process().
 *
 * Why tokens: the pause has writers on several threads and channels (the
 * session on the main thread, the VAD worker through a port or the shared
 * block, the worklet's own flush), and two channels have no order between
 * them. A pause that lands late, after the resume it was meant to precede or
 * after the next reply began, must not hold audio nobody means to pause. So
 * rather than ordering the channels, every pause and resume names the
 * playback generation it is for, and a late command is inert by construction.
 *
 * Contract. The PAUSED slot of the control block holds the token of the
 * newest pause that stands, or NO_PAUSE. `generation` below is the one the
 * worklet renders (the newest fence it has applied).
 * - `pauseHolds(control, g)`: g is paused iff the slot holds exactly g. A
 *   pause older than the fence is void, so a new generation starts unpaused
 *   without anyone clearing the slot; a pause whose token is newer (its
 *   writer saw a fence the worklet has not applied yet) takes effect with
 *   that fence.
 * - `requestPause(control, t)`: stores t unless the slot holds a newer token.
 *   Compare-and-exchange, so a stale pause never overwrites a newer one,
 *   whichever thread wins the race.
 * - `requestResume(control, t)`: clears the slot only if it holds t. A stale
 *   resume never lifts a newer pause.
 * - `clearPauses(control, g)`: the worklet's flush; clears a pause of g or
 *   older. A pause for a generation not yet fenced stands.
 * - Tokens are integers in [0, 2^31). Anything else is ignored: a malformed
 *   message from another thread must not read as token 0 (Atomics would
 *   coerce `undefined` to 0).
 * - Within one generation, a pause that lands after the resume it preceded
 *   still holds: the token cannot tell the two apart. The generation's owner
 *   (the session) sees the worker's pause in `speechStart` and resumes it.
 */
import { PlaybackSlot } from "../protocol/audio-messages.js";

/** The slot's value when no pause stands (below every token). */
export const NO_PAUSE = -1;

const SLOT: number = PlaybackSlot.PAUSED;

/** A playback generation usable as a pause token: an integer in [0, 2^31). */
export function isPauseToken(token: unknown): token is number {
  return typeof token === "number" && Number.isInteger(token) && token >= 0 && token <= 0x7fffffff;
}

/** Whether `generation` is held by a pause. Any thread; no allocation. */
export function pauseHolds(control: Int32Array, generation: number, slot = SLOT): boolean {
  return Atomics.load(control, slot) === generation;
}

/**
 * Pauses `token`'s audio, unless a newer pause stands. Returns whether a pause
 * of `token` stands now. Any thread; lock-free; no allocation.
 */
export function requestPause(control: Int32Array, token: number, slot = SLOT): boolean {
  if (!isPauseToken(token)) return false;
  for (;;) {
    const held = Atomics.load(control, slot);
    if (held > token) return false; // a newer pause stands (NO_PAUSE is below every token)
    if (held === token) return true;
    if (Atomics.compareExchange(control, slot, held, token) === held) return true;
  }
}

/** Lifts the pause of `token`, and only that one. Returns whether it did. Any thread; no allocation. */
export function requestResume(control: Int32Array, token: number, slot = SLOT): boolean {
  if (!isPauseToken(token)) return false;
  return Atomics.compareExchange(control, slot, token, NO_PAUSE) === token;
}

/** Clears a pause of `generation` or older (a flush). Any thread; lock-free; no allocation. */
export function clearPauses(control: Int32Array, generation: number, slot = SLOT): void {
  for (;;) {
    const held = Atomics.load(control, slot);
    if (held === NO_PAUSE || held > generation) return;
    if (Atomics.compareExchange(control, slot, held, NO_PAUSE) === held) return;
  }
}
