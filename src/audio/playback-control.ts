/**
 * Driving the playback worklet from any thread through its shared control
 * block (`Player.controlBuffer`, crossOriginIsolated pages only). The worklet
 * reads the block at the start of every render quantum, so a request takes
 * effect within one quantum with no message and no main thread involved.
 * Pure: no DOM, safe in a worker. None of these allocate.
 */
import { PlaybackSlot } from "../protocol/audio-messages.js";

/** Wraps `Player.controlBuffer` once; pass the result to the functions below. */
export function playbackControl(buffer: SharedArrayBuffer): Int32Array {
  return new Int32Array(buffer);
}

/** Fades out (≤ 5 ms) and holds; the faded samples are replayed on resume. */
export function pausePlayback(control: Int32Array): void {
  Atomics.store(control, PlaybackSlot.PAUSED, 1);
}

export function resumePlayback(control: Int32Array): void {
  Atomics.store(control, PlaybackSlot.PAUSED, 0);
}

/** Empties the ring within one quantum and clears a pause. */
export function flushPlayback(control: Int32Array): void {
  Atomics.add(control, PlaybackSlot.FLUSH_SEQ, 1);
}
