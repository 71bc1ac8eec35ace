// Silence-based turn cutting for the AssemblyAI emulator (emulators/assemblyai.mjs), pure: a
// stand-in for AssemblyAI's end-of-turn model whose "confidence" grows with the silence
// (silence / max_turn_silence), so the documented parameters keep their meaning.

/**
 * Silence-based turn cutting, pure: one call per 80 ms frame with whether it was speech.
 * @typedef {{ endOfTurnConfidenceThreshold: number, minTurnSilenceMs: number, maxTurnSilenceMs: number }} TurnSettings
 */
export class TurnCutter {
  /** @param {TurnSettings} settings */
  constructor(settings) {
    this.settings = { ...settings };
    this.inTurn = false;
    this.silenceMs = 0;
    /** The confidence when the last turn ended. */
    this.endConfidence = 0;
  }

  /** The emulator's end-of-turn confidence: the silence so far against max_turn_silence. */
  get confidence() {
    return this.inTurn ? Math.min(1, this.silenceMs / Math.max(1, this.settings.maxTurnSilenceMs)) : 0;
  }

  /**
   * @param {boolean} speech @param {number} ms
   * @returns {"speech-started" | "end-of-turn" | null}
   */
  frame(speech, ms) {
    if (speech) {
      this.silenceMs = 0;
      if (this.inTurn) return null;
      this.inTurn = true;
      return "speech-started";
    }
    if (!this.inTurn) return null;
    this.silenceMs += ms;
    const { endOfTurnConfidenceThreshold, minTurnSilenceMs, maxTurnSilenceMs } = this.settings;
    const semantic = this.confidence >= endOfTurnConfidenceThreshold && this.silenceMs >= minTurnSilenceMs;
    if (!semantic && this.silenceMs < maxTurnSilenceMs) return null;
    this.endConfidence = this.confidence;
    this.inTurn = false;
    return "end-of-turn";
  }

  /** ForceEndpoint, or the end of the session: the turn ends now. */
  force() {
    const was = this.inTurn;
    this.endConfidence = this.confidence;
    this.inTurn = false;
    this.silenceMs = 0;
    return was;
  }
}

/** The documented defaults, with the query's (and the deprecated name's) overrides. @param {URLSearchParams} q */
export function turnSettings(q) {
  const num = (/** @type {string} */ name, /** @type {number} */ fallback) => {
    const v = Number(q.get(name));
    return q.get(name) !== null && Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  return {
    endOfTurnConfidenceThreshold: num("end_of_turn_confidence_threshold", 0.4),
    minTurnSilenceMs: num("min_turn_silence", num("min_end_of_turn_silence_when_confident", 400)),
    maxTurnSilenceMs: num("max_turn_silence", 1280),
  };
}
