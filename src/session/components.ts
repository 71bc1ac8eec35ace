/**
 * Builds a session's real components in the browser: one AudioContext, the
 * Microphone and its capture worklet, the Player and its playback worklet, and
 * the VAD worker, wired so that audio frames go worklet → worker with no
 * main-thread hop and the worker can pause playback directly.
 */
import type { ComponentsFactory } from "./voice-session.js";

export const createComponents: ComponentsFactory = async () => {
  throw new Error("createComponents: not wired yet");
};
