/** The default reconnect policy: its delays, its jitter and where it gives up. Pure, no timers. */
import { expect, test } from "vitest";
import { backoffReconnectPolicy } from "../../src/session/reconnect-policy.js";

const ask = (policy: ReturnType<typeof backoffReconnectPolicy>, retryCount: number) =>
  policy.nextRetryDelayMs({ retryCount, elapsedMs: 0, reason: "dropped", error: new Error("x") });

test("three attempts (at once, ~0.3 s, ~1 s), then null: the session gives up", () => {
  const policy = backoffReconnectPolicy({ random: () => 0.5 });
  expect([0, 1, 2, 3].map((n) => ask(policy, n))).toEqual([0, 300, 1000, null]);
  expect(policy.stableMs).toBe(10_000);
});

test("jitter spreads each delay by at most ±20%, and never below 0", () => {
  const low = backoffReconnectPolicy({ random: () => 0 });
  const high = backoffReconnectPolicy({ random: () => 0.999999 });
  expect([ask(low, 1), ask(high, 1)]).toEqual([240, 360]);
  expect([ask(low, 0), ask(high, 0)]).toEqual([0, 0]);
  const custom = backoffReconnectPolicy({ delaysMs: [50], jitter: 0, stableMs: 5 });
  expect([ask(custom, 0), ask(custom, 1), custom.stableMs]).toEqual([50, null, 5]);
});
