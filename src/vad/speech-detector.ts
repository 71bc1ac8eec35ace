/**
 * The speech state machine: frame probabilities in, speech events out. Pure (no
 * DOM, no model, no clock), so it runs in the VAD worker and in Node tests.
 *
 * It follows @ricky0123/vad-web's FrameProcessor rule for rule, so its events
 * line up with MicVAD's on the same audio:
 * - speech starts on the first frame with probability ≥ positiveSpeechThreshold;
 * - `speechRealStart` fires when the utterance has minSpeechMs of speech frames;
 * - a frame below negativeSpeechThreshold counts toward redemption; a speech
 *   frame resets the count; redemptionMs of such frames end the utterance;
 * - at the end, fewer than minSpeechMs of speech frames make it a misfire.
 * What it adds: every event names the frame that caused it (its first sample
 * index and context time), and the pre-speech pad is a bounded list.
 *
 * Ownership: `push` keeps a reference to `frame` (no copy) while it may still
 * belong to an utterance, so the caller must not reuse the buffer.
 */
import type { SpeechOptions } from "../protocol/vad-messages.js";
import { DOUBLE_TALK_THRESHOLD, PAUSE_LAPSE_MS, type FrameEcho } from "../protocol/frames.js";

export interface FrameTiming {
  sampleIndex: number;
  contextTime: number;
}

export type SpeechEvent =
  | { kind: "speechStart"; at: FrameTiming; probability: number }
  | { kind: "speechRealStart"; at: FrameTiming }
  /** `lastSpeech`: the utterance's last speech frame, where the user really stopped (`at` is redemptionMs later). */
  | { kind: "speechEnd"; at: FrameTiming; lastSpeech: FrameTiming; audioStartIndex: number; audio: Float32Array | undefined }
  | { kind: "misfire"; at: FrameTiming }
  /**
   * The utterance has no frame that counts toward `minSpeechMs` (all of it
   * over the bot, unvouched) and has been quiet for PAUSE_LAPSE_MS: playback
   * may resume while it stays quiet (`lapsed: true`); its next voiced frame
   * renews the pause (`lapsed: false`). The utterance itself goes on.
   */
  | { kind: "pauseLapse"; at: FrameTiming; lapsed: boolean }
  /**
   * `noticeQuiet(ms)`: a confirmed utterance has been quiet that long, short
   * of `redemptionMs` (it goes on): the user may be done. `lastSpeech`: where
   * the voice stopped. Once per quiet stretch.
   */
  | { kind: "speechQuiet"; at: FrameTiming; lastSpeech: FrameTiming }
  /** The voice came back after a `speechQuiet`, inside the same utterance: the user went on. */
  | { kind: "speechResumed"; at: FrameTiming }
  /**
   * `noticeVoiced(ms)`: a confirmed utterance's voice has lasted that long,
   * from its onset frame to this speech frame (it goes on). Once an utterance.
   */
  | { kind: "speechVoiced"; at: FrameTiming; voicedMs: number };

interface HeldFrame {
  frame: Float32Array;
  sampleIndex: number;
  isSpeech: boolean;
}

export interface SpeechDetectorOptions extends SpeechOptions {
  /** Length of one frame in ms: 32, since the worker feeds every model (legacy too) 512-sample 16 kHz frames. */
  msPerFrame: number;
  /** Keep frames so `speechEnd` can carry the utterance's audio. */
  keepAudio: boolean;
}

const NO_AUDIO = new Float32Array(0);

export class SpeechDetector {
  readonly #options: SpeechDetectorOptions;
  readonly #redemptionFrames: number;
  readonly #preSpeechPadFrames: number;
  readonly #minSpeechFrames: number;
  readonly #lapseFrames: number;
  #held: HeldFrame[] = [];
  #speaking = false;
  #realStartFired = false;
  #speechFrames = 0;
  #redemption = 0;
  /** The utterance's pause has lapsed (see `pauseLapse`). */
  #lapsed = false;
  /** endWhenQuiet(): end the utterance once this many quiet frames have run, at most #redemptionFrames (undefined: no request). */
  #endAtQuietFrames: number | undefined;
  /** noticeQuiet(): this many quiet frames in a confirmed utterance make a `speechQuiet` (undefined: off). */
  #quietNoticeFrames: number | undefined;
  /** A `speechQuiet` was sent for the quiet going on now. */
  #quietNoticed = false;
  /** noticeVoiced(): this many frames from a confirmed utterance's onset to a speech frame make a `speechVoiced` (undefined: off). */
  #voicedNoticeFrames: number | undefined;
  /** A `speechVoiced` was sent for the utterance going on now. */
  #voicedNoticed = false;
  /** Frames pushed so far, and the current utterance's onset among them. */
  #frames = 0;
  #onsetFrame = 0;
  #last: FrameTiming = { sampleIndex: 0, contextTime: 0 };
  /** The current utterance's latest frame at or over the speech threshold. */
  #lastVoiced: FrameTiming = { sampleIndex: 0, contextTime: 0 };

  constructor(options: SpeechDetectorOptions) {
    this.#options = options;
    // Same rounding as vad-web (floor), so both count the same frames.
    this.#redemptionFrames = Math.floor(options.redemptionMs / options.msPerFrame);
    this.#preSpeechPadFrames = Math.floor(options.preSpeechPadMs / options.msPerFrame);
    this.#minSpeechFrames = Math.floor(options.minSpeechMs / options.msPerFrame);
    this.#lapseFrames = Math.max(1, Math.round(PAUSE_LAPSE_MS / options.msPerFrame));
  }

  get speaking(): boolean {
    return this.#speaking;
  }

  /**
   * Feeds one frame and its model probability; returns the events it caused,
   * in order. `echo`, the echo guard's verdict (FrameEcho): an "echo" frame
   * is the bot's own voice and counts as silence; an "unconfirmed" one may
   * start speech (a pause is cheap and loses nothing) but does not count
   * toward `minSpeechMs`, so what the guard cannot vouch for ends as a
   * misfire, never as a real start; a "doubleTalk" one (trusted, over the
   * bot) counts only at DOUBLE_TALK_THRESHOLD or more.
   */
  push(frame: Float32Array, probability: number, at: FrameTiming, echo: FrameEcho = "clear"): SpeechEvent[] {
    const events: SpeechEvent[] = [];
    this.#last = at;
    this.#frames++;
    const voiced = echo !== "echo" && probability >= this.#options.positiveSpeechThreshold;
    const isSpeech = voiced && (echo === "clear" || (echo === "doubleTalk" && probability >= DOUBLE_TALK_THRESHOLD));
    // Without keepAudio only the counts matter: hold no audio at all.
    this.#held.push({ frame: this.#options.keepAudio ? frame : NO_AUDIO, sampleIndex: at.sampleIndex, isSpeech });
    if (voiced) {
      this.#redemption = 0;
      // The voice came back: whoever asked for the end (endWhenQuiet) heard a pause that was not one.
      this.#endAtQuietFrames = undefined;
      if (this.#quietNoticed) {
        this.#quietNoticed = false;
        events.push({ kind: "speechResumed", at });
      }
    }
    if (isSpeech) this.#speechFrames++;
    if (voiced && !this.#speaking) {
      this.#speaking = true;
      this.#onsetFrame = this.#frames;
      events.push({ kind: "speechStart", at, probability });
    } else if (voiced && this.#lapsed) {
      this.#lapsed = false;
      events.push({ kind: "pauseLapse", at, lapsed: false });
    }
    if (voiced) this.#lastVoiced = at;
    if (this.#speaking && !this.#realStartFired && this.#speechFrames === this.#minSpeechFrames) {
      this.#realStartFired = true;
      events.push({ kind: "speechRealStart", at });
    }
    const voicedFrames = this.#frames - this.#onsetFrame + 1;
    if (this.#voicedNoticeFrames !== undefined && !this.#voicedNoticed && isSpeech && this.#realStartFired && voicedFrames >= this.#voicedNoticeFrames) {
      this.#voicedNoticed = true;
      events.push({ kind: "speechVoiced", at, voicedMs: voicedFrames * this.#options.msPerFrame });
    }
    const quietFrame = this.#speaking && (probability < this.#options.negativeSpeechThreshold || echo === "echo");
    if (quietFrame && ++this.#redemption >= (this.#endAtQuietFrames ?? this.#redemptionFrames)) {
      events.push(this.#endSegment(at));
    } else if (quietFrame && this.#realStartFired && !this.#quietNoticed && this.#redemption === this.#quietNoticeFrames) {
      this.#quietNoticed = true;
      events.push({ kind: "speechQuiet", at, lastSpeech: this.#lastVoiced });
    } else if (this.#speaking && !this.#lapsed && this.#speechFrames === 0 && this.#redemption >= this.#lapseFrames) {
      this.#lapsed = true;
      events.push({ kind: "pauseLapse", at, lapsed: true });
    }
    if (!this.#speaking) {
      const excess = this.#held.length - this.#preSpeechPadFrames;
      if (excess > 0) this.#held.splice(0, excess);
      this.#speechFrames = 0;
    }
    return events;
  }

  /**
   * Stops the current utterance from outside (the source paused): it ends as
   * speechEnd/misfire when submitUserSpeechOnPause is set, else it is dropped.
   */
  pause(): SpeechEvent[] {
    if (this.#options.submitUserSpeechOnPause && this.#speaking) return [this.#endSegment(this.#last)];
    this.reset();
    return [];
  }

  /**
   * Someone else judged the turn over (the STT service's own end of turn):
   * end the utterance as soon as it has been quiet for `quietMs` (now, if it
   * has), as redemptionMs would later. Voice before that cancels the request.
   * With no utterance going on it does nothing.
   */
  endWhenQuiet(quietMs: number): SpeechEvent[] {
    if (!this.#speaking) return [];
    const frames = Math.max(1, Math.ceil(quietMs / this.#options.msPerFrame));
    if (this.#redemption >= frames) return [this.#endSegment(this.#last)];
    this.#endAtQuietFrames = Math.min(frames, this.#redemptionFrames);
    return [];
  }

  /**
   * From now on, a confirmed utterance that has been quiet `quietMs` (short
   * of `redemptionMs`) sends `speechQuiet`, and the voice coming back after
   * it `speechResumed`: a likely end of turn, before the certain one (a
   * preemptive reply starts there). `null` turns it off.
   */
  noticeQuiet(quietMs: number | null): void {
    this.#quietNoticeFrames = quietMs === null ? undefined : Math.max(1, Math.ceil(quietMs / this.#options.msPerFrame));
  }

  /**
   * From now on, a confirmed utterance whose voice has lasted `voicedMs` (its
   * onset frame to a speech frame, pauses within it included) sends
   * `speechVoiced`, once: speech that long over the bot is no backchannel.
   * `null` turns it off.
   */
  noticeVoiced(voicedMs: number | null): void {
    this.#voicedNoticeFrames = voicedMs === null ? undefined : Math.max(1, Math.ceil(voicedMs / this.#options.msPerFrame));
  }

  /** Forgets everything; the next frame starts from silence. */
  reset(): void {
    this.#held = [];
    this.#speaking = false;
    this.#realStartFired = false;
    this.#speechFrames = 0;
    this.#redemption = 0;
    this.#lapsed = false;
    this.#endAtQuietFrames = undefined;
    this.#quietNoticed = false;
    this.#voicedNoticed = false;
  }

  #endSegment(at: FrameTiming): SpeechEvent {
    const held = this.#held;
    this.reset();
    // vad-web counts speech frames over the whole held buffer, pad included.
    const speechFrames = held.reduce((n, h) => n + (h.isSpeech ? 1 : 0), 0);
    if (speechFrames < this.#minSpeechFrames) return { kind: "misfire", at };
    const audioStartIndex = held.length > 0 ? held[0].sampleIndex : at.sampleIndex;
    return {
      kind: "speechEnd",
      at,
      lastSpeech: this.#lastVoiced,
      audioStartIndex,
      audio: this.#options.keepAudio ? concat(held) : undefined,
    };
  }
}

function concat(held: HeldFrame[]): Float32Array {
  const out = new Float32Array(held.reduce((n, h) => n + h.frame.length, 0));
  let offset = 0;
  for (const h of held) {
    out.set(h.frame, offset);
    offset += h.frame.length;
  }
  return out;
}
