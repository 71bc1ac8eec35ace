// How one barge-in went, read from the recorded output alone (rig.js): the
// same rules for both clients. Pure; times are context seconds.
import { RATE, SILENT } from "./rig.js";

/** A rendered sample differs from the item's own by more than this: a fade or a cut began (unity gain renders s16/32768 exactly). */
const SAME = 1e-6;

/**
 * @param {{ startFrame: number, samples: Float32Array, known: Uint8Array }} rec  the window, from before the item's first sample
 * @param {Int16Array} pcm  the item's audio as received
 * @param {{ onset: number, speechEnd: number, confirmAt?: number }} t
 *   onset: the barge-in's speech onset; speechEnd: its labelled end; confirmAt: when the client
 *   stopped the item for good (bargein: the interruption; the peer: audio_interrupted)
 */
export function judgeBargeIn(rec, pcm, t) {
  const { samples } = rec;
  const index = (s) => Math.round(s * RATE) - rec.startFrame;
  const onsetAt = index(t.onset);
  const quietUntil = Math.min(samples.length, index(t.speechEnd + 0.3));
  let unknownQuanta = 0;
  for (let q = Math.floor(onsetAt / 128); q < Math.ceil(quietUntil / 128); q++) if (!rec.known[q]) unknownQuanta++;
  let peakBefore = 0;
  for (let i = Math.max(0, onsetAt - 0.3 * RATE); i < onsetAt; i++) peakBefore = Math.max(peakBefore, Math.abs(samples[i]));
  // Silent for good: one sample after the last sound before the user's speech ended (+0.3 s).
  let silentAt = onsetAt;
  for (let i = quietUntil - 1; i >= onsetAt; i--) {
    if (Math.abs(samples[i]) >= SILENT) {
      silentAt = i + 1;
      break;
    }
  }
  let staleSamples = null;
  if (t.confirmAt !== undefined) {
    staleSamples = 0;
    for (let i = Math.max(0, index(t.confirmAt + 0.02)); i < quietUntil; i++) if (Math.abs(samples[i]) >= SILENT) staleSamples++;
  }
  // Where the item starts: its first non-zero sample lands on the recording's first non-zero one.
  let firstPcm = 0;
  while (firstPcm < pcm.length && pcm[firstPcm] === 0) firstPcm++;
  let firstRec = 0;
  while (firstRec < samples.length && samples[firstRec] === 0) firstRec++;
  const itemStart = firstRec - firstPcm;
  // The rendered part: up to where the output stops matching the item, less trailing zeros.
  let diverged = firstPcm;
  while (diverged < pcm.length && itemStart + diverged < samples.length && Math.abs(samples[itemStart + diverged] - pcm[diverged] / 32768) <= SAME) diverged++;
  let end = diverged;
  while (end > 0 && Math.abs(pcm[end - 1] / 32768) < SILENT) end--;
  return {
    onsetToSilentMs: ((silentAt - onsetAt) / RATE) * 1000,
    staleSamples,
    renderedMs: (end / RATE) * 1000,
    botAudibleAtOnset: peakBefore > 0.01,
    // The recording matched the item up to the onset at least (else the alignment is wrong).
    aligned: itemStart >= 0 && itemStart + diverged >= onsetAt,
    // Where the output stopped matching the item, and what each held there: to tell a cut from a glitch.
    divergedMs: (diverged / RATE) * 1000,
    atDivergence: {
      output: Array.from(samples.subarray(itemStart + diverged - 2, itemStart + diverged + 6), (v) => Math.round(v * 32768)),
      item: Array.from(pcm.subarray(diverged - 2, diverged + 6)),
    },
    unknownQuanta,
  };
}

/**
 * The words a listener heard of an item cut at `heardMs` of its audio, by the
 * emulator's own rule (a word is kept when its midpoint was heard:
 * demo/server/core/realtime-conversation.mjs heardWords).
 * @param {{ text: string, start: number, stop: number }[]} words
 */
export function wordsHeard(words, heardMs) {
  return words.filter((w) => ((w.start + w.stop) / 2) * 1000 <= heardMs).length;
}
