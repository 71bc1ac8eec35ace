// What a benchmark started and must stop: one registry for the whole process.
//
// Every server, browser and child a bench starts registers its stop function
// here (`track`) and unregisters it once stopped. On SIGINT or SIGTERM of the
// runner, all that is still registered is stopped before the process exits
// (130 or 143); on any other exit (an uncaught error, process.exit), the
// children still registered are killed synchronously, the only thing an
// `exit` handler may still do.

/** @typedef {{ name: string, stop: () => Promise<void> | void, killNow?: () => void }} Tracked */

/** @type {Set<Tracked>} */
const live = new Set();
let installed = false;
/** Stopping everything on a signal must not wait for ever for one stuck stop. */
const SIGNAL_STOP_MS = 10_000;

/**
 * Registers something to stop. `killNow` (optional) is the synchronous last
 * resort used from the process's `exit` handler (a child's kill("SIGKILL")).
 * Returns the function that unregisters it.
 * @param {Tracked} item
 */
export function track(item) {
  installHandlers();
  live.add(item);
  return () => live.delete(item);
}

/** Names of what is registered and not yet stopped (for tests and messages). */
export function tracked() {
  return [...live].map((t) => t.name);
}

/** Stops everything still registered, newest first; never throws. */
export async function stopAll() {
  const items = [...live].reverse();
  for (const item of items) {
    live.delete(item);
    try {
      await item.stop();
    } catch (err) {
      console.error(`bench cleanup: stopping ${item.name} failed: ${err?.message ?? err}`);
    }
  }
}

function installHandlers() {
  if (installed) return;
  installed = true;
  for (const [signal, code] of /** @type {const} */ ([["SIGINT", 130], ["SIGTERM", 143]])) {
    process.once(signal, () => {
      console.error(`\nbench: ${signal}: stopping ${tracked().join(", ") || "nothing"}…`);
      const timer = setTimeout(() => process.exit(code), SIGNAL_STOP_MS);
      timer.unref();
      stopAll().finally(() => process.exit(code));
    });
  }
  process.once("exit", () => {
    for (const item of live) {
      try {
        item.killNow?.();
      } catch {}
    }
  });
}
