// Types for word-stability.mjs (the TypeScript tests import it).
export function rememberHypothesis(recent: readonly string[][], words: string[], frames: number): string[][];
export function stableWordCount(recent: readonly string[][], frames: number, final: boolean): number;
