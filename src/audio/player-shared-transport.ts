/**
 * @internal The Player's shared-memory transport (crossOriginIsolated pages):
 * the Player is the ring's single producer, and every command is a write to
 * the control block that the worklet reads at its next render quantum; no
 * message is posted for any of them. The position and state are read from the
 * block, exact and current. Main thread only.
 */
import {
  PLAYBACK_CONTROL_SLOTS,
  PlaybackSlot as S,
  PlaybackStateCode,
  type PlaybackState,
  type PlaybackToMainMessage,
} from "../protocol/audio-messages.js";
import { flushPlayback, initPlaybackControl, pausePlayback, resumePlayback } from "./playback-control.js";
import type { PlayerTransport } from "./player-transport.js";
import { RingBuffer } from "./ring-buffer.js";

const STATES = Object.keys(PlaybackStateCode) as PlaybackState[];

export class SharedPlayerTransport implements PlayerTransport {
  readonly kind = "shared";
  readonly shared: { ring: SharedArrayBuffer; control: SharedArrayBuffer };
  readonly #ring: RingBuffer;
  readonly #control: Int32Array;
  /** Samples that did not fit in the ring yet, oldest first (all of the current generation). */
  #pending: Float32Array[] = [];
  /** The current generation, once `end` asked for it: END_GEN is set when #pending is empty. */
  #endRequested = -1;

  constructor(capacity: number) {
    this.#ring = RingBuffer.create(capacity, true);
    const control = new SharedArrayBuffer(PLAYBACK_CONTROL_SLOTS * Int32Array.BYTES_PER_ELEMENT);
    this.#control = initPlaybackControl(control);
    this.shared = { ring: this.#ring.buffer as SharedArrayBuffer, control };
  }

  connect(): void {}

  send(samples: Float32Array): void {
    if (samples.length === 0) return;
    this.#pending.push(samples);
    this.#drain();
  }

  fence(generation: number): void {
    this.#pending = [];
    this.#endRequested = -1;
    // START first, then GEN: a worklet that sees the new GEN sees its START.
    Atomics.store(this.#control, S.FENCE_START, this.#ring.writeCounter | 0);
    Atomics.store(this.#control, S.FENCE_GEN, generation);
  }

  end(generation: number): void {
    this.#endRequested = generation;
    this.#drain();
  }

  flush(): void {
    this.#pending = [];
    // Cut at what is written now, so audio written right after the flush survives it.
    Atomics.store(this.#control, S.CUT_AT, this.#ring.writeCounter | 0);
    Atomics.add(this.#control, S.CUT_SEQ, 1);
  }

  pause(token: number): void {
    pausePlayback(this.#control, token);
  }

  resume(token: number): void {
    resumePlayback(this.#control, token);
  }

  rendered(): { generation: number; samples: number } {
    // GEN and RENDERED are two stores: re-read until GEN did not change around RENDERED.
    let before: number;
    let generation: number;
    let samples: number;
    do {
      before = Atomics.load(this.#control, S.GEN);
      samples = Atomics.load(this.#control, S.RENDERED) >>> 0;
      generation = Atomics.load(this.#control, S.GEN);
    } while (generation !== before);
    return { generation, samples };
  }

  get state(): PlaybackState {
    return STATES.find((k) => PlaybackStateCode[k] === Atomics.load(this.#control, S.STATE)) ?? "idle";
  }

  get underruns(): number {
    return Atomics.load(this.#control, S.UNDERRUNS);
  }

  handle(message: PlaybackToMainMessage): void {
    if (message.kind === "space") this.#drain();
  }

  close(): void {
    this.#pending = [];
  }

  /** Moves pending samples into the ring; asks for a `space` message if some remain. */
  #drain(): void {
    while (this.#pending.length > 0) {
      const chunk = this.#pending[0];
      const n = this.#ring.push(chunk);
      if (n < chunk.length) {
        this.#pending[0] = chunk.subarray(n);
        Atomics.store(this.#control, S.WANT_SPACE, 1);
        return;
      }
      this.#pending.shift();
    }
    if (this.#endRequested >= 0) {
      Atomics.store(this.#control, S.END_GEN, this.#endRequested);
      this.#endRequested = -1;
    }
  }
}
