// The streaming recogniser shared by the STT emulators: 16 kHz audio in, 80 ms frames
// decoded by pocketsphinx (a Decoder from the DecoderPool), utterances cut by energy
// (core/utterance-cutter.mjs, 240 ms of pre-roll), and each frame's hypothesis with
// word times on the stream's timeline and how many of its words are stable
// (core/word-stability.mjs). The protocols (emulators/*.mjs) decide what to send.
import { floatToInt16 } from "./resample.mjs";
import { FRAME_RATE } from "./pocketsphinx.mjs";
import { cutFrame, frameRms, initialCutterState } from "./core/utterance-cutter.mjs";
import { rememberHypothesis, stableWordCount } from "./core/word-stability.mjs";

export const DECODER_RATE = 16000;
/** Samples of one decoded frame (80 ms at 16 kHz). */
export const FRAME_16K = 1280;
export const FRAME_SECONDS = FRAME_16K / DECODER_RATE;
const PREROLL_FRAMES = 3;
/** Frames (80 ms each) a word must stay unchanged in the hypothesis before it counts as stable. */
export const STABLE_FRAMES = 4;

/**
 * A recognised word on the stream's timeline: `start`, `end` in seconds (end exclusive,
 * one pocketsphinx frame after its last), and the decoder's frame indices within the utterance.
 * @typedef {{ word: string, start: number, end: number, startFrame: number, endFrame: number }} TimedWord
 */

/**
 * What one frame did.
 * @typedef {object} FrameResult
 * @property {boolean} silent        below `silenceRms`
 * @property {number} silentSeconds  quiet so far, this frame included
 * @property {boolean} started       an utterance began with this frame (or its pre-roll)
 * @property {boolean} ended         the utterance ended with this frame: `words` is final
 * @property {boolean} inUtterance   an utterance is open after this frame
 * @property {TimedWord[]} words     the utterance's current hypothesis (empty outside one)
 * @property {number} stableCount    leading words of `words` that will not change
 * @property {number} processed      16 kHz samples processed, this frame included
 */

export class StreamingRecogniser {
  /**
   * @param {import("./pocketsphinx.mjs").Decoder | null} decoder null: only silence is measured
   * @param {{ silenceRms?: number, endpointMs?: number }} [options]
   */
  constructor(decoder, options = {}) {
    this.decoder = decoder;
    this.silenceRms = options.silenceRms ?? 0.01;
    this.endpointFrames = Math.ceil((options.endpointMs ?? 480) / 1000 / FRAME_SECONDS);
    this.cutter = initialCutterState();
    /** @type {Int16Array[]} */
    this.preroll = [];
    /** Seconds on the stream's timeline where the open (or last) utterance began. */
    this.utteranceStart = 0;
    /** @type {string[][]} */
    this.recent = [];
    /** 16 kHz samples processed so far. */
    this.processed = 0;
  }

  /** Seconds on the stream's timeline of a decoder frame of the utterance. @param {number} frame */
  secondsAt(frame) {
    return this.utteranceStart + frame / FRAME_RATE;
  }

  /**
   * Decodes one frame (FRAME_16K samples, or fewer for the last piece before a flush).
   * Calls run one at a time (the caller awaits each).
   * @param {Float32Array} frame 16 kHz
   * @returns {Promise<FrameResult>}
   */
  async processFrame(frame) {
    const decoder = this.decoder;
    const silent = frameRms(frame) < this.silenceRms;
    const { state, event } = cutFrame(this.cutter, { silent, canStart: decoder !== null }, this.endpointFrames);
    this.cutter = state;
    const pcm = floatToInt16(frame);
    let words = /** @type {TimedWord[]} */ ([]);
    let stableCount = 0;
    if (decoder && event === "start") {
      this.utteranceStart = (this.processed - this.preroll.reduce((n, p) => n + p.length, 0)) / DECODER_RATE;
      this.recent = [];
      decoder.startUtterance();
      for (const p of this.preroll) await decoder.process(p);
      this.preroll = [];
    }
    if (decoder && (state.inUtterance || event === "end")) {
      await decoder.process(pcm);
      words = this.hypothesis(decoder);
      stableCount = stableWordCount(this.recent, STABLE_FRAMES, false);
      if (event === "end") {
        decoder.endUtterance();
        words = this.hypothesis(decoder);
        stableCount = words.length;
      }
    } else if (decoder) {
      this.preroll.push(pcm);
      if (this.preroll.length > PREROLL_FRAMES) this.preroll.shift();
    }
    this.processed += frame.length;
    return {
      silent,
      silentSeconds: state.silentRun * FRAME_SECONDS,
      started: event === "start",
      ended: event === "end",
      inUtterance: state.inUtterance,
      words,
      stableCount,
      processed: this.processed,
    };
  }

  /**
   * Ends the open utterance now, as if its endpoint had come (a client's flush): its words
   * become final. Resolves with them, or with [] when no utterance is open.
   * @returns {Promise<TimedWord[]>}
   */
  async finish() {
    const decoder = this.decoder;
    if (!decoder || !this.cutter.inUtterance) return [];
    decoder.endUtterance();
    this.cutter = { ...this.cutter, inUtterance: false };
    return this.hypothesis(decoder);
  }

  /**
   * The decoder's current words, remembered for the stability check.
   * @param {import("./pocketsphinx.mjs").Decoder} decoder
   * @returns {TimedWord[]}
   */
  hypothesis(decoder) {
    const segments = decoder.segments();
    this.recent = rememberHypothesis(this.recent, segments.map((s) => s.word), STABLE_FRAMES);
    return segments.map((s) => ({
      word: s.word,
      start: this.secondsAt(s.startFrame),
      end: this.secondsAt(s.endFrame + 1),
      startFrame: s.startFrame,
      endFrame: s.endFrame,
    }));
  }
}
