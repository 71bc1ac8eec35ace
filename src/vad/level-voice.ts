/**
 * The level fallback: voice activity from the microphone's level alone, for
 * the seconds before Silero's model is ready (the session's
 * `vad.waitForModel: false`). Pure (no DOM, no model, no clock); the VAD
 * worker runs it on every frame until the model is ready.
 *
 * Its answer is a speech probability of 0 or 1, which the worker's one
 * SpeechDetector takes as it takes Silero's. So the hand-over is a change of
 * source between two frames: an utterance under way when the model comes goes
 * on under the model, neither cut nor begun twice, and every rule of the
 * detector (`minSpeechMs`, `redemptionMs`, `endWhenQuiet`, the echo verdicts)
 * holds for both.
 *
 * The rule, per 32 ms frame (its RMS level, in dBFS):
 * - voiced from ONSET_RISE_DB over the tracked floor, and at least
 *   MIN_VOICE_DBFS; once voiced, it stays so down to HOLD_RISE_DB over the
 *   floor, and HANGOVER_FRAMES more (a word's decay and the stop before a
 *   plosive are not the end of the voice, as they are not for Silero);
 * - the floor takes a quieter frame at once and rises slowly
 *   (FLOOR_RISE_DB_PER_FRAME): a room that got louder is the floor within
 *   seconds, and the voice in it ends;
 * - a frame the echo guard calls the bot's own ("echo"), and any frame it
 *   does not call "clear" while the bot's audio comes back by a learned echo
 *   path (open speakers), is quiet: its level is the echo's as much as the
 *   user's (the onset cue's rule too, src/vad/onset-cue.ts). With
 *   headphones, or no guard, the level is the user's.
 *
 * Allocation: none per frame.
 */
import type { FrameEcho } from "../protocol/frames.js";

/** Under this level (dBFS) a frame is never voice: the room, not a person near the mic. */
export const MIN_VOICE_DBFS = -50;
/** How far over the floor a frame must be to start the voice (dB). */
export const ONSET_RISE_DB = 12;
/** How far over the floor a frame must stay to keep the voice going (dB). */
export const HOLD_RISE_DB = 6;
/** Frames the voice outlasts its level (96 ms). */
export const HANGOVER_FRAMES = 3;
/** The floor never goes under this (dBFS): digital silence is not a room. */
const FLOOR_MIN_DBFS = -70;
/** How fast the floor follows a room that got louder (dB per frame: about 6 dB/s, as the onset cue's). */
const FLOOR_RISE_DB_PER_FRAME = 0.2;

export class LevelVoice {
  #floorDb = FLOOR_MIN_DBFS;
  #voiced = false;
  #hangover = 0;

  /** The level it tracks as the room's (dBFS). */
  get floorDb(): number {
    return this.#floorDb;
  }

  /**
   * One frame: 1 while it hears a voice, else 0. `echo` and `echoPath`: the
   * echo guard's verdict on the frame and whether the bot's audio comes back
   * by a learned echo path (VadFrameMessage), when the guard runs.
   */
  probability(frame: Float32Array, echo: FrameEcho = "clear", echoPath = false): number {
    const heard = echo !== "echo" && !(echoPath && echo !== "clear");
    const level = heard ? rmsDb(frame) : -Infinity;
    const hold = Math.max(MIN_VOICE_DBFS - (ONSET_RISE_DB - HOLD_RISE_DB), this.#floorDb + HOLD_RISE_DB);
    const onset = Math.max(MIN_VOICE_DBFS, this.#floorDb + ONSET_RISE_DB);
    if (level >= (this.#voiced ? hold : onset)) {
      this.#voiced = true;
      this.#hangover = HANGOVER_FRAMES;
    } else if (this.#voiced && this.#hangover > 0) {
      this.#hangover--;
    } else {
      this.#voiced = false;
    }
    if (level !== -Infinity) this.#floorDb = Math.max(FLOOR_MIN_DBFS, Math.min(level, this.#floorDb + FLOOR_RISE_DB_PER_FRAME));
    return this.#voiced ? 1 : 0;
  }
}

/** The frame's RMS level in dBFS (-Infinity for digital silence). */
export function rmsDb(frame: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  return sum > 0 ? 10 * Math.log10(sum / frame.length) : -Infinity;
}
