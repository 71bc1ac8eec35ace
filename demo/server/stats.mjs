// Server-side counters, so tests can see what the server saw (a stream the
// client closed, a request it aborted). Exposed at GET /__stats and by
// `backend.stats()`; every change is also emitted on `backend.events` as
// ("count", { service, name, value }).
import { EventEmitter } from "node:events";

export function createStats() {
  const counters = {
    stt: { open: 0, opened: 0, rejected: 0, closedByClient: 0, closedNormally: 0, dropped: 0, words: 0, markers: 0, bytesIn: 0 },
    tts: { open: 0, opened: 0, rejected: 0, closedByClient: 0, completed: 0, dropped: 0, framesSent: 0, contexts: 0, contextsCancelled: 0 },
    llm: { open: 0, opened: 0, rejected: 0, requestsStarted: 0, requestsEnded: 0, requestsAborted: 0, active: 0, piecesSent: 0, dropped: 0, toolCalls: 0 },
    http: { unauthorized: 0 },
  };
  const events = new EventEmitter();

  /**
   * @template {keyof typeof counters} S
   * @param {S} service
   * @param {keyof (typeof counters)[S]} name
   * @param {number} [by]
   */
  function add(service, name, by = 1) {
    // An emulator may count under a service name or a counter not listed above; both start at 0.
    const groups = /** @type {Record<string, Record<string, number>>} */ (/** @type {unknown} */ (counters));
    const group = (groups[/** @type {string} */ (service)] ??= {});
    group[/** @type {string} */ (name)] = (group[/** @type {string} */ (name)] ?? 0) + by;
    events.emit("count", { service, name, value: group[/** @type {string} */ (name)] });
  }

  /** A deep copy, safe to keep. */
  function snapshot() {
    return JSON.parse(JSON.stringify(counters));
  }

  return { counters, events, add, snapshot };
}

/** @typedef {ReturnType<typeof createStats>} Stats */
