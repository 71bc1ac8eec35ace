/**
 * The shared-memory feed (crossOriginIsolated pages): the Player writes the
 * ring and the control block directly, so there is nothing to receive, fill
 * or drop here. See playback-feed.ts. Render thread only; allocates only in
 * the constructor.
 */
import { flushPlayback } from "../src/audio/playback-control.js";
import { RingBuffer } from "../src/audio/ring-buffer.js";
import type { PlaybackFeed } from "./playback-feed.js";

export class SharedPlaybackFeed implements PlaybackFeed {
  readonly ring: RingBuffer;
  readonly control: Int32Array;
  readonly postsStatus = false;

  /** The Player initialised the block (playback-control.ts `initPlaybackControl`). */
  constructor(shared: { ring: SharedArrayBuffer; control: SharedArrayBuffer }) {
    this.ring = new RingBuffer(shared.ring);
    this.control = new Int32Array(shared.control);
  }

  /** The shared producer never sends these: its samples and fences are in shared memory. */
  receive(): void {}

  fill(): void {}

  /** A whole flush (FLUSH_SEQ): the command's sender cannot know the producer's write counter. */
  requestFlush(): void {
    flushPlayback(this.control);
  }

  waiting(): number {
    return 0;
  }

  takeDropped(): number {
    return 0;
  }
}
