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
   * - "doubleTalk": bot audio was playing and the guard trusts the near-end
   *   speech it found: it counts toward a barge-in only where the model is
   *   sure of it (DOUBLE_TALK_THRESHOLD), since the echo's own residual can
   *   hold the gate open for a while and reads as weak speech;
   * - "clear": no bot audio.
   */
  echo?: FrameEcho;
  /**
   * With the guard: whether bot audio reached the mic by an echo path the
   * guard has learned (false with headphones, where the mic passes through).
   * Only there can a frame's level be the echo's residual, so only there
   * does the onset cue (src/vad/onset-cue.ts) not act.
   */
  echoPath?: boolean;
}

export type FrameEcho = "clear" | "echo" | "unconfirmed" | "doubleTalk";

/**
 * The speech probability a "doubleTalk" frame needs to count toward
 * `bargeIn.minSpeechMs` (below it, it still starts speech: a pause that
 * resumes). Seen in Chromium at −6 dB of echo (test/browser/echo.spec.ts's
 * room, frame by frame, on a heavily loaded machine): where the echo's
 * residual held the gate open past its 150 ms of doubt, Silero gave it
 * 0.25–0.46, and those frames confirmed barge-ins of the bot by itself (twice
 * in 7 runs of 6 replies); a person talking over the bot scored 0.71–0.99 on
 * frames of the same kind. With this threshold: 0 self-interruptions in 20
 * runs (120 replies).
 */
export const DOUBLE_TALK_THRESHOLD = 0.6;

/**
 * How long an utterance that nothing has vouched for (every voiced frame of it
 * over the bot's audio, none counted toward `minSpeechMs`) may go quiet before
 * the worker lets the bot play again: a pause lapse. The utterance itself goes
 * on (its end still waits `redemptionMs`, so the session's view of it, its
 * held words included, is unchanged); its next voiced frame pauses again.
 * Without it every pause the bot's own echo caused held the bot silent for
 * the whole redemption (600 ms in a session): a stutter of its own voice.
 * Four 32 ms frames: a word gap in a person's speech is usually shorter.
 */
export const PAUSE_LAPSE_MS = 128;

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
