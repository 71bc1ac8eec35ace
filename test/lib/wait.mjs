// The tests' two waits on the wall clock, in one place. Plain ESM: Node tests import it, and the
// browser pages import the same file (served at /test/lib/wait.mjs), as with prng.mjs.
//
// A decision is tested on the fake clock, not with these (docs/test-suite.md). They are for what
// runs on real time: sockets, the reference backend, a page's audio.

/** Resolves after `ms` of wall time. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Checks `cond` now and then every `everyMs` until it holds. Past `ms` it rejects with an error that
 * names what it waited for: `what`, or the condition's source when none is given. A function `what`
 * is called at the timeout, so the message can show the state things were in then.
 */
export async function until(cond, ms = 2000, what = String(cond), everyMs = 2) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}`);
    await sleep(everyMs);
  }
}
