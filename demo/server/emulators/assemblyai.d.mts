// Types for assemblyai.mjs's pure parts, for the TypeScript tests.
import type { DecoderPool } from "../pocketsphinx.mjs";

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

export function createAssemblyAiService(deps: { stats: unknown; pool: DecoderPool | null; token?: string }): (...args: unknown[]) => Promise<void>;
