/**
 * How samples and producer commands reach the playback processor: the
 * worklet-side mirror of the Player's transport (src/audio/player-transport.ts),
 * chosen once, in the processor's constructor, from processorOptions.
 * - shared-playback-feed.ts: the ring and control block are
 *   SharedArrayBuffers the Player (and any thread it handed them to) writes.
 * - port-playback-feed.ts: PCM and commands arrive as messages; the feed owns
 *   a plain-memory ring and a control block of the same layout, which its
 *   message handlers write.
 * Either way the processor reads one ring and one control block, so its
 * render path has no transport branch.
 *
 * Render thread only. `fill`, `waiting` and `takeDropped` run inside
 * process() and allocate nothing.
 */
import type { RingBuffer } from "../src/audio/ring-buffer.js";
import type { PlaybackFeedMessage } from "../src/protocol/audio-messages.js";

export interface PlaybackFeed {
  readonly ring: RingBuffer;
  readonly control: Int32Array;
  /** Post a status every few quanta while playing: there is no shared memory for the position. */
  readonly postsStatus: boolean;
  /** A producer message from the node's port (the port path's pcm, fence, end). */
  receive(message: PlaybackFeedMessage): void;
  /** Start of each quantum: moves samples that arrived into the ring, as room allows. */
  fill(): void;
  /** A flush command from a port: requested in the control block, as this transport's producer would. */
  requestFlush(): void;
  /** Samples waiting outside the ring. */
  waiting(): number;
  /** Samples dropped outside the ring by flushes since the last call, for `flushed`. */
  takeDropped(): number;
}
