/**
 * The Player's options, events and results (src/audio/player.ts), apart so
 * that the class stays one concept in one file.
 */
import type { AssetUrls } from "../assets/asset-urls.js";
export interface PlayerOptions {
  /** The shared AudioContext, created by the caller at the device's default rate. */
  context: AudioContext;
  /**
   * URL folder holding bargein's dist/ files (playback-worklet.js). Default:
   * beside bargein's bundle, which Vite and webpack 5 copy into the build.
   */
  assetsPath?: string;
  /** Per-file URLs: the player reads `assets.playbackWorklet`, which overrides `assetsPath`. */
  assets?: AssetUrls;
  /** Where the player's node connects (default: `context.destination`). */
  destination?: AudioNode;
  /** Audio held before a generation starts, in ms (default 40). */
  prebufferMs?: number;
  /** Pause/resume/flush ramp, in ms (default and maximum 5; at most 128 samples). */
  fadeMs?: number;
  /** Ring size, in seconds of audio (default 10). More waits on the main thread. */
  capacitySeconds?: number;
  /**
   * Publish what is rendered (after pause, fade and flush) to the echo tap of
   * this name, for a Microphone's echo guard in the same AudioContext
   * (`MicrophoneOptions.echoGuard.tap`). Default: none.
   */
  echoTap?: string;
  /**
   * Seconds from a sample's rendering to its being heard, when the app knows
   * them: the context's `outputLatency` and `baseLatency` are then never read.
   * Default: read when `start()` finds the context running, before the
   * player's node exists, and once more at the first `started` only if the
   * context reported none then (output-latency.ts says why not later).
   */
  outputLatency?: number;
  /** @internal Measure the worklet's process() time (benchmarks). */
  profile?: boolean;
  /** @internal A shared clock for worklets without `performance` (see worklets/process-clock.ts). */
  profileClock?: SharedArrayBuffer;
}

export interface PlayerWriteOptions {
  /** The rate of `pcm` (any; resampled to the context's rate). */
  sampleRate: number;
  /** The generation this audio belongs to. */
  generation: number;
}

export interface PlayerPosition {
  generation: number;
  /** Samples of `generation` rendered by the worklet, at the context's rate. */
  samples: number;
  seconds: number;
}

/** The first audible sample of `generation` is at `contextTime`. */
export interface PlayerStarted {
  generation: number;
  contextTime: number;
}

/** The worklet ran out of audio while playing `generation`; `underruns` is the total so far. */
export interface PlayerUnderrun {
  generation: number;
  underruns: number;
}

/** `generation` was ended with `end()` and has fully played. */
export interface PlayerEnded {
  generation: number;
  samples: number;
}

/** A flush was applied by the worklet at context frame `frame`. */
export interface PlayerFlushed {
  generation: number;
  frame: number;
  dropped: number;
}

export interface PlayerEvents extends Record<string, unknown> {
  started: PlayerStarted;
  underrun: PlayerUnderrun;
  ended: PlayerEnded;
  flushed: PlayerFlushed;
}

/** @internal process() durations reported by a worklet built with `profile`. */
export interface ProcessProfile {
  micros: Float32Array;
  meanMicrosByDate: number;
  clock: string;
}
