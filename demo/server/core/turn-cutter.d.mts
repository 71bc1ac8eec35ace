// Types for turn-cutter.mjs (the TypeScript tests import it).
export interface TurnSettings {
  endOfTurnConfidenceThreshold: number;
  minTurnSilenceMs: number;
  maxTurnSilenceMs: number;
}

/** Silence-based end of turn, one call per frame. */
export class TurnCutter {
  constructor(settings: TurnSettings);
  settings: TurnSettings;
  inTurn: boolean;
  silenceMs: number;
  /** The confidence when the last turn ended. */
  endConfidence: number;
  readonly confidence: number;
  frame(speech: boolean, ms: number): "speech-started" | "end-of-turn" | null;
  force(): boolean;
}

export function turnSettings(query: URLSearchParams): TurnSettings;
