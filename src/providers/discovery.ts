/**
 * Service discovery, after Kyutai Unmute's service_discovery: each service has
 * a list of instance URLs; the list is shuffled, at most `maxTries` instances
 * are tried in turn, each with a start-up timeout. Plus the start-up backoff
 * that Unmute wraps around its TTS discovery.
 *
 * An instance that refuses ("no free channels") fails with AtCapacityError;
 * one that does not answer in time fails with ServiceTimeoutError. When every
 * try failed, the final error has the class of the last failure and names the
 * service and every URL tried with its outcome.
 */
import { DEFAULTS } from "../defaults.js";
import {
  AtCapacityError,
  ConfigError,
  ConnectionClosedError,
  ServiceTimeoutError,
} from "../errors.js";
import { delay, timeout } from "../util/timeout.js";

export interface DiscoveryOptions {
  /** The service name for errors: "stt", "tts", "llm". */
  service: string;
  /** Instance URLs, secret-free (they appear in errors). */
  urls: readonly string[];
  /** At most this many instances are tried (the provider's default when undefined). */
  maxTries: number | undefined;
  /** Each try must finish start-up within this, in ms (each provider has its own default: src/defaults.ts). */
  startupTimeoutMs: number;
  /** The random source for the shuffle, in [0, 1) (default Math.random; inject for tests). */
  random?: () => number;
  /** Aborts the whole search; the try in progress is aborted too. */
  signal?: AbortSignal;
}

/** Returns a shuffled copy (Fisher–Yates) of `items`. */
export function shuffled<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Connects to the first instance that starts up in time. `startUp(url, signal)`
 * must open the connection, wait for the service's Ready, and release
 * everything when `signal` aborts (the timeout aborts it).
 */
export async function findInstance<T>(
  options: DiscoveryOptions,
  startUp: (url: string, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { service, signal } = options;
  const timeoutMs = options.startupTimeoutMs;
  const candidates = shuffled(options.urls, options.random).slice(0, options.maxTries ?? DEFAULTS.providers.kyutaiStt.maxTries);
  if (candidates.length === 0) {
    throw new ConfigError(`${service}: no instance URL was given`, { service });
  }
  const outcomes: string[] = [];
  let last: unknown;
  let lastTimedOut = false;
  for (const url of candidates) {
    signal?.throwIfAborted();
    const attempt = timeout(timeoutMs, signal);
    try {
      return await startUp(url, attempt.signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      lastTimedOut = attempt.expired;
      last = lastTimedOut ? attempt.signal.reason : err;
      outcomes.push(`${url} (${lastTimedOut ? `no answer in ${timeoutMs} ms` : describeFailure(err)})`);
    } finally {
      attempt.clear();
    }
  }
  const tried = `tried ${outcomes.join(", ")}`;
  const base = { service, url: candidates.join(" "), cause: last };
  if (lastTimedOut) {
    throw new ServiceTimeoutError(`${service}: no instance started within ${timeoutMs} ms; ${tried}`, {
      ...base,
      timeoutMs,
    });
  }
  if (last instanceof AtCapacityError) {
    throw new AtCapacityError(`${service}: every instance tried is at capacity; ${tried}. Try again later or add instances.`, base);
  }
  if (last instanceof ConnectionClosedError) {
    throw new ConnectionClosedError(`${service}: could not connect; ${tried}`, { ...base, closeCode: last.closeCode });
  }
  throw last;
}

function describeFailure(err: unknown): string {
  if (err instanceof AtCapacityError) return "at capacity";
  if (err instanceof ConnectionClosedError) return `connection failed${err.closeCode ? `, code ${err.closeCode}` : ""}`;
  if (err instanceof Error) return err.name;
  return "failed";
}

// ─── Start-up backoff ───────────────────────────────────────────────────────

export interface BackoffOptions {
  /** The wait after the first miss, in ms (default 50). */
  firstDelayMs?: number;
  /** Each wait is the previous one times this (default 1.5). */
  factor?: number;
  /** No wait is longer than this, in ms (default 1000). */
  maxDelayMs?: number;
  /** Total attempts, the first included (default 5). */
  tries?: number;
}

/** The waits between attempts, in ms: 50, 75, 112.5, … capped, `tries - 1` of them. */
export function backoffDelays(options: BackoffOptions = {}): number[] {
  const { firstDelayMs, factor, maxDelayMs, tries } = { ...DEFAULTS.providers.kyutaiTts.backoff, ...options };
  const delays: number[] = [];
  let next = firstDelayMs;
  for (let i = 1; i < tries; i++) {
    delays.push(Math.min(next, maxDelayMs));
    next *= factor;
  }
  return delays;
}

/** A miss that will be retried, reported before the wait. */
export interface RetryInfo {
  /** The attempt that missed, from 1. */
  attempt: number;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
  error: unknown;
}

/**
 * True for failures that another attempt may fix: the service was at
 * capacity, did not answer in time, or the connection failed. A protocol
 * error or a bad option will not fix itself, so it is not retried.
 */
export function isRetryableStartupError(err: unknown): boolean {
  return err instanceof AtCapacityError || err instanceof ServiceTimeoutError || err instanceof ConnectionClosedError;
}

/**
 * Runs `attempt` until it succeeds, waiting `backoffDelays(options)` between
 * misses (Unmute's TTS start-up: 0.05 s, ×1.5, ≤ 1 s, 5 tries). `onRetry` is
 * called before each wait. The last miss, or any non-retryable error, is thrown.
 */
export async function retryWithBackoff<T>(
  attempt: (n: number, signal?: AbortSignal) => Promise<T>,
  options: BackoffOptions & { signal?: AbortSignal; onRetry?: (info: RetryInfo) => void } = {},
): Promise<T> {
  const delays = backoffDelays(options);
  for (let n = 1; ; n++) {
    try {
      return await attempt(n, options.signal);
    } catch (err) {
      const wait = delays[n - 1];
      if (wait === undefined || options.signal?.aborted || !isRetryableStartupError(err)) throw err;
      options.onRetry?.({ attempt: n, delayMs: wait, error: err });
      await delay(wait, options.signal);
    }
  }
}
