/**
 * The onset cue: a pause of the bot on a sudden rise of the mic's level,
 * before Silero calls it speech. Pure (no DOM, no model, no clock), run by
 * the VAD worker on every frame while its auto-pause is armed.
 *
 * Why: on recordings of real people (pocketsphinx-testdata's LibriVox and
 * CMU readings, `npm run bench -- bargein`, humanSpeech), Silero's first
 * speech frame came 150–320 ms after the speech's onset where a word begins
 * with a fricative or a breathy /h/ ("four", "he was"), against 5–60 ms for
 * the rest, whatever the threshold (0.05 gave the same frame as 0.3 in 17
 * of 20 alignments). The level rises at once. A pause is cheap and loses
 * nothing, so it may come on that weaker cue; only Silero's speech start
 * keeps it, and the barge-in is still confirmed by speech (`minSpeechMs`)
 * or words as before.
 *
 * The rule, per 32 ms frame (its loudest 8 ms window, so an onset late in a
 * frame is not averaged away):
 * - a frame the echo guard calls the bot's own ("echo") is never a cue, and
 *   counts as quiet; nor is any frame while the bot's audio comes back by an
 *   echo path the guard has learned (open speakers): there the level is the
 *   echo's residual as much as the user, and Silero with the pause lapse
 *   decides alone: in the echo bench (`npm run bench -- echo`), a cue on the
 *   guard's doubtful or even its trusted frames paused the bot on its own
 *   echo several times a reply. With headphones, or no guard, there is no
 *   residual, and the cue acts;
 * - a cue: at least ONSET_MIN_DBFS, and ONSET_RISE_DB above the level the
 *   cue has tracked as the room's floor (the quietest recent frames, rising
 *   slowly back up when the room gets louder);
 * - the pause it made is released (the bot plays on) after RELEASE_QUIET
 *   frames back near the floor with no speech start, or HOLD_MAX_FRAMES (480 ms) in
 *   all: a click or a bump costs a gap of about 64 ms. A rise that outlasts
 *   the hold with no speech becomes the floor (the room got louder), so it
 *   does not pause the bot again at once.
 */
import type { FrameEcho } from "../protocol/frames.js";

/** A cue must reach this level (dBFS): under it, a rise is the room, not a voice. */
export const ONSET_MIN_DBFS = -50;
/** How far over the tracked floor a frame's loudest 8 ms must be (dB). */
export const ONSET_RISE_DB = 15;
/** A frame within this of the floor is quiet again (dB). */
const QUIET_WITHIN_DB = 8;
/** Quiet frames after which a cue with no speech start lets the bot play on. */
const RELEASE_QUIET = 2;
/**
 * The longest a cue holds the bot with no speech start (frames: 480 ms).
 * A soft start can come that far ahead of Silero's speech start: a CMU
 * reader's "four" was loud enough to cue 119 ms before its −20 dB onset,
 * and Silero called it 201 ms after; at 320 ms the pause lifted between.
 */
const HOLD_MAX_FRAMES = 15;
/** The floor never goes under this (dBFS): digital silence is not a room. */
const FLOOR_MIN_DBFS = -70;
/** How fast the floor follows a room that got louder (dB per frame: about 6 dB/s). */
const FLOOR_RISE_DB_PER_FRAME = 0.2;
/** Windows per frame for the level (8 ms each at 16 kHz). */
const WINDOWS = 4;

export type OnsetAction = "pause" | "release" | null;

export class OnsetCue {
  #floorDb = FLOOR_MIN_DBFS;
  #holding = false;
  #held = 0;
  #quiet = 0;
  /** The quietest frame since the cue: what the room is, if no speech comes. */
  #holdMinDb = 0;

  /** Whether a pause of the cue's own stands (no speech start has taken it over). */
  get holding(): boolean {
    return this.#holding;
  }

  /**
   * One frame. `armed`: a reply is playing that a pause would hold (the
   * worker's auto-pause is armed and no pause stands); `speaking`: Silero
   * is in an utterance; `echoPath`: the frame's bot audio came back by a
   * learned echo path (VadFrameMessage.echoPath): then no cue. Returns what to do with playback.
   */
  push(frame: Float32Array, echo: FrameEcho, armed: boolean, speaking: boolean, echoPath = false): OnsetAction {
    const level = echo === "echo" ? -Infinity : loudestWindowDb(frame);
    const doubtful = echoPath && echo !== "clear";
    const quiet = level < this.#floorDb + QUIET_WITHIN_DB;
    if (this.#holding) {
      this.#held++;
      this.#quiet = quiet ? this.#quiet + 1 : 0;
      this.#holdMinDb = Math.min(this.#holdMinDb, level);
      if (this.#quiet >= RELEASE_QUIET || this.#held >= HOLD_MAX_FRAMES) {
        this.#holding = false;
        // A rise that lasted with no speech is the room now (a fan, a noisier mic): the floor takes it,
        // so it does not cue again at once. After a click the quietest frame is the old floor anyway.
        if (this.#holdMinDb !== -Infinity) this.#floorDb = Math.max(this.#floorDb, this.#holdMinDb);
        return "release";
      }
      return null;
    }
    const cue = !speaking && armed && !doubtful && level >= ONSET_MIN_DBFS && level >= this.#floorDb + ONSET_RISE_DB;
    if (!speaking && !cue) this.#track(level);
    if (!cue) return null;
    this.#holding = true;
    this.#held = 1; // the cue's own frame
    this.#quiet = 0;
    this.#holdMinDb = level;
    return "pause";
  }

  /** Silero's speech start took the pause over (or the session moved on): the cue holds nothing now. */
  handOver(): void {
    this.#holding = false;
  }

  #track(level: number): void {
    if (level === -Infinity) return;
    this.#floorDb = Math.max(FLOOR_MIN_DBFS, Math.min(level, this.#floorDb + FLOOR_RISE_DB_PER_FRAME));
  }
}

/** The loudest of the frame's WINDOWS windows, in dBFS (RMS). */
export function loudestWindowDb(frame: Float32Array): number {
  const size = Math.floor(frame.length / WINDOWS);
  let loudest = 0;
  for (let w = 0; w < WINDOWS; w++) {
    let sum = 0;
    for (let i = w * size; i < (w + 1) * size; i++) sum += frame[i]! * frame[i]!;
    loudest = Math.max(loudest, sum / size);
  }
  return loudest > 0 ? 10 * Math.log10(loudest) : -Infinity;
}
