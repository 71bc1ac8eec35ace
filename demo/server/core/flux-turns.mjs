// Flux's turn state machine, a pure core of the Deepgram emulator, after
// https://developers.deepgram.com/docs/flux/state: Initial → StartOfTurn → TurnOngoing →
// EagerEndOfTurn → AwaitingEnd → (TurnResumed → TurnOngoing | EndOfTurn → Initial), with an
// Update about every 0.25 s of audio otherwise. The docs' rules kept here: an EagerEndOfTurn
// has words; TurnResumed only follows an EagerEndOfTurn; EndOfTurn's transcript is the eager
// one before it (a changed transcript resumes the turn first); turn_index grows after EndOfTurn.
// The end-of-turn confidence is the silence so far over `horizonS`; a turn ends only once its
// words are final (the recogniser's utterance closed), or at `eotTimeoutS` of silence.

/**
 * @typedef {{ word: string, start: number, end: number }} TurnWord
 * @typedef {{ phase: "Initial" | "TurnOngoing" | "AwaitingEnd", turnIndex: number, turnStartS: number,
 *   doneWords: TurnWord[], eagerTranscript: string, frames: number }} TurnState
 * @typedef {{ started: boolean, ended: boolean, inUtterance: boolean, silent: boolean,
 *   silentSeconds: number, words: TurnWord[], nowS: number, utteranceStartS: number }} TurnFrame
 * @typedef {{ eotThreshold: number, eagerThreshold: number | null, eotTimeoutS: number,
 *   horizonS: number, updateFrames: number }} TurnConfig
 * @typedef {{ event: string, turnIndex: number, windowStartS: number, words: TurnWord[],
 *   confidence: number, trigger?: string }} TurnEvent
 */

/** @returns {TurnState} */
export function initialTurnState() {
  return { phase: "Initial", turnIndex: 0, turnStartS: 0, doneWords: [], eagerTranscript: "", frames: 0 };
}

/** @param {TurnWord[]} words */
const transcriptOf = (words) => words.map((w) => w.word).join(" ");

/**
 * One decoded frame's step.
 * @param {TurnState} s @param {TurnFrame} f @param {TurnConfig} c
 * @returns {{ state: TurnState, events: TurnEvent[] }}
 */
export function turnFrame(s, f, c) {
  const frames = s.frames + 1;
  /** @param {Partial<TurnState>} next @param {string} event @param {TurnWord[]} words @param {number} confidence @param {string} [trigger] */
  const emit = (next, event, words, confidence, trigger) => {
    const state = { ...s, frames, ...next };
    const windowStartS = s.phase === "Initial" && event === "Update" ? f.nowS : state.turnStartS;
    return { state, events: [{ event, turnIndex: s.turnIndex, windowStartS, words, confidence, ...(trigger ? { trigger } : {}) }] };
  };
  const quiet = () => ({ state: { ...s, frames }, events: [] });
  const update = (/** @type {Partial<TurnState>} */ next, /** @type {TurnWord[]} */ words, /** @type {number} */ confidence) =>
    frames % c.updateFrames === 0 ? emit(next, "Update", words, confidence) : { state: { ...s, frames, ...next }, events: [] };

  if (s.phase === "Initial") {
    if (f.started) return emit({ phase: "TurnOngoing", turnStartS: f.utteranceStartS, doneWords: [] }, "StartOfTurn", [], 0);
    return update({}, [], 0);
  }
  const words = [...s.doneWords, ...f.words];
  const doneWords = f.ended ? words : s.doneWords;
  const transcript = transcriptOf(words);
  const speaking = f.inUtterance && !f.silent;
  const confidence = speaking ? 0 : Math.min(1, f.silentSeconds / c.horizonS);
  if (s.phase === "AwaitingEnd" && (speaking || transcript !== s.eagerTranscript)) {
    return emit({ phase: "TurnOngoing", doneWords }, "TurnResumed", words, confidence);
  }
  if ((words.length > 0 && !f.inUtterance && confidence >= c.eotThreshold) || f.silentSeconds >= c.eotTimeoutS) {
    return endTurn({ ...s, frames }, words, confidence, "model");
  }
  if (s.phase === "TurnOngoing" && c.eagerThreshold !== null && words.length > 0 && confidence >= c.eagerThreshold) {
    return emit({ phase: "AwaitingEnd", doneWords, eagerTranscript: transcript }, "EagerEndOfTurn", words, confidence);
  }
  return update({ doneWords }, words, confidence);
}

/**
 * ForceEndTurn: the turn ends on what was transcribed so far. With no turn open (and no words)
 * there is nothing to end, and an Update reports where the transcription reached.
 * @param {TurnState} s @param {TurnWord[]} finalWords the words the flush made final @param {number} nowS
 * @returns {{ state: TurnState, events: TurnEvent[] }}
 */
export function forceEndTurn(s, finalWords, nowS) {
  const words = [...s.doneWords, ...finalWords];
  if (s.phase === "Initial" && words.length === 0) {
    return { state: s, events: [{ event: "Update", turnIndex: s.turnIndex, windowStartS: nowS, words: [], confidence: 0 }] };
  }
  return endTurn(s, words, 1, "manual");
}

/** @param {TurnState} s @param {TurnWord[]} words @param {number} confidence @param {string} trigger */
function endTurn(s, words, confidence, trigger) {
  return {
    state: { ...s, phase: /** @type {const} */ ("Initial"), turnIndex: s.turnIndex + 1, doneWords: [], eagerTranscript: "" },
    events: [{ event: "EndOfTurn", turnIndex: s.turnIndex, windowStartS: s.turnStartS, words, confidence, trigger }],
  };
}
