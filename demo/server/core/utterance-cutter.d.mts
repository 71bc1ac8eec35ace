// Types for utterance-cutter.mjs (the TypeScript tests import it).
export interface CutterState { inUtterance: boolean; silentRun: number }
export type CutEvent = "start" | "end" | null;
export function initialCutterState(): CutterState;
export function frameRms(frame: Float32Array): number;
export function cutFrame(state: CutterState, frame: { silent: boolean; canStart: boolean }, endpointFrames: number): { state: CutterState; event: CutEvent };
export function pauseProbabilities(silentSeconds: number, horizons: readonly number[]): number[];
