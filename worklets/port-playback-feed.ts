/**
 * The MessagePort feed (pages that are not crossOriginIsolated): PCM arrives
 * transferred on the node's port and waits in `pending` until the ring has
 * room; fences, ends and flushes arrive in the same port's order, so each is
 * applied to what has arrived before it and to nothing after. See
 * playback-feed.ts. Render thread only.
 */
import { initPlaybackControl } from "../src/audio/playback-control.js";
import { RingBuffer } from "../src/audio/ring-buffer.js";
import { PlaybackSlot as S, type PlaybackFeedMessage } from "../src/protocol/audio-messages.js";
import type { PlaybackFeed } from "./playback-feed.js";

interface PendingChunk {
  samples: Float32Array;
  offset: number;
}

export class PortPlaybackFeed implements PlaybackFeed {
  readonly ring: RingBuffer;
  readonly control: Int32Array;
  readonly postsStatus = true;
  /** Chunks waiting for room in the ring, oldest first. */
  readonly #pending: PendingChunk[] = [];
  /** Samples dropped from `pending` by a flush, reported with it. */
  #dropped = 0;

  constructor(capacity: number) {
    this.ring = RingBuffer.create(capacity, false);
    this.control = initPlaybackControl();
  }

  /** Message handler, not process(): allocates the pending entry of each pcm message. */
  receive(message: PlaybackFeedMessage): void {
    switch (message.kind) {
      case "fence":
        // Messages arrive in order, so everything already here is older.
        this.#pending.length = 0;
        Atomics.store(this.control, S.FENCE_START, this.ring.writeCounter | 0);
        Atomics.store(this.control, S.FENCE_GEN, message.generation);
        break;
      case "pcm":
        if (message.generation === Atomics.load(this.control, S.FENCE_GEN)) {
          this.#pending.push({ samples: message.samples, offset: 0 });
        }
        break;
      case "end":
        Atomics.store(this.control, S.END_GEN, message.generation);
        break;
    }
  }

  fill(): void {
    while (this.#pending.length > 0) {
      const chunk = this.#pending[0];
      chunk.offset += this.ring.push(chunk.samples, chunk.offset, chunk.samples.length - chunk.offset);
      if (chunk.offset < chunk.samples.length) return;
      this.#pending.shift();
    }
  }

  /** Messages are handled in order: drop what has arrived so far, keep what follows. */
  requestFlush(): void {
    for (const chunk of this.#pending) this.#dropped += chunk.samples.length - chunk.offset;
    this.#pending.length = 0;
    Atomics.store(this.control, S.CUT_AT, this.ring.writeCounter | 0);
    Atomics.add(this.control, S.CUT_SEQ, 1);
  }

  waiting(): number {
    let waiting = 0;
    for (let i = 0; i < this.#pending.length; i++) waiting += this.#pending[i].samples.length - this.#pending[i].offset;
    return waiting;
  }

  takeDropped(): number {
    const dropped = this.#dropped;
    this.#dropped = 0;
    return dropped;
  }
}
