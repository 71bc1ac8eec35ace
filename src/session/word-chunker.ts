/**
 * Re-chunks an LLM's text deltas into whole words for the TTS. Deltas split
 * words anywhere ("Hel", "lo wor", "ld."); a TTS wants whole words, and the
 * first word as soon as it is complete. Pure, no DOM.
 */
export class WordChunker {
  #pending = "";

  /** Feeds a delta; returns the words it completed (with trailing punctuation attached). */
  push(delta: string): string[] {
    this.#pending += delta;
    const words: string[] = [];
    const re = /\s+/g;
    let start = 0;
    let match: RegExpExecArray | null;
    while ((match = re.exec(this.#pending))) {
      const word = this.#pending.slice(start, match.index);
      if (word) words.push(word);
      start = match.index + match[0].length;
    }
    this.#pending = this.#pending.slice(start);
    return words;
  }

  /** The last, unterminated word, if any; the chunker is then empty. */
  flush(): string[] {
    const word = this.#pending.trim();
    this.#pending = "";
    return word ? [word] : [];
  }
}
