/**
 * Character timings to word timings, for the heard-text cut. ElevenLabs
 * sends, with each audio chunk, the characters that chunk voices and when
 * each starts and how long it lasts, in ms from the start of that chunk's own
 * audio. The session wants words with start and stop in the stream's audio
 * timeline, one per whitespace-separated token of the text (history's
 * `splitHeard` counts tokens), so:
 *
 * - a word is the run of characters between whitespace characters,
 *   punctuation included ("Hello," is one word, as in the reply's text);
 * - a chunk may end mid-word: the part so far is carried to the next chunk,
 *   and the word is complete at the next whitespace, or at `flushWord` (the
 *   context's end);
 * - `offsetS` places the chunk in the stream: the audio received before it.
 *
 * Pure: state in, state and words out; no clock, no DOM. The caller validates
 * the arrays (equal lengths, finite numbers) before calling.
 */

/** One chunk's alignment, as the service sends it (`alignment` or `normalizedAlignment`). */
export interface CharAlignment {
  readonly chars: readonly string[];
  readonly charStartTimesMs: readonly number[];
  readonly charDurationsMs: readonly number[];
}

/** A word and its span in the stream's audio timeline, in seconds. */
export interface AlignedWord {
  text: string;
  startS: number;
  stopS: number;
}

/** The words a chunk completed, and the word still open at its end (carried to the next chunk). */
export interface AlignmentStep {
  words: AlignedWord[];
  open: AlignedWord | undefined;
}

const WHITESPACE = /^\s+$/;

/**
 * Adds one chunk's characters to the word left open by the previous chunk
 * (`open`, or undefined) and returns the words completed in this chunk.
 */
export function alignWords(open: AlignedWord | undefined, alignment: CharAlignment, offsetS: number): AlignmentStep {
  const words: AlignedWord[] = [];
  let word = open ? { ...open } : undefined;
  const { chars, charStartTimesMs, charDurationsMs } = alignment;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i];
    if (char === "" || WHITESPACE.test(char)) {
      if (word) words.push(word);
      word = undefined;
      continue;
    }
    const startS = offsetS + charStartTimesMs[i] / 1000;
    const stopS = startS + Math.max(0, charDurationsMs[i]) / 1000;
    if (word) {
      word.text += char;
      // A later character never ends a word earlier (a zero-length character keeps the stop).
      word.stopS = Math.max(word.stopS, stopS);
    } else {
      word = { text: char, startS, stopS };
    }
  }
  return { words, open: word };
}

/** The word still open when the context ended: complete now. */
export function flushWord(open: AlignedWord | undefined): AlignedWord[] {
  return open ? [{ ...open }] : [];
}
