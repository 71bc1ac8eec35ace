// Bytes on the wire before a moment of a start(), for the cold-start bench. Pure, but for
// `recordResponses` (Playwright). Two sources, because neither sees everything:
// - the reference server's count of each file's bodies as sent (/__stats `static`, by path:
//   compressed when it was), which includes the AudioWorklet modules; no browser event here
//   reports their fetch (not Resource Timing, not Playwright, not the page's DevTools session);
// - the browser's network events for the VAD worker's fetches (the model, the wasm), with their
//   timing: those are the ones still arriving when the session listens.
// A body the browser's events do not time (the worklets, the worker's script) is awaited by
// start() before the session listens, so it counts whole before `listening`. A timed one counts
// the share that had arrived: linear between its first and last byte, as the link is throttled
// to a constant rate (an estimate; whole bodies are exact). Response headers are left out
// (a few hundred bytes each).

/**
 * @typedef {object} TimedResponse
 * @property {string} path        the URL's pathname
 * @property {number} startAt     epoch ms when the request was sent
 * @property {number} firstByteAt epoch ms of the response's first byte
 * @property {number} endAt       epoch ms of its last byte
 */

/** The share (0..1) of a timed body that had arrived by `at` (epoch ms). */
export function arrivedShare(r, at) {
  if (at >= r.endAt) return 1;
  if (at <= r.firstByteAt) return 0;
  return (at - r.firstByteAt) / (r.endAt - r.firstByteAt);
}

/**
 * Bytes of the bodies in `sent` (path → bytes sent during the trial) that had arrived by `at`.
 * @param {Record<string, number>} sent
 * @param {TimedResponse[]} timed  the trial's timed responses (the last one per path counts)
 * @param {number} at
 */
export function bytesBefore(sent, timed, at) {
  let total = 0;
  for (const [path, bytes] of Object.entries(sent)) {
    const r = timed.filter((t) => t.path === path).at(-1);
    total += r ? Math.round(bytes * arrivedShare(r, at)) : bytes;
  }
  return total;
}

/** `after` less `before`, per path, for the paths under `prefix` that grew (bytes sent in between). */
export function sentBetween(before, after, prefix = "/dist/") {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [path, bytes] of Object.entries(after ?? {})) {
    const grew = bytes - (before?.[path] ?? 0);
    if (path.startsWith(prefix) && grew > 0) out[path] = grew;
  }
  return out;
}

/** Bytes sent for the paths ending with each suffix. */
export function sentFor(sent, suffixes) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [key, suffix] of Object.entries(suffixes)) out[key] = Object.entries(sent).filter(([p]) => p.endsWith(suffix)).reduce((n, [, b]) => n + b, 0);
  return out;
}

/**
 * Times every response `page` and its workers get (Playwright sees the VAD worker's fetches).
 * @param {import("@playwright/test").Page} page
 * @returns {{ timed: TimedResponse[], stop: () => void }}
 */
export function recordResponses(page) {
  /** @type {TimedResponse[]} */
  const timed = [];
  const onFinished = (request) => {
    const t = request.timing();
    timed.push({ path: new URL(request.url()).pathname, startAt: t.startTime, firstByteAt: t.startTime + Math.max(0, t.responseStart), endAt: t.startTime + Math.max(0, t.responseEnd) });
  };
  page.on("requestfinished", onFinished);
  return { timed, stop: () => page.off("requestfinished", onFinished) };
}
