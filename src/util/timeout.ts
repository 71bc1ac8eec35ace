/**
 * Timers. A time limit in bargein is an AbortSignal: `timeout(ms, parent)`
 * gives a signal that aborts when `ms` have passed or when `parent` aborts,
 * whichever comes first, and the guarded step just takes that signal. `delay`
 * is the one sleep (backoff, fakes). These are the only timers that bound a
 * wait; a periodic schedule (the uplink's drain) is not one.
 *
 * Built on setTimeout rather than AbortSignal.timeout: the timer must be
 * cleared once the step is done (a response timeout ends when the headers
 * arrive), and fake timers must be able to drive it in tests.
 */
import { abortable, linkAbort } from "./abort.js";

export interface Timeout {
  /**
   * Aborts when the time is up, with a DOMException named "TimeoutError" (as
   * AbortSignal.timeout does; `isAbort` is false for it), or when the parent
   * aborts, with the parent's reason.
   */
  readonly signal: AbortSignal;
  /** True once the time ran out first (false when the parent aborted, or `clear` came first). */
  readonly expired: boolean;
  /** Stops the timer and unlinks the parent; the signal stays as it is. Idempotent; call it in a `finally`. */
  clear(): void;
}

/** A signal that aborts after `ms`, or when `parent` does. See Timeout. */
export function timeout(ms: number, parent?: AbortSignal): Timeout {
  const controller = new AbortController();
  const unlink = linkAbort(parent, controller);
  let expired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
    unlink();
  };
  if (!controller.signal.aborted) {
    timer = setTimeout(() => {
      timer = undefined;
      expired = true;
      controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"));
    }, ms);
    // Whichever aborts first, the other is released: no timer outlives a parent's abort.
    controller.signal.addEventListener("abort", clear, { once: true });
  }
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear,
  };
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it
 * aborts. The timer and the listener are released either way.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return abortable<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    return () => clearTimeout(timer);
  }, signal);
}
