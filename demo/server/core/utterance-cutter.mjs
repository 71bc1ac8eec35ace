// Utterance cutting by energy, a pure core shared by the STT emulators: a frame
// louder than `silenceRms` starts an utterance, `endpointFrames` quiet frames in a
// row end it. The state is a plain object; `cutFrame` returns the next one and the
// event the frame caused, so the recogniser around it does the decoding (I/O).

/**
 * @typedef {{ inUtterance: boolean, silentRun: number }} CutterState
 * @typedef {"start" | "end" | null} CutEvent
 */

/** @returns {CutterState} */
export function initialCutterState() {
  return { inUtterance: false, silentRun: 0 };
}

/** Root mean square of a frame. @param {Float32Array} frame */
export function frameRms(frame) {
  let energy = 0;
  for (let i = 0; i < frame.length; i++) energy += frame[i] * frame[i];
  return frame.length === 0 ? 0 : Math.sqrt(energy / frame.length);
}

/**
 * One frame's step.
 * @param {CutterState} state
 * @param {{ silent: boolean, canStart: boolean }} frame `canStart` false keeps it out of
 *   utterances (no recogniser: the stream only counts silence)
 * @param {number} endpointFrames quiet frames that end an utterance
 * @returns {{ state: CutterState, event: CutEvent }}
 *   "start": this frame begins an utterance; "end": this frame ends it (it is still decoded)
 */
export function cutFrame(state, { silent, canStart }, endpointFrames) {
  const silentRun = silent ? state.silentRun + 1 : 0;
  if (!state.inUtterance) {
    if (canStart && !silent) return { state: { inUtterance: true, silentRun }, event: "start" };
    return { state: { inUtterance: false, silentRun }, event: null };
  }
  if (silentRun >= endpointFrames) return { state: { inUtterance: false, silentRun }, event: "end" };
  return { state: { inUtterance: true, silentRun }, event: null };
}

/**
 * Pause probabilities from the quiet so far: for each horizon, the share of it
 * already silent (1 once the silence has lasted the whole horizon).
 * @param {number} silentSeconds
 * @param {readonly number[]} horizons seconds
 */
export function pauseProbabilities(silentSeconds, horizons) {
  return horizons.map((h) => Math.min(1, silentSeconds / h));
}
