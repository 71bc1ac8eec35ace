/**
 * Messages between threads are discriminated unions on `kind`. This file is
 * imported by the main thread, the worklets and the worker alike, so it holds
 * types and constants only: no DOM, no runtime dependencies.
 */

/** The VAD's input rate and frame size (Silero v5/v6: 512 samples = 32 ms). */
export const VAD_SAMPLE_RATE = 16000;
export const VAD_FRAME_SAMPLES = 512;

/**
 * Capture worklet → VAD worker, over a MessagePort handed to the worklet once.
 * `frame` is transferred, never copied.
 */
export interface VadFrameMessage {
  kind: "vad-frame";
  /** 512 mono samples at 16 kHz, float32 in [-1, 1]. */
  frame: Float32Array;
  /** Index of the frame's first sample in the 16 kHz stream since capture started. */
  sampleIndex: number;
  /** The AudioContext's `currentTime` (s) when the frame was completed. */
  contextTime: number;
  /**
   * The echo guard's verdict on the frame (absent without the guard):
   * - "echo": bot audio was playing and no block had near-end speech beyond
   *   its echo: the frame's voice is the bot's own; it neither starts speech
   *   nor counts toward a barge-in;
   * - "unconfirmed": near-end speech beyond the echo, but the guard cannot
   *   vouch for it yet (not converged, the echo path changed, or the gate just
   *   opened): it may start speech (a pause, which resumes if nothing
   *   follows) but does not count toward confirming a barge-in;
   * - "clear": no bot audio, or trusted near-end speech.
   */
  echo?: FrameEcho;
}

export type FrameEcho = "clear" | "echo" | "unconfirmed";

/**
 * Main → capture worklet (over the node's port), once: from now on, post every
 * completed VAD frame to `port` (whose other end belongs to the VAD worker).
 */
export interface ConnectVadMessage {
  kind: "connect-vad";
  port: MessagePort;
}

/**
 * Main → VAD worker, once: frames arrive on `port` (its other end was handed to
 * the capture worklet with a ConnectVadMessage).
 */
export interface ConnectFramesMessage {
  kind: "connect-frames";
  port: MessagePort;
}
