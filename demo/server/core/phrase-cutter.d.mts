// Types for phrase-cutter.mjs (the TypeScript tests import it).
export function nextPhrase(text: string, eos: boolean, chunkWords: number): { phrase: string; rest: string } | null;
export function appendText(text: string, piece: string): string;
