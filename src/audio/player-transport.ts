/**
 * @internal How the Player reaches its `bargein-playback` worklet: the shared
 * ring and control block (crossOriginIsolated pages) or the node's
 * MessagePort. The choice is made once, in the Player's constructor, and hidden
 * behind this interface, so no Player method asks which one it has. The
 * worklet mirrors it (worklets/playback-feed.ts).
 *
 * Main thread only. The Player keeps what is the same on both (generations,
 * resampling, events, the node's lifetime); a transport keeps what differs
 * (where samples wait, where the position comes from). Both apply pause and
 * resume by the token rules of pause-token.ts, so their semantics are the same.
 */
import type { PlaybackProcessorOptions, PlaybackState, PlaybackToMainMessage } from "../protocol/audio-messages.js";

export interface PlayerTransport {
  readonly kind: "shared" | "port";
  /** `processorOptions.shared` for the node, or undefined on the port path. */
  readonly shared: PlaybackProcessorOptions["shared"];
  /** Once the node exists: the port it listens on (the port path posts everything there). */
  connect(port: MessagePort): void;
  /** Queues context-rate samples of `generation` (the current one). Takes ownership: may transfer them. */
  send(samples: Float32Array, generation: number): void;
  /** `generation` is the newest: what waits for older ones is dropped here and in the worklet. */
  fence(generation: number): void;
  /** `generation` has no more audio, once what waits for it has reached the worklet. */
  end(generation: number): void;
  /** Drops what was written so far; what is written after the call survives. */
  flush(): void;
  pause(token: number): void;
  resume(token: number): void;
  /** The generation the worklet renders and its samples rendered, as last known. */
  rendered(): { generation: number; samples: number };
  readonly state: PlaybackState;
  readonly underruns: number;
  /** The worklet's messages that concern the transport (`status`, `space`); others are ignored. */
  handle(message: PlaybackToMainMessage): void;
  /** Drops what still waits; the node is going away. */
  close(): void;
}
