/**
 * `vad.onsetPause`: what the onset cue (src/vad/onset-cue.ts) does to the bot
 * on a sudden rise of the mic's level, before Silero calls it speech. The
 * option's type, and its check into the worker's OnsetCueSettings. Pure.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import type { OnsetCueSettings } from "../protocol/vad-messages.js";

/** VAD frames are 32 ms (512 samples at 16 kHz). */
const MS_PER_FRAME = 32;

/**
 * The onset cue's rule, when `onsetPause` is an object; each field left out
 * takes its default. The defaults were chosen by `npm run bench -- noise`
 * (bench/results/noise.json, docs/benchmarks.md), which measures what room
 * sounds cost the listener against how soon real voices silence the bot.
 */
export interface OnsetPauseOptions {
  /**
   * `"duck"`: at the cue the bot plays on, `duckDb` softer, and goes silent
   * once the sound turns speech-like (a frame at `silenceProbability`, or
   * Silero's speech start); a keystroke, a door or music costs a dip, not a
   * gap. `"pause"`: silent at the cue itself (the fastest for voices, but
   * every such sound pauses the bot).
   * @defaultValue "duck"
   */
  action?: "duck" | "pause";
  /**
   * How much softer the bot plays while ducked (dB, 1 to 60).
   * @defaultValue 12
   */
  duckDb?: number;
  /**
   * Silero's probability (0 to 1) at which a frame after the cue is
   * speech-like: a duck becomes a pause there, below Silero's own speech
   * start (`positiveSpeechThreshold`), which pauses in any case.
   * @defaultValue 0.15
   */
  silenceProbability?: number;
  /**
   * After this long (ms) with no speech-like frame since the cue, the bot
   * plays on as before, even while the sound goes on (a ringing tail, music,
   * applause). 0: only the cue's quiet or its 480 ms cap release it.
   * @defaultValue 96
   */
  quickReleaseMs?: number;
  /**
   * A frame after the cue that is periodic at a voice's pitch (80–400 Hz)
   * with a normalised autocorrelation of at least this (0 to 1) is
   * speech-like too, before Silero says so: a vowel silences the bot at
   * once. 0: off (Silero's probability alone).
   * @defaultValue 0
   */
  voicing?: number;
  /**
   * At each cue, reset Silero's recurrent state, so the frames after it are
   * judged as a fresh stream. Why: after minutes of room sound with no
   * speech, the state answers a voice's first frames late (offline, on the
   * bench's recordings, "and" reached 0.3 249 ms after its onset after a
   * run of room sounds, and 57 ms from a state reset at the cue); a fresh
   * state is also readier to call a cough speech.
   * @defaultValue false
   */
  resetModel?: boolean;
}

/** `onsetPause` as the worker takes it; null: off. Throws a ConfigError naming a bad value. */
export function resolveOnsetPause(option: unknown, owner = "VadWorker"): OnsetCueSettings | null {
  if (option === false) return null;
  const d = DEFAULTS.vad.onsetPause;
  if (option === undefined || option === true) return settingsOf(d);
  if (typeof option !== "object" || option === null) {
    throw new ConfigError(`${owner}: \`onsetPause\` must be true, false or an object ({ action, duckDb, silenceProbability, quickReleaseMs, voicing }), not ${JSON.stringify(option)}`, { service: "vad" });
  }
  const given = option as OnsetPauseOptions & { enabled?: boolean };
  if (given.enabled === false) return null;
  const merged = { ...d, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) } as Required<OnsetPauseOptions>;
  const bad = (name: string, what: string, value: unknown) =>
    new ConfigError(`${owner}: \`onsetPause.${name}\` must be ${what}, not ${JSON.stringify(value)}`, { service: "vad" });
  if (merged.action !== "duck" && merged.action !== "pause") throw bad("action", '"duck" or "pause"', merged.action);
  if (!(Number.isFinite(merged.duckDb) && merged.duckDb >= 1 && merged.duckDb <= 60)) throw bad("duckDb", "a number of dB from 1 to 60", merged.duckDb);
  if (!(Number.isFinite(merged.silenceProbability) && merged.silenceProbability >= 0 && merged.silenceProbability <= 1)) {
    throw bad("silenceProbability", "a number from 0 to 1", merged.silenceProbability);
  }
  if (!(Number.isFinite(merged.quickReleaseMs) && merged.quickReleaseMs >= 0)) throw bad("quickReleaseMs", "a number of ms ≥ 0", merged.quickReleaseMs);
  if (!(Number.isFinite(merged.voicing) && merged.voicing >= 0 && merged.voicing <= 1)) throw bad("voicing", "a number from 0 to 1", merged.voicing);
  if (typeof merged.resetModel !== "boolean") throw bad("resetModel", "true or false", merged.resetModel);
  return settingsOf(merged);
}

function settingsOf(o: Required<OnsetPauseOptions>): OnsetCueSettings {
  return {
    action: o.action,
    duckDb: o.duckDb,
    silenceProbability: o.silenceProbability,
    quickReleaseFrames: o.quickReleaseMs > 0 ? Math.max(1, Math.round(o.quickReleaseMs / MS_PER_FRAME)) : 0,
    voicing: o.voicing,
    resetModel: o.resetModel,
  };
}
