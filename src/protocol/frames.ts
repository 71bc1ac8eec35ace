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
}

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
