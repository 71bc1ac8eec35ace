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
 * The trigger, per 32 ms frame (its loudest 8 ms window, so an onset late in a
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
 *   slowly back up when the room gets louder).
 *
 * What a cue does (OnsetCueSettings, issue #40): a level rise is as often a
 * keystroke, a door or music as a voice, and Silero's probability tells
 * them apart only later. So by default a cue ducks the bot (it plays on,
 * `duckDb` softer) rather than silencing it, and the duck turns into a
 * pause on the first speech-like frame: Silero's probability at
 * `silenceProbability`, or (with `voicing`) a periodicity at a voice's pitch
 * (src/vad/voicing.ts), or Silero's speech start, which the worker handles. `action: "pause"` silences at the cue itself (the rule before
 * issue #40). In `npm run bench -- noise` the pause at the cue cost each
 * room sound about two pauses of up to 480 ms, while real voices reached the
 * probability within a frame or two of the cue.
 *
 * Release (the bot plays on as before): RELEASE_QUIET frames back near the
 * floor, or `quickReleaseFrames` frames with no frame at `silenceProbability`
 * (Silero heard nothing like speech: tails, reverb and dense sounds never
 * fall back to the floor, and held to the cap), or HOLD_MAX_FRAMES (480 ms)
 * in all. A rise that outlasts the hold with no speech becomes the floor
 * (the room got louder), so it does not cue again at once.
 */
import type { FrameEcho } from "../protocol/frames.js";
import type { OnsetCueSettings } from "../protocol/vad-messages.js";
import { isVoiced } from "./voicing.js";

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

/**
 * What the cue does to playback: "duck" (play on, softer), "pause" (silence;
 * after a duck: the sound turned speech-like), "release" (lift whatever the
 * cue holds).
 */
export type OnsetAction = "duck" | "pause" | "release" | null;

/** The rule before issue #40: silence at the cue, released by quiet or the cap. */
export const PAUSE_AT_CUE: OnsetCueSettings = { action: "pause", duckDb: 0, silenceProbability: 1, quickReleaseFrames: 0, voicing: 0, resetModel: false };

/** The cue's state: idle, or holding the bot (ducked or paused) since a cue. */
type CueState =
  | { phase: "idle" }
  | {
      phase: "holding";
      how: "duck" | "pause";
      /** Frames since the cue, its own included. */
      held: number;
      /** Quiet frames in a row. */
      quiet: number;
      /** The quietest frame since the cue: what the room is, if no speech comes. */
      minDb: number;
      /** A frame since the cue reached silenceProbability. */
      speechLike: boolean;
    };

export class OnsetCue {
  readonly #settings: OnsetCueSettings;
  #floorDb = FLOOR_MIN_DBFS;
  #state: CueState = { phase: "idle" };

  constructor(settings: OnsetCueSettings = PAUSE_AT_CUE) {
    this.#settings = settings;
  }

  /** Whether a duck or pause of the cue's own stands (no speech start has taken it over). */
  get holding(): boolean {
    return this.#state.phase === "holding";
  }

  /**
   * One frame. `armed`: a reply is playing that a pause would hold (the
   * worker's auto-pause is armed and no pause stands); `speaking`: Silero
   * is in an utterance; `echoPath`: the frame's bot audio came back by a
   * learned echo path (VadFrameMessage.echoPath): then no cue. `probability`:
   * Silero's for this frame. Returns what to do with playback.
   */
  push(frame: Float32Array, echo: FrameEcho, armed: boolean, speaking: boolean, echoPath = false, probability = 0): OnsetAction {
    const level = echo === "echo" ? -Infinity : loudestWindowDb(frame);
    const doubtful = echoPath && echo !== "clear";
    const s = this.#state;
    if (s.phase === "holding") {
      s.held++;
      s.quiet = level < this.#floorDb + QUIET_WITHIN_DB ? s.quiet + 1 : 0;
      s.minDb = Math.min(s.minDb, level);
      const like = this.#speechLike(frame, echo, probability, s.how === "duck" && !s.speechLike);
      s.speechLike ||= like;
      if (s.how === "duck" && like) {
        s.how = "pause";
        return "pause";
      }
      const quick = !s.speechLike && this.#settings.quickReleaseFrames > 0 && s.held >= this.#settings.quickReleaseFrames;
      if (s.quiet >= RELEASE_QUIET || s.held >= HOLD_MAX_FRAMES || quick) {
        this.#state = { phase: "idle" };
        // A rise that lasted with no speech is the room now (a fan, a noisier mic): the floor takes it,
        // so it does not cue again at once. After a click the quietest frame is the old floor anyway.
        if (s.minDb !== -Infinity) this.#floorDb = Math.max(this.#floorDb, s.minDb);
        return "release";
      }
      return null;
    }
    const cue = !speaking && armed && !doubtful && level >= ONSET_MIN_DBFS && level >= this.#floorDb + ONSET_RISE_DB;
    if (!speaking && !cue) this.#track(level);
    if (!cue) return null;
    const like = this.#speechLike(frame, echo, probability, this.#settings.action === "duck");
    const how = this.#settings.action === "pause" || like ? "pause" : "duck";
    this.#state = { phase: "holding", how, held: 1, quiet: 0, minDb: level, speechLike: like };
    return how;
  }

  /** Silero's speech start took the pause over (or the session moved on): the cue holds nothing now. */
  handOver(): void {
    this.#state = { phase: "idle" };
  }

  /**
   * Whether a frame is speech-like: Silero's probability at silenceProbability, or (only where it can change
   * something, `judgeVoicing`: a duck's frames) voiced at a voice's pitch. No allocation.
   */
  #speechLike(frame: Float32Array, echo: FrameEcho, probability: number, judgeVoicing: boolean): boolean {
    if (echo === "echo") return false;
    if (probability >= this.#settings.silenceProbability) return true;
    return judgeVoicing && this.#settings.voicing > 0 && isVoiced(frame, this.#settings.voicing);
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
