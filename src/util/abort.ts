/**
 * AbortSignal helpers. Cancellation in bargein is always an AbortSignal; an
 * abort is not an error, and `isAbort` is the one place that tells them apart.
 * `abortable` is the one way a wait is raced against a signal (as p-queue
 * does it: the listener is added with `{ once: true }` and removed as soon as
 * the promise settles, so a long-lived signal collects no listeners).
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
 * What an `abortable` executor may return: run once when the promise settles,
 * whichever way (resolved, rejected, or aborted). It undoes what the executor
 * set up: a waiter in a map, an event subscription, a timer.
 */
export type Cleanup = () => void;

/**
 * A promise that also rejects with `signal.reason` as soon as `signal` aborts.
 * `executor` is as for `new Promise`, and may return a Cleanup. Whatever
 * settles first wins; later calls to resolve/reject are ignored. When `signal`
 * is already aborted, the promise rejects at once and `executor` is not called.
 * Allocates the promise, one listener and the settle closures.
 */
export function abortable<T>(
  executor: (resolve: (value: T) => void, reject: (reason: unknown) => void) => Cleanup | void,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    let cleanup: Cleanup | void = undefined;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      // When the executor settles synchronously, its cleanup is not returned yet: it runs below.
      cleanup?.();
      finish();
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      cleanup = executor(
        (value) => settle(() => resolve(value)),
        (reason) => settle(() => reject(reason)),
      );
    } catch (err) {
      settle(() => reject(err));
    }
    if (settled) cleanup?.();
  });
}

/**
 * Settles as `promise` does, or rejects with `signal.reason` as soon as
 * `signal` aborts. `promise` itself is not stopped: its owner must stop it
 * (through the same signal) if it holds anything.
 */
export function raceAbort<T>(promise: PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return Promise.resolve(promise);
  return abortable<T>((resolve, reject) => {
    promise.then(resolve, reject);
  }, signal);
}
