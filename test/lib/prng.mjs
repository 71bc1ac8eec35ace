// mulberry32: a small seeded PRNG shared by the tests, the benchmarks and the
// fixture scripts, so a failing case, a benchmark's random moments and the
// generated noise replay exactly. Plain ESM: Node and the browser pages
// (served at /test/lib/prng.mjs) import the same file.

/** Returns a function giving uniform numbers in [0, 1) from `seed`. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
