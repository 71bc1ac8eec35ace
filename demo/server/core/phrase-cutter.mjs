// Phrase cutting, a pure core shared by the TTS emulators: text streams in word by
// word, and synthesis runs phrase by phrase, so the first audio comes early while a
// phrase is still long enough to sound natural.

/**
 * Takes the next complete phrase off the front of the text received so far.
 * A phrase ends at a word closing a sentence or clause (. ! ? ; : and, from the
 * third word on, a comma), or after `chunkWords` words. A word counts as complete
 * only once the next one has begun (until then "Mr." or "3." may still grow), or at
 * the end of the input (`eos`).
 * @param {string} text received and not yet spoken
 * @param {boolean} eos no more text will come
 * @param {number} chunkWords longest phrase without punctuation
 * @returns {{ phrase: string, rest: string } | null} null: nothing to speak yet
 */
export function nextPhrase(text, eos, chunkWords) {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  const endsInSpace = /\s$/.test(text);
  const complete = eos || endsInSpace ? words.length : words.length - 1;
  let end = 0;
  for (let i = 0; i < complete; i++) {
    if (/[.!?;:]["')\]]*$/.test(words[i]) || (/,$/.test(words[i]) && i >= 2) || i + 1 >= chunkWords) {
      end = i + 1;
      break;
    }
  }
  if (end === 0 && eos) end = words.length;
  if (end === 0) return null;
  return {
    phrase: words.slice(0, end).join(" "),
    rest: words.slice(end).join(" ") + (endsInSpace && end < words.length ? " " : ""),
  };
}

/**
 * Appends a streamed text piece, adding a space when neither side has one.
 * @param {string} text @param {string} piece
 */
export function appendText(text, piece) {
  const needsSpace = text && !/\s$/.test(text) && !/^\s/.test(piece);
  return text + (needsSpace ? " " : "") + piece;
}
