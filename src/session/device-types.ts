/**
 * The public types of device switching and of the visualizer data
 * (session/session-devices.ts, VoiceSession.getLevels()).
 */
import type { ChannelLevel } from "../audio/level-meter.js";

export type { ChannelLevel } from "../audio/level-meter.js";

/** One audio device, as `navigator.mediaDevices.enumerateDevices()` lists it. */
export interface AudioDevice {
  deviceId: string;
  groupId: string;
  /** Empty until the page has the microphone permission. */
  label: string;
}

export interface DeviceList {
  inputs: AudioDevice[];
  outputs: AudioDevice[];
}

/**
 * `devicechange`: the audio devices now. `inputLost` is true when the input
 * the session captured is gone and it moved to the default (a `warning` says so).
 */
export interface DeviceChangeEvent extends DeviceList {
  inputLost: boolean;
}

/** `inputDevice`: the capture moved to another device (`setInputDevice()` or a fallback). */
export interface InputDeviceEvent {
  /** The device asked for; undefined: the default. */
  deviceId: string | undefined;
  /** "app": setInputDevice(); "fallback": the device went away and the default took over. */
  reason: "app" | "fallback";
  /** Input lost across the swap, in ms: the new device's silence before its first sample. */
  gapMs: number;
}

/** `metrics.devices`. */
export interface DeviceMetrics {
  inputSwaps: number;
  /** The last swap's gap (ms), or null before any swap. */
  lastSwapGapMs: number | null;
  maxSwapGapMs: number;
}

/**
 * `session.getLevels()`: each side's level now, in dBFS (at least -100), and
 * its frequency bins when asked for. Read it in requestAnimationFrame.
 */
export interface AudioLevels {
  /** The microphone, before the mute (a muted mic still shows the user's voice, as a hint). */
  input: ChannelLevel;
  /** What the bot plays, as rendered. */
  output: ChannelLevel;
}
