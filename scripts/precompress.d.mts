// Types for precompress.mjs, so TypeScript tests and benches can use it.
export const PRECOMPRESSED: RegExp;
export const ENCODINGS: Record<"br" | "gz", (bytes: Uint8Array) => Uint8Array>;
export function precompress(dir: string, pattern?: RegExp): { file: string; bytes: number; br: number; gz: number; rewritten: boolean }[];
