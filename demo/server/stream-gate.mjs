// The part of a streaming emulator that is not its protocol: the capacity knob and the
// stream counters. `admit` refuses a stream past `capacity` (the protocol's own way of
// saying so is the `refuse` callback) and counts opens and closes in `stats` under the
// emulator's service name.

/**
 * @param {import("./stats.mjs").Stats} stats
 * @param {string} service counter group, e.g. "stt" or "deepgram"
 * @param {import("./knobs.mjs").Knobs} knobs
 * @param {() => void} refuse sends the protocol's at-capacity answer and closes
 * @returns {{ closed: () => void } | null} null: refused; else call `closed()` once when the stream ends
 */
export function admitStream(stats, service, knobs, refuse) {
  const counters = /** @type {Record<string, number>} */ (stats.counters[/** @type {"stt"} */ (service)] ?? {});
  if (knobs.capacity !== undefined && (counters.open ?? 0) >= knobs.capacity) {
    stats.add(/** @type {any} */ (service), "rejected");
    refuse();
    return null;
  }
  stats.add(/** @type {any} */ (service), "open");
  stats.add(/** @type {any} */ (service), "opened");
  let done = false;
  return {
    closed() {
      if (done) return;
      done = true;
      stats.add(/** @type {any} */ (service), "open", -1);
    },
  };
}
