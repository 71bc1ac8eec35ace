/**
 * When to reconnect a stream that failed, as a policy the app can replace
 * (after livekit-client's `ReconnectPolicy`). Pure: the caller owns the timer
 * and the clock, and asks the policy only for the next delay.
 */
import { DEFAULTS } from "../defaults.js";

export interface ReconnectContext {
  /**
   * Reconnect attempts already made in this episode, counted from 0. An
   * episode starts when a stream fails and ends once a new stream has stayed
   * up for the policy's `stableMs`; a stream that fails again sooner (a
   * service that breaks every stream at once) continues the episode.
   */
  retryCount: number;
  /** Milliseconds since the episode started. */
  elapsedMs: number;
  /** What failed: the stream dropped, the uplink gave up on it (overload "end"), or a reconnect attempt itself failed. */
  reason: "dropped" | "overload" | "connect-failed";
  /** The error behind it. */
  error: unknown;
}

export interface ReconnectPolicy {
  /** Milliseconds to wait before the next attempt, or null to give up (the session then stops with the error). */
  nextRetryDelayMs(context: ReconnectContext): number | null;
  /** A new stream that stays up this long ends the episode: the next failure counts from 0 again. */
  readonly stableMs: number;
}

export interface BackoffPolicyOptions {
  /**
   * Delay before each attempt, in ms; its length is the number of attempts.
   * @defaultValue [0, 300, 1000]
   */
  delaysMs?: readonly number[];
  /**
   * Each delay is spread by ± this fraction, so many clients do not retry in step.
   * @defaultValue 0.2
   */
  jitter?: number;
  /**
   * A new stream that stays up this long (ms) ends the episode: the next failure counts from 0 again.
   * @defaultValue 10000
   */
  stableMs?: number;
  /** @internal A source of randomness in [0, 1) (tests). */
  random?: () => number;
}

/**
 * The default: three attempts, the first at once (the user may be mid-word,
 * and the replay buffer covers only `uplink.replayMs`), then 0.3 s and 1 s
 * with jitter; a fourth failure within `stableMs` gives up.
 */
export function backoffReconnectPolicy(options: BackoffPolicyOptions = {}): ReconnectPolicy {
  const delays = options.delaysMs ?? DEFAULTS.reconnect.delaysMs;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? DEFAULTS.reconnect.jitter));
  const random = options.random ?? Math.random;
  return {
    stableMs: options.stableMs ?? DEFAULTS.reconnect.stableMs,
    nextRetryDelayMs({ retryCount }) {
      if (retryCount >= delays.length) return null;
      const base = delays[retryCount];
      return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
    },
  };
}
