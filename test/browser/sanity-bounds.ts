// Bounds in the browser tests are sanity bounds: they catch a behaviour that broke (a barge-in decided
// from words, a second late), not a slower machine. The real bounds live in the benches, which measure
// them side by side with a baseline (`npm run bench -- bargein`: the onset → silent p95 and its goal).
// The browser suite runs two files at once, on a shared 2-core machine, and must pass under load.

/** The user's speech onset → the bot's output silent, in context time: about 10× the bargein bench's p95. */
export const SILENCE_BOUND_MS = 400;

/**
 * `stop()` on a session whose STT server does not answer (a stall, an unanswered flush): the socket's close
 * waits at most 1 s for the server's answer (message-socket.ts), then the rest is torn down. A stop that
 * waited on the server instead would take the rest of its stall (the stall test's is 20 s) or forever.
 */
export const STOP_BOUND_MS = 5000;
