// How one barge-in went, read from the recorded output alone (rig.js): the
// same rules for both clients. Pure; times are context seconds.
//
// Every trial gets a verdict: judged (a barge-in over the bot's audible voice, whether the client
// played the trial's reply or an older one's audio at the onset: the latter is the client's finding,
// `staleAudioMs`), or unjudged with the reason (`unjudged`): the output was quiet at the onset, or it
// was neither the reply nor an older item's audio there.
import { RATE, SILENT } from "./output-rate.js";

/** A rendered sample differs from the item's own by more than this: a fade or a cut began (unity gain renders s16/32768 exactly). */
const SAME = 1e-6;

/** The bot counts as audible at an onset when the recorded output peaks over this in the 300 ms before it. */
const AUDIBLE = 0.01;

/**
 * @param {{ startFrame: number, samples: Float32Array, known: Uint8Array }} rec  the window, from before the item's first sample
 * @param {Int16Array} pcm  the item's audio as received
 * @param {{ onset: number, speechEnd: number, confirmAt?: number, cueAt?: number }} t
 *   onset: the barge-in's speech onset; speechEnd: its labelled end; confirmAt: when the client
 *   stopped the item for good (bargein: the interruption; the peer: audio_interrupted); cueAt: the
 *   earliest moment the user's audio could have cued a pause (rig.js earliestCueS): bargein's onset
 *   cue acts on a level far under the labelled onset's, so its fade may begin before the onset
 * @param {{ tracker: OutputTracker, index: number }} [received]  the run's tracker, advanced over the
 *   window (which item's audio each quantum played), and the trial's item's index among those it
 *   follows: to tell an older item's audio (stale) from the reply's. Default: the item alone.
 */
export function judgeBargeIn(rec, pcm, t, received = { tracker: new OutputTracker(() => [{ pcm, arrivedFrame: -Infinity }]).advance(rec), index: 0 }) {
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
  // Which item each quantum of the window played: the trial's reply, an older item, or none known.
  const played = Array.from({ length: Math.ceil(quietUntil / 128) }, (_, q) => received.tracker.at(rec.startFrame + q * 128) ?? null);
  const older = (p) => p !== null && p.item < received.index;
  const quantumMs = (128 / RATE) * 1000;
  // Stale: an older item's audio once the trial's item had arrived (a newer reply was there to play).
  const arrivedAt = (received.tracker.items()[received.index]?.arrivedFrame ?? -Infinity) - rec.startFrame;
  const staleAudioMs = played.filter((p, q) => older(p) && q * 128 >= arrivedAt).length * quantumMs;
  const staleAfterOnsetMs = played.filter((p, q) => older(p) && q * 128 >= onsetAt).length * quantumMs;
  // What played last before the onset (within the 300 ms the audible rule reads).
  let atOnset = null;
  for (let q = Math.ceil(onsetAt / 128) - 1; q >= 0 && (q + 1) * 128 > onsetAt - 0.3 * RATE; q--) {
    if (played[q]) {
      atOnset = played[q];
      break;
    }
  }
  const playingAtOnset = atOnset === null ? null : atOnset.item === received.index ? "item" : atOnset.item < received.index ? "older" : "newer";
  // Where the item starts: its first non-zero sample lands on the recording's first non-zero one,
  // unless an older item played first: then where the output first was the item.
  let firstPcm = 0;
  while (firstPcm < pcm.length && pcm[firstPcm] === 0) firstPcm++;
  let firstRec = 0;
  while (firstRec < samples.length && samples[firstRec] === 0) firstRec++;
  const firstOwn = played.findIndex((p) => p?.item === received.index);
  const firstOlder = played.findIndex(older);
  if (firstOlder >= 0 && (firstOwn < 0 || firstOlder < firstOwn)) {
    firstRec = firstOwn < 0 ? samples.length : firstOwn * 128 + Math.max(0, -played[firstOwn].at);
    firstPcm = firstOwn < 0 ? pcm.length : Math.max(0, played[firstOwn].at);
  }
  const itemStart = firstRec - firstPcm;
  const { rendered, divergedAt } = firstRec < samples.length ? followItem(rec, pcm, firstRec, firstPcm) : { rendered: 0, divergedAt: firstRec };
  // The rendered part, less trailing zeros.
  let end = rendered;
  while (end > 0 && Math.abs(pcm[end - 1] / 32768) < SILENT) end--;
  // The output may leave the item from the earliest moment the user's audio could pause it.
  const leaveFrom = Math.min(onsetAt, index(t.cueAt ?? t.onset));
  const aligned = itemStart >= 0 && firstRec < onsetAt && divergedAt >= leaveFrom;
  const botAudibleAtOnset = peakBefore > AUDIBLE;
  let unjudged = null;
  if (!botAudibleAtOnset) unjudged = `inaudible onset: the output peaked at ${peakBefore.toFixed(4)} in the 300 ms before it`;
  else if (!aligned && playingAtOnset !== "older")
    unjudged = `misaligned: the output left the item at ${((divergedAt - firstRec + firstPcm) / RATE * 1000).toFixed(1)} ms of it, ${((leaveFrom - divergedAt) / RATE * 1000).toFixed(1)} ms before the onset could pause it, and was ${playingAtOnset === "newer" ? "a newer item" : "no item known"} at the onset`;
  return {
    onsetToSilentMs: ((silentAt - onsetAt) / RATE) * 1000,
    staleSamples,
    renderedMs: (end / RATE) * 1000,
    botAudibleAtOnset,
    peakBeforeOnset: peakBefore,
    // The recording followed the item up to the onset at least (else it was not that item).
    aligned,
    // Where the output stopped matching the item, and what each held there: to tell a cut from a glitch.
    divergedMs: (rendered / RATE) * 1000,
    atDivergence: {
      output: Array.from(samples.subarray(Math.max(0, divergedAt - 2), divergedAt + 6), (v) => Math.round(v * 32768)),
      item: Array.from(pcm.subarray(Math.max(0, rendered - 2), rendered + 6)),
    },
    unknownQuanta,
    // What the output played in the 300 ms before the onset: the trial's item, an older item's audio
    // (a client that queued an older reply and played it on: stale), a newer one, or none known.
    playingAtOnset,
    // Output that was an older item's audio in the window (to the speech's end + 0.3 s) once the trial's
    // item had arrived, and after the onset.
    staleAudioMs,
    staleAfterOnsetMs,
    judged: unjudged === null,
    unjudged,
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
  const at = loudFrom(pcm, first + Math.round(moment * RATE), first);
  return at === undefined ? undefined : (at - first) / RATE;
}

/**
 * The first sample index at or after `from`, in 10 ms steps, with `pcm` loud in the 200 ms before it
 * (not reaching back before `floor`); undefined when `pcm` reaches none.
 * @param {Int16Array} pcm @param {number} from @param {number} [floor]
 */
export function loudFrom(pcm, from, floor = 0) {
  const window = Math.round(LOUD_WINDOW_S * RATE);
  for (let at = Math.max(from, floor); at <= pcm.length; at += RATE / 100) {
    let peak = 0;
    for (let i = Math.max(floor, at - window); i < at; i++) peak = Math.max(peak, Math.abs(pcm[i]));
    if (peak / 32768 > LOUD) return at;
  }
  return undefined;
}

/**
 * The onset to plan on the output as it is rendered, not on the item's own timeline: under load the
 * output lags the item (a starved or skipped quantum shifts what plays at a given moment), and an onset
 * placed where the item is loud then fell where the output was quiet. From the last quantum the tracker
 * matched, the output ahead is that item's rest and then the items after it (both clients play their
 * queue in order until a barge-in): the first moment at or after `target` with it loud in the 200 ms
 * before. Undefined when nothing was matched yet or the audio received reaches no loud moment.
 * @param {OutputTracker} tracker  advanced over the output recorded so far
 * @param {Int16Array[]} items  every item's audio received so far, in order
 * @param {number} target  context seconds
 * @returns {{ onset: number, item: number } | undefined}  the onset (context s), and the item expected to play there
 */
export function loudOnsetOnOutput(tracker, items, target) {
  if (!tracker.last) return undefined;
  const { frame, item, at } = tracker.last;
  // The stream ahead: this item from its sample at the quantum, then the later items whole.
  const ahead = [items[item].subarray(Math.max(0, at)), ...items.slice(item + 1)];
  const stream = new Int16Array(ahead.reduce((n, a) => n + a.length, 0));
  ahead.reduce((o, a) => (stream.set(a, o), o + a.length), 0);
  const found = loudFrom(stream, Math.round(target * RATE) - frame);
  if (found === undefined) return undefined;
  let k = item;
  let offset = found + Math.max(0, at);
  while (k + 1 < items.length && offset >= items[k].length) offset -= items[k++].length;
  return { onset: (frame + found) / RATE, item: k };
}

/**
 * Which item's audio the output played, quantum by quantum, over a whole run: each quantum of the
 * recording is matched (exactly: unity gain renders s16/32768) to a place in an item. The replies can
 * repeat one another sample for sample (the emulator's scripted answers, spoken by flite), so content
 * alone cannot tell an older item from the trial's: the tracker follows the output on from its last
 * match (the same item on, then the next item: both clients play their queue in order), and only when
 * that fails (a cut, a new reply) looks for the newest item received by then that holds the quantum.
 * Quanta too quiet to tell (silence, an item's pauses) and faded or mixed ones are null.
 */
export class OutputTracker {
  /**
   * @param {() => { pcm: Int16Array, arrivedFrame: number }[]} items  every item received so far, in
   *   order: its audio and the context frame its first audio arrived at
   */
  constructor(items) {
    this.items = items;
    /** @type {Map<number, { item: number, at: number } | null>} by the quantum's context frame */
    this.played = new Map();
    /** @type {{ frame: number, item: number, at: number } | null} */
    this.last = null;
    this.upTo = -Infinity;
    /** @type {WeakMap<Int16Array, { starts: Int32Array, positions: Int32Array }>} */
    this.indexes = new WeakMap();
  }

  /** Matches the quanta of `rec` after those already seen. @param {{ startFrame: number, samples: Float32Array, known: Uint8Array }} rec */
  advance(rec) {
    const items = this.items();
    for (let q = 0; (q + 1) * 128 <= rec.samples.length; q++) {
      const frame = rec.startFrame + q * 128;
      if (frame < this.upTo) continue;
      const found = rec.known[q] ? this.#find(rec.samples.subarray(q * 128, q * 128 + 128), frame, items) : null;
      this.played.set(frame, found);
      if (found) this.last = { frame, ...found };
      this.upTo = frame + 128;
    }
    return this;
  }

  /** The match of the quantum at context frame `frame` (null: none; undefined: not seen). @param {number} frame */
  at(frame) {
    return this.played.get(Math.floor(frame / 128) * 128);
  }

  #find(out, frame, items) {
    let loudest = 0;
    for (let i = 1; i < out.length; i++) if (Math.abs(out[i]) > Math.abs(out[loudest])) loudest = i;
    // Too quiet to tell one item's audio from another's (and silence is everyone's).
    if (Math.abs(out[loudest]) < 16 / 32768) return null;
    const value = Math.round(out[loudest] * 32768);
    if (Math.abs(out[loudest] - value / 32768) > SAME) return null;
    if (this.last) {
      // On from the last match: the item's next samples (a pause in between played too, or the player
      // held: both tried), then anywhere near in that item (a fade's replay, a partly starved quantum),
      // then the next item.
      const { item, at } = this.last;
      const next = at + 128;
      const held = at + (frame - this.last.frame);
      for (const [k, a] of [[item, next], [item, held], ...(items[item + 1] ? [[item + 1, next - items[item].pcm.length], [item + 1, held - items[item].pcm.length]] : [])]) {
        if (this.#matches(out, items[k].pcm, a)) return { item: k, at: a };
      }
      // Near: from a fade's replay (a quantum back) to the player having played on through the frames
      // since; no further, or a new reply that repeats the last one would read as the last one going on.
      for (const k of [item, item + 1]) {
        if (!items[k]) continue;
        const shift = k === item ? 0 : items[item].pcm.length;
        const [low, high] = [next - shift - 256, held - shift + 256];
        let best = null;
        for (const p of this.#positions(items[k].pcm, value)) {
          const a = p - loudest;
          if (a < low || a > high || !this.#matches(out, items[k].pcm, a)) continue;
          if (best === null || Math.abs(a - next + shift) < Math.abs(best - next + shift)) best = a;
        }
        if (best !== null) return { item: k, at: best };
      }
    }
    for (let k = items.length - 1; k >= 0; k--) {
      if (items[k].arrivedFrame > frame) continue;
      for (const p of this.#positions(items[k].pcm, value)) if (this.#matches(out, items[k].pcm, p - loudest)) return { item: k, at: p - loudest };
    }
    return null;
  }

  /** The output quantum is `pcm` at unity gain from its sample `at` (outside it: zero). */
  #matches(out, pcm, at) {
    for (let i = 0; i < out.length; i++) {
      const j = at + i;
      if (Math.abs(out[i] - (j >= 0 && j < pcm.length ? pcm[j] / 32768 : 0)) > SAME) return false;
    }
    return true;
  }

  /** Positions in `pcm` holding `value`: a counting sort by value, built when first asked (an item still arriving is rebuilt as it grows). */
  #positions(pcm, value) {
    let index = this.indexes.get(pcm);
    if (!index) {
      const starts = new Int32Array(65537);
      for (let i = 0; i < pcm.length; i++) starts[pcm[i] + 32769]++;
      for (let v = 1; v <= 65536; v++) starts[v] += starts[v - 1];
      const positions = new Int32Array(pcm.length);
      const fill = starts.slice(0, 65536);
      for (let i = 0; i < pcm.length; i++) positions[fill[pcm[i] + 32768]++] = i;
      this.indexes.set(pcm, (index = { starts, positions }));
    }
    return index.positions.subarray(index.starts[value + 32768], index.starts[value + 32769]);
  }
}
