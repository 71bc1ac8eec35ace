// Types for flux-turns.mjs (the TypeScript tests import it).
export interface TurnWord { word: string; start: number; end: number }
export interface TurnState { phase: "Initial" | "TurnOngoing" | "AwaitingEnd"; turnIndex: number; turnStartS: number; doneWords: TurnWord[]; eagerTranscript: string; frames: number }
export interface TurnFrame { started: boolean; ended: boolean; inUtterance: boolean; silent: boolean; silentSeconds: number; words: TurnWord[]; nowS: number; utteranceStartS: number }
export interface TurnConfig { eotThreshold: number; eagerThreshold: number | null; eotTimeoutS: number; horizonS: number; updateFrames: number }
export interface TurnEvent { event: string; turnIndex: number; windowStartS: number; words: TurnWord[]; confidence: number; trigger?: string }
export function initialTurnState(): TurnState;
export function turnFrame(s: TurnState, f: TurnFrame, c: TurnConfig): { state: TurnState; events: TurnEvent[] };
export function forceEndTurn(s: TurnState, finalWords: TurnWord[], nowS: number): { state: TurnState; events: TurnEvent[] };
