/** Resolves after `ms` of wall time. */
export function sleep(ms: number): Promise<void>;

/**
 * Checks `cond` now and then every `everyMs` (default 2) until it holds. Past `ms` (default 2000) it
 * rejects with an error that names what it waited for: `what`, or the condition's source when none is
 * given. A function `what` is called at the timeout, so the message can show the state things were in then.
 */
export function until(cond: () => boolean, ms?: number, what?: string | (() => string), everyMs?: number): Promise<void>;
