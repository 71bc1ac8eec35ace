/** Returns a function giving uniform numbers in [0, 1) from `seed` (mulberry32). */
export function prng(seed: number): () => number;
