/**
 * The echo tap: what the playback worklet rendered, by context frame, for the
 * capture worklet's echo guard. Both processors of one AudioContext run on
 * its render thread in one AudioWorkletGlobalScope, so the tap is plain
 * memory on `globalThis`, found by a name both nodes are given
 * (`processorOptions.echoTap`): no SharedArrayBuffer, no message, and the
 * reference is sample-aligned with the microphone in context frames.
 *
 * Ordering: within one render quantum the browser may run the capture node
 * before or after the playback node (they are not connected), so the capture
 * reads the quantum *before* its own, which playback has always written by
 * then. The reference is then one quantum (2.9 ms at 44.1 kHz) later than
 * what is rendered, which takes that much off the echo delay the guard sees;
 * a real echo (output + input latency) is at least 10 ms, so it stays
 * positive, and the guard's delay search finds it.
 *
 * A quantum the playback did not write (no reply, a skipped process(), the
 * node closed) reads as silence: each slot carries the frame it holds.
 * Allocation: the ring is allocated once, by whichever side asks first;
 * `write` and `read` allocate nothing. The spec leaves the sharing of the
 * scope to the browser: Chromium shares it (test/browser keeps a test of it);
 * where it is not shared the capture side sees silence, and the guard passes
 * the microphone through untouched.
 */

const QUANTUM = 128;
/** Quanta kept: 64 × 128 frames, 170 ms at 48 kHz; the capture reads one quantum back. */
const SLOTS = 64;

export interface EchoTap {
  readonly samples: Float32Array;
  /** The context frame each slot's quantum starts at (-1: never written). */
  readonly frames: Float64Array;
}

type TapScope = { __bargeinEchoTaps?: Map<string, EchoTap> };

/** The tap called `name` in this render thread's scope, made on first use. */
export function echoTap(name: string): EchoTap {
  const scope = globalThis as unknown as TapScope;
  const taps = (scope.__bargeinEchoTaps ??= new Map());
  let tap = taps.get(name);
  if (!tap) {
    tap = { samples: new Float32Array(SLOTS * QUANTUM), frames: new Float64Array(SLOTS).fill(-1) };
    taps.set(name, tap);
  }
  return tap;
}

/** Forgets the tap (the playback node closed). */
export function releaseEchoTap(name: string): void {
  (globalThis as unknown as TapScope).__bargeinEchoTaps?.delete(name);
}

/** Playback side: the quantum rendered at context frame `frame`. */
export function writeTap(tap: EchoTap, frame: number, rendered: Float32Array): void {
  const slot = Math.floor(frame / QUANTUM) % SLOTS;
  tap.samples.set(rendered.length === QUANTUM ? rendered : rendered.subarray(0, QUANTUM), slot * QUANTUM);
  tap.frames[slot] = frame;
}

/** Capture side: the quantum rendered at context frame `frame` into `into` (128), or silence. Returns whether it was there. */
export function readTap(tap: EchoTap, frame: number, into: Float32Array): boolean {
  const slot = Math.floor(frame / QUANTUM) % SLOTS;
  if (tap.frames[slot] !== frame) {
    into.fill(0);
    return false;
  }
  into.set(tap.samples.subarray(slot * QUANTUM, slot * QUANTUM + QUANTUM));
  return true;
}
