/**
 * AbortSignal helpers. Cancellation in bargein is always an AbortSignal; an
 * abort is not an error, and `isAbort` is the one place that tells them apart.
 */

/** True when `err` is the rejection of an aborted operation, not a failure. */
export function isAbort(err: unknown): boolean {
  return (
    typeof err === "object" &&
    err !== null &&
    (err as { name?: unknown }).name === "AbortError"
  );
}

/** The error to reject with when `what` is cancelled. */
export function abortError(what: string): DOMException {
  return new DOMException(`${what} was cancelled`, "AbortError");
}

/**
 * Makes `controller` abort when `parent` aborts. Returns the function that
 * undoes the link; call it in a `finally` so a long-lived parent (the session's
 * signal) does not collect one listener per short-lived child.
 */
export function linkAbort(parent: AbortSignal | undefined, controller: AbortController): () => void {
  if (!parent) return () => {};
  if (parent.aborted) {
    controller.abort(parent.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it aborts.
 * The timer and the listener are both released either way.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
