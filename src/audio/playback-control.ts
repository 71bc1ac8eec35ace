/**
 * Driving the playback worklet from any thread through its shared control
 * block (`Player.controlBuffer`, crossOriginIsolated pages only). The worklet
 * reads the block at the start of every render quantum, so a request takes
 * effect within one quantum with no message and no main thread involved.
 *
 * Pause and resume carry a token, the playback generation they are for; the
 * rules that make a late (stale) one harmless are in pause-token.ts, shared
 * with the worklet, which applies the same rules to commands that reach it by
 * port. Pure: no DOM, safe in a worker. Only `playbackControl` and
 * `initPlaybackControl` allocate.
 */
import { PLAYBACK_CONTROL_SLOTS, PlaybackSlot } from "../protocol/audio-messages.js";
import { NO_PAUSE, requestPause, requestResume } from "./pause-token.js";

/** Wraps `Player.controlBuffer` once; pass the result to the functions below. */
export function playbackControl(buffer: SharedArrayBuffer): Int32Array {
  return new Int32Array(buffer);
}

/**
 * @internal A control block with its initial values (no pause standing, no
 * generation ended): over `buffer` (the shared path) or plain memory (the
 * worklet's own block on the MessagePort path).
 */
export function initPlaybackControl(buffer?: SharedArrayBuffer): Int32Array {
  const control = buffer ? new Int32Array(buffer) : new Int32Array(PLAYBACK_CONTROL_SLOTS);
  control[PlaybackSlot.PAUSED] = NO_PAUSE;
  control[PlaybackSlot.END_GEN] = -1;
  control[PlaybackSlot.DUCKED] = NO_PAUSE;
  return control;
}

/**
 * Fades out (≤ 5 ms) and holds generation `token`; the faded samples are
 * replayed on resume. Ignored if a newer pause stands; void once a newer
 * generation is fenced. Returns whether a pause of `token` stands now.
 */
export function pausePlayback(control: Int32Array, token: number): boolean {
  return requestPause(control, token);
}

/** Lifts the pause of `token`, and no other. Returns whether it did. */
export function resumePlayback(control: Int32Array, token: number): boolean {
  return requestResume(control, token);
}

/**
 * Plays generation `token` on `db` dB softer (a ramp of ≤ 5 ms), by the
 * pause's token rules in the duck's own slot; nothing is held or lost.
 * Returns whether a duck of `token` stands now.
 */
export function duckPlayback(control: Int32Array, token: number, db: number): boolean {
  Atomics.store(control, PlaybackSlot.DUCK_DB, Math.max(0, Math.round(db)));
  return requestPause(control, token, PlaybackSlot.DUCKED);
}

/** Lifts the duck of `token`, and no other. Returns whether it did. */
export function unduckPlayback(control: Int32Array, token: number): boolean {
  return requestResume(control, token, PlaybackSlot.DUCKED);
}

/** Empties the ring within one quantum and clears a pause. */
export function flushPlayback(control: Int32Array): void {
  Atomics.add(control, PlaybackSlot.FLUSH_SEQ, 1);
}
