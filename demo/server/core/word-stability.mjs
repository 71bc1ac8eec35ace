// Word stability, a pure core shared by the STT emulators. pocketsphinx revises its
// newest words as audio arrives ("to" becomes "tomorrow"), so a streaming protocol
// that promises not to take a word back may only send a word once it has settled:
// it, every word before it and the word after it unchanged over the last `frames`
// hypotheses (one hypothesis per 80 ms decoded frame). The last word is never
// stable until the utterance ends, since nothing follows it yet.

/**
 * Appends a hypothesis to the recent ones, keeping the newest `frames`.
 * @param {readonly string[][]} recent oldest first
 * @param {string[]} words the newest hypothesis
 * @param {number} frames how many hypotheses to keep
 * @returns {string[][]} a new array; `recent` is not changed
 */
export function rememberHypothesis(recent, words, frames) {
  const next = [...recent, words];
  return next.length > frames ? next.slice(next.length - frames) : next;
}

/**
 * How many leading words of the newest hypothesis are stable.
 * @param {readonly string[][]} recent the last hypotheses, oldest first, newest last
 * @param {number} frames hypotheses a word must survive unchanged
 * @param {boolean} final the utterance has ended: every word of the newest hypothesis counts
 */
export function stableWordCount(recent, frames, final) {
  const newest = recent.at(-1) ?? [];
  if (final) return newest.length;
  if (recent.length < frames) return 0;
  let stable = newest.length;
  for (const earlier of recent) {
    let same = 0;
    while (same < stable && earlier[same] === newest[same]) same++;
    stable = same;
  }
  // The word after a stable word must be unchanged too, so the last common word waits.
  return Math.max(0, stable - 1);
}
