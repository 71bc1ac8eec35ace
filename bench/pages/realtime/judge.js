// How one barge-in went, read from the recorded output alone (rig.js): the
// same rules for both clients. Pure; times are context seconds.
import { RATE, SILENT } from "./output-rate.js";

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
  const { rendered, divergedAt } = followItem(rec, pcm, firstRec, firstPcm);
  // The rendered part, less trailing zeros.
  let end = rendered;
  while (end > 0 && Math.abs(pcm[end - 1] / 32768) < SILENT) end--;
  return {
    onsetToSilentMs: ((silentAt - onsetAt) / RATE) * 1000,
    staleSamples,
    renderedMs: (end / RATE) * 1000,
    botAudibleAtOnset: peakBefore > 0.01,
    // The recording followed the item up to the onset at least (else it was not that item).
    aligned: itemStart >= 0 && divergedAt >= onsetAt,
    // Where the output stopped matching the item, and what each held there: to tell a cut from a glitch.
    divergedMs: (rendered / RATE) * 1000,
    atDivergence: {
      output: Array.from(samples.subarray(divergedAt - 2, divergedAt + 6), (v) => Math.round(v * 32768)),
      item: Array.from(pcm.subarray(rendered - 2, rendered + 6)),
    },
    unknownQuanta,
  };
}

/**
 * Follows the item through the recording from its first sample. On a loaded machine the output is
 * not the item laid end to end: a quantum the render thread skipped (unknown in the recording), a
 * stretch where the player ran dry or was paused (exactly zero where the item is not) both leave the
 * item's place where it was, as the player does; and a fade (bargein's pause at a speech onset cue,
 * which resumes when no speech follows) plays the item's samples at a lower gain. Anything else is
 * where the output stopped being the item (another item). An earlier judge compared the two at one
 * fixed offset and lost its place at the first hole or fade: under load it called most of bargein's
 * trials "misaligned" (its output at the divergence was the item, faded).
 * @returns {{ rendered: number, divergedAt: number }} item samples rendered at full gain up to the
 *   last one (the cut's fade is not counted, as before); recording index where it stopped being the item
 */
export function followItem(rec, pcm, firstRec, firstPcm) {
  const { samples, known } = rec;
  let i = firstRec;
  let j = firstPcm;
  let rendered = firstPcm;
  while (j < pcm.length && i < samples.length) {
    const quantum = Math.floor(i / 128);
    if (!known[quantum]) {
      i = (quantum + 1) * 128;
      continue;
    }
    const out = samples[i];
    if (out === 0 && pcm[j] !== 0) {
      i++;
      continue;
    }
    // A fade's last sample can be exactly zero, which reads as a hold, and its first samples are small
    // enough to pass for their neighbours: the item may go on a sample or two further. The same sample
    // at full gain is preferred to a faded one.
    const ahead = [0, 1, 2].filter((k) => j + k < pcm.length);
    const skip = ahead.find((k) => Math.abs(out - pcm[j + k] / 32768) <= SAME) ?? ahead.find((k) => isFaded(out, pcm[j + k] / 32768));
    if (skip === undefined) break;
    j += skip;
    if (Math.abs(out - pcm[j] / 32768) <= SAME) rendered = j + 1;
    i++;
    j++;
  }
  return { rendered, divergedAt: Math.min(i, samples.length) };
}

/** The output sample is the item's at a gain below one. @param {number} out @param {number} want */
function isFaded(out, want) {
  return Math.sign(out) === Math.sign(want) && Math.abs(out) <= Math.abs(want) + SAME;
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

/** The item counts as loud before an onset when it peaks over this in the LOUD_WINDOW_S before it. */
const LOUD = 0.05;
const LOUD_WINDOW_S = 0.2;

/**
 * The first moment at or after `moment` (seconds after the item's first audible sample) with the item
 * loud in the 200 ms before it, in 10 ms steps: an onset there falls on the bot's voice, not in a pause
 * between its phrases (the judge leaves such an onset out: the bot was inaudible). Undefined when the
 * item's audio given (as received so far) reaches no such moment.
 * @param {Int16Array} pcm @param {number} moment
 */
export function loudMoment(pcm, moment) {
  let first = 0;
  while (first < pcm.length && Math.abs(pcm[first]) / 32768 < 1e-3) first++;
  const window = Math.round(LOUD_WINDOW_S * RATE);
  for (let at = first + Math.round(moment * RATE); at <= pcm.length; at += RATE / 100) {
    let peak = 0;
    for (let i = Math.max(first, at - window); i < at; i++) peak = Math.max(peak, Math.abs(pcm[i]));
    if (peak / 32768 > LOUD) return (at - first) / RATE;
  }
  return undefined;
}

