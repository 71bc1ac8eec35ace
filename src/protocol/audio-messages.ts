/**
 * Messages between the main thread and the two worklets (capture and
 * playback), discriminated on `kind`, plus the layout of the playback
 * worklet's shared control block. Types and constants only: the worklets, the
 * VAD worker and the page all import this file.
 */

// ---- Playback: shared control block ----

/**
 * Int32 slots of the playback control block. When the page is
 * crossOriginIsolated this lives in a SharedArrayBuffer (`Player.controlBuffer`)
 * that the worklet polls once per render quantum; otherwise the same layout is
 * a plain array inside the worklet, written by its message handlers.
 *
 * Requests (any thread may write them):
 * - PAUSED: the token (a playback generation) of the newest pause standing,
 *   or -1 for none. Written only through pause-token.ts (playback-control.ts
 *   on other threads), by compare-and-exchange: a pause holds only the
 *   generation it names, a resume lifts only its own token, and a stale one
 *   of either is inert. The worklet clears it on a flush.
 * - FLUSH_SEQ: bump with `Atomics.add(…, 1)` to request a flush of everything
 *   in the ring when the worklet applies it.
 * - DUCKED / DUCK_DB: a duck, by the same token rules as PAUSED (its own
 *   slot, so a duck and a pause never overwrite each other): the generation
 *   named plays on, DUCK_DB dB softer (a positive integer; written before
 *   DUCKED). The onset cue's answer to a sound that may not be speech
 *   (src/vad/onset-cue.ts). A flush clears it.
 * Producer (the Player on the main thread):
 * - CUT_AT / CUT_SEQ: a flush of exactly what was written before the ring's
 *   write counter was CUT_AT (later writes survive). CUT_AT first, then bump
 *   CUT_SEQ.
 * - FENCE_GEN / FENCE_START: the newest generation and the ring's write counter
 *   where it starts. Written START first, then GEN, so a reader that sees the
 *   new GEN sees its START.
 * - END_GEN: the newest generation whose writes are complete (-1: none).
 * - WANT_SPACE: 1 = the producer has samples waiting for room in the ring.
 * Worklet (read by the main thread):
 * - GEN: the generation being rendered; RENDERED: its samples rendered
 *   (uint32); UNDERRUNS: total underruns; STATE: a PlaybackState code.
 */
export const PlaybackSlot = {
  PAUSED: 0,
  FLUSH_SEQ: 1,
  FENCE_GEN: 2,
  FENCE_START: 3,
  END_GEN: 4,
  WANT_SPACE: 5,
  GEN: 6,
  RENDERED: 7,
  UNDERRUNS: 8,
  STATE: 9,
  CUT_AT: 10,
  CUT_SEQ: 11,
  DUCKED: 12,
  DUCK_DB: 13,
} as const;
export const PLAYBACK_CONTROL_SLOTS = 14;

export const PlaybackStateCode = {
  idle: 0,
  prebuffering: 1,
  playing: 2,
  paused: 3,
} as const;
export type PlaybackState = keyof typeof PlaybackStateCode;

/**
 * What the control port (`Player.createControlPort()`) and the node's port
 * accept from any thread. `token` is the playback generation the pause or
 * resume is for; the worklet applies it by the rules of pause-token.ts, the
 * same as a write to the shared PAUSED slot, so a stale command is ignored.
 * A pause or resume without a valid token is dropped.
 */
export type PlaybackCommand =
  | { kind: "pause"; token: number }
  | { kind: "resume"; token: number }
  /** Plays generation `token` on, `db` dB softer (a positive integer), until its `unduck`. */
  | { kind: "duck"; token: number; db: number }
  | { kind: "unduck"; token: number }
  | { kind: "flush" };

/** `processorOptions` of the `bargein-playback` node. */
export interface PlaybackProcessorOptions {
  /** Publish every rendered quantum to the echo tap of this name (worklets/echo-tap.ts), for the capture's echo guard. */
  echoTap?: string;
  /** Shared ring and control block (crossOriginIsolated), or absent: PCM arrives as messages. */
  shared?: { ring: SharedArrayBuffer; control: SharedArrayBuffer };
  /** Ring capacity in samples when the worklet owns the ring (MessagePort path). */
  capacity: number;
  /** Samples to hold before a generation (or playback after an underrun) starts. */
  prebufferSamples: number;
  /** Length of the pause/resume/flush ramps, in samples (≤ 5 ms). */
  fadeSamples: number;
  /** Measure `process()` time and keep it for a `profile` request. */
  profile?: boolean;
  /** A Float64 a worker keeps at its performance.now(), for worklets without `performance`. */
  profileClock?: SharedArrayBuffer;
  /** Where to keep the output's level for the main thread (src/audio/level-cell.ts); crossOriginIsolated only. */
  levelCell?: SharedArrayBuffer;
}

/**
 * The node is done: its processor closes its ports and returns false from
 * process(). Without this a processor runs (and is kept alive) until its
 * AudioContext closes, and an app that keeps one context for many sessions
 * would pile up silent processors, one pair per session.
 */
export type CloseMessage = { kind: "close" };

/** A worklet's answer to `{kind:"profile"}`: its process() timings (benchmarks only; see worklets/process-clock.ts). */
export type ProfileReport = { kind: "profile"; micros: Float32Array; meanMicrosByDate: number; clock: string };

/**
 * MessagePort path only: what the Player's producer sends, in order on the
 * node's port, where the shared path writes the ring and control block.
 */
export type PlaybackFeedMessage =
  /** Samples of `generation`, transferred. */
  | { kind: "pcm"; generation: number; samples: Float32Array }
  /** `generation` is now the newest; older audio is dropped. */
  | { kind: "fence"; generation: number }
  /** `generation`'s writes are complete. */
  | { kind: "end"; generation: number };

/** Main → playback worklet, over the node's port. */
export type MainToPlaybackMessage =
  | PlaybackCommand
  | PlaybackFeedMessage
  /** Hand the worklet one end of a control channel (PlaybackCommand messages). */
  | { kind: "attach-control"; port: MessagePort }
  | { kind: "profile" }
  | CloseMessage;

/** Playback worklet → main. Posted on transitions only (and for the MessagePort path, progress). */
export type PlaybackToMainMessage =
  /** The first audible sample of `generation` is at `contextTime` (frame `frame`). */
  | { kind: "started"; generation: number; contextTime: number; frame: number }
  /** The ring ran dry while `generation` was playing and not complete. */
  | { kind: "underrun"; generation: number; underruns: number; frame: number }
  /** `generation` was complete and its last sample has been rendered. */
  | { kind: "ended"; generation: number; samples: number; frame: number }
  /** A flush was applied at the start of the quantum at `frame`. */
  | { kind: "flushed"; generation: number; frame: number; dropped: number }
  /** Rendering state and counters (MessagePort path: the only way position travels). */
  | {
      kind: "status";
      generation: number;
      rendered: number;
      underruns: number;
      state: PlaybackState;
      /** Samples in the worklet's ring, and waiting to enter it. */
      buffered: number;
    }
  /** Room in the ring again (the producer asked with WANT_SPACE). */
  | { kind: "space" }
  | ProfileReport;

// ---- Capture ----

export type UplinkFormat = "s16" | "f32";

/** `processorOptions` of the `bargein-capture` node. */
export interface CaptureProcessorOptions {
  /** Produce 16 kHz VAD frames (posted once a VAD port is connected). */
  vad: boolean;
  /** Uplink frames posted to the main thread, if any. */
  uplink?: { sampleRate: number; format: UplinkFormat; frameSamples: number };
  /** Level meter window, in ms. */
  meterIntervalMs: number;
  /**
   * The echo guard (worklets/capture-echo.ts): `tap` names the playback
   * worklet's echo tap in this context (worklets/echo-tap.ts); `tailMs` is
   * the echo tail the adaptive filter covers.
   */
  echoGuard?: { tap: string; tailMs?: number; cleanUplink?: boolean };
  profile?: boolean;
  profileClock?: SharedArrayBuffer;
  /** Where to keep the raw input's level for the main thread (src/audio/level-cell.ts); crossOriginIsolated only. */
  levelCell?: SharedArrayBuffer;
}

/** Main → capture worklet. */
export type MainToCaptureMessage =
  | { kind: "connect-vad"; port: MessagePort }
  | { kind: "meter"; enabled: boolean }
  /** Muted: the microphone's input is replaced by silence, for the VAD and the uplink alike. */
  | { kind: "mute"; muted: boolean }
  /**
   * The main thread just swapped the source node (a new input device): count
   * the quanta until the new input's first non-zero sample, and report them.
   */
  | { kind: "swap-mark"; id: number }
  | { kind: "profile" }
  | CloseMessage;

/** Capture worklet → main, over the node's port. */
export type CaptureToMainMessage =
  /** The capture's first quantum: its sample 0 is context frame `frame`. */
  | { kind: "capture-started"; frame: number; contextTime: number; sampleRate: number }
  /** One uplink frame, transferred. */
  | {
      kind: "uplink-frame";
      samples: Int16Array | Float32Array;
      /** Index of the first sample in the uplink-rate stream. */
      sampleIndex: number;
      /** Context time at which the frame's last input sample was captured. */
      contextTime: number;
    }
  | { kind: "level"; rms: number; contextTime: number }
  /**
   * The browser skipped this node's process() for `frames` context frames
   * before `contextTime`: that audio never reached the worklet. It was counted
   * as silence, so later sample indices stay locked to the context's frames.
   */
  | { kind: "capture-gap"; frames: number; contextTime: number }
  /** About once a second while the echo guard runs: what it achieves (see EchoGuardState). */
  | { kind: "echo-stats"; erleDb: number; delayMs: number; converged: boolean; referenceActive: boolean; contextTime: number }
  /**
   * After "swap-mark" `id`: `frames` context frames of the input were silent
   * (no channel, or digital zero) before the new device's first sample;
   * `capped` when none came within a second (a truly silent input).
   */
  | { kind: "swap-gap"; id: number; frames: number; capped: boolean; contextTime: number }
  | ProfileReport;
