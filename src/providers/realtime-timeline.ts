/**
 * One reply's audio as the client received it, over every model item of the
 * reply (a tool round adds a response, so an item): where each item starts in
 * the reply's audio, how much of it arrived, and when each transcript delta
 * arrived relative to the audio. Pure; the clock is the audio itself.
 *
 * It answers the two questions of a cut at `heardS` (the player's rendered
 * position for the reply, less the output latency, from the session):
 * - the truncates: the item being heard gets `audio_end_ms` = the heard ms
 *   of that item, floored, and never more than the audio received of it (the
 *   service refuses more: "Audio content of Xms is already shorter than Yms");
 *   a later item that arrived but was not reached is truncated to 0;
 * - the words and their timings, for the history's heard-text cut
 *   (history.ts splitHeard). The service gives no word timings, so they are
 *   estimated: a transcript delta's text is spread, by characters, over the
 *   audio that arrived from it up to the next delta (the GA service and the
 *   emulator send a phrase's transcript ahead of its audio). The last span,
 *   still arriving, lasts at least its characters at the speaking rate seen
 *   so far (DEFAULT_CHARS_PER_S before any).
 *
 * Allocation: per delta; nothing on the audio thread. Owner: the realtime
 * reply audio stream (openai-realtime.ts).
 */
import { REALTIME_RATE } from "./realtime-wire.js";

/** About 14 characters a second: ordinary English speech, spaces included. */
export const DEFAULT_CHARS_PER_S = 14;

export interface TimedText {
  text: string;
  startS: number;
  stopS: number;
}

interface ItemAudio {
  id: string;
  start: number;
  samples: number;
}

interface Span {
  /** Index in the reply's text where the delta begins. */
  char: number;
  /** Reply sample where its audio begins. */
  sample: number;
}

export class ReplyTimeline {
  readonly #rate: number;
  readonly #items: ItemAudio[] = [];
  readonly #spans: Span[] = [];
  #text = "";
  #samples = 0;
  /** The reply's audio is complete (its last response is done). */
  #complete = false;

  constructor(rate = REALTIME_RATE) {
    this.#rate = rate;
  }

  /** Samples received for the reply so far. */
  get samples(): number {
    return this.#samples;
  }

  /** `samples` more samples of item `itemId` arrived. */
  audio(itemId: string, samples: number): void {
    let item = this.#items.at(-1);
    if (item?.id !== itemId) {
      item = this.#items.find((i) => i.id === itemId) ?? { id: itemId, start: this.#samples, samples: 0 };
      if (!this.#items.includes(item)) this.#items.push(item);
    }
    item.samples += samples;
    this.#samples += samples;
    this.#complete = false;
  }

  /** A transcript delta arrived (before the audio that voices it). */
  transcript(delta: string): void {
    if (!delta) return;
    // A new round's first words follow the last ones with a space.
    const joined = this.#text && /\S$/.test(this.#text) && /^\S/.test(delta) && this.#complete ? ` ${delta}` : delta;
    this.#spans.push({ char: this.#text.length, sample: this.#samples });
    this.#text += joined;
    this.#complete = false;
  }

  /** The reply's audio so far is all there is (response.done). */
  complete(): void {
    this.#complete = true;
  }

  /** The reply's words with estimated timings (seconds from its first sample). */
  words(): TimedText[] {
    const words: TimedText[] = [];
    const re = /\S+/g;
    for (let m = re.exec(this.#text); m; m = re.exec(this.#text)) {
      words.push({ text: m[0], startS: this.#timeOfChar(m.index), stopS: this.#timeOfChar(m.index + m[0].length) });
    }
    return words;
  }

  /** The words heard in a cut at `heardS`: those whose midpoint is at or before it (history.ts splitHeard's rule). */
  heardText(heardS: number): string {
    return this.words()
      .filter((w) => (w.startS + w.stopS) / 2 <= heardS)
      .map((w) => w.text)
      .join(" ");
  }

  /** The truncates for a cut at `heardS` of the reply's audio. */
  truncates(heardS: number): Array<{ itemId: string; audioEndMs: number }> {
    const heard = Math.max(0, heardS) * this.#rate;
    const out: Array<{ itemId: string; audioEndMs: number }> = [];
    for (const item of this.#items) {
      if (item.start + item.samples <= heard) continue; // heard whole
      const heardOfItem = Math.min(Math.max(0, heard - item.start), item.samples);
      out.push({ itemId: item.id, audioEndMs: Math.floor((heardOfItem * 1000) / this.#rate) });
    }
    return out;
  }

  #timeOfChar(char: number): number {
    const spans = this.#spans;
    let k = spans.length - 1;
    while (k > 0 && spans[k]!.char > char) k--;
    const span = spans[k];
    if (!span) return 0;
    const next = spans[k + 1];
    const endChar = next ? next.char : this.#text.length;
    let endSample = next ? next.sample : this.#samples;
    if (!next && !this.#complete) endSample = Math.max(endSample, span.sample + ((endChar - span.char) / this.#charsPerSecond()) * this.#rate);
    const share = endChar > span.char ? (char - span.char) / (endChar - span.char) : 0;
    return (span.sample + share * (endSample - span.sample)) / this.#rate;
  }

  /** The speaking rate of the spans whose audio is complete. */
  #charsPerSecond(): number {
    let chars = 0;
    let samples = 0;
    for (let k = 0; k + 1 < this.#spans.length; k++) {
      chars += this.#spans[k + 1]!.char - this.#spans[k]!.char;
      samples += this.#spans[k + 1]!.sample - this.#spans[k]!.sample;
    }
    return samples > this.#rate / 2 && chars > 0 ? chars / (samples / this.#rate) : DEFAULT_CHARS_PER_S;
  }
}
