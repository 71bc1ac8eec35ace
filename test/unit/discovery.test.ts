/**
 * Service discovery against real WebSocket instances that refuse ("no free
 * channels"), hang (never say Ready) or answer, through kyutaiStt/kyutaiTts.
 */
import { afterEach, describe, expect, test } from "vitest";
import { AtCapacityError, ConfigError, ServiceTimeoutError } from "../../src/errors.js";
import { backoffDelays, findInstance, retryWithBackoff, shuffled } from "../../src/providers/discovery.js";
import { kyutaiStt } from "../../src/providers/kyutai-stt.js";
import { kyutaiTts } from "../../src/providers/kyutai-tts.js";
import type { ProviderWarning } from "../../src/providers/types.js";
import { rejectionOf, startWsServer, type TestWsServer } from "./providers-servers.js";

const servers: TestWsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Behaviour = "refuse" | "hang" | "answer";
async function instance(behaviour: Behaviour): Promise<TestWsServer> {
  const server = await startWsServer((conn) => {
    if (behaviour === "refuse") conn.sendMsgpack({ type: "Error", message: "no free channels" });
    if (behaviour === "answer") conn.sendMsgpack({ type: "Ready" });
  });
  servers.push(server);
  return server;
}

/** A seeded PRNG (mulberry32) so the shuffle is reproducible. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("shuffle", () => {
  test("is a permutation decided by the injected random source", () => {
    const items = ["a", "b", "c", "d", "e"];
    const once = shuffled(items, seeded(1));
    expect([...once].sort()).toEqual(items);
    expect(shuffled(items, seeded(1))).toEqual(once);
    // Every order is reachable: over many seeds the first slot takes every value.
    const firsts = new Set(Array.from({ length: 200 }, (_, i) => shuffled(items, seeded(i))[0]));
    expect(firsts.size).toBe(5);
    // random() = 0 always swaps with index 0: a known, checkable order.
    expect(shuffled(["a", "b", "c"], () => 0)).toEqual(["b", "c", "a"]);
  });
});

describe("findInstance", () => {
  test("tries at most 3 of 5 instances, in shuffled order, and fails with AtCapacityError naming each URL", async () => {
    const all = await Promise.all([1, 2, 3, 4, 5].map(() => instance("refuse")));
    const urls = all.map((s) => s.url);
    const random = seeded(42);
    const order = shuffled(urls, seeded(42));
    // A generous start-up timeout: this is about the order, and on a loaded machine (CI) a short
    // one can expire before an instance's upgrade, which it then never counts as contacted.
    const err = (await rejectionOf(kyutaiStt({ urls, random, startupTimeoutMs: 5000 }).connect())) as AtCapacityError;
    expect(err).toBeInstanceOf(AtCapacityError);
    expect(err.service).toBe("stt");
    const contacted = all.filter((s) => s.connections.length > 0).map((s) => s.url);
    expect(contacted.sort()).toEqual(order.slice(0, 3).sort());
    for (const url of order.slice(0, 3)) expect(err.message).toContain(`${url} (at capacity)`);
    for (const url of order.slice(3)) expect(err.message).not.toContain(url);
  });

  test("skips a refusing and a hanging instance and connects to the one that answers", async () => {
    const refuse = await instance("refuse");
    const hang = await instance("hang");
    const answer = await instance("answer");
    // random() = 0.99 keeps the order as given.
    const stream = await kyutaiStt({ urls: [refuse.url, hang.url, answer.url], random: () => 0.99, startupTimeoutMs: 400 }).connect();
    expect([refuse, hang, answer].map((s) => s.connections.length)).toEqual([1, 1, 1]);
    expect(await hang.connections[0].closed).toBe(1000); // the timed-out try was closed, not leaked
    await stream.close();
  });

  test("an instance that never says Ready fails after startupTimeoutMs with ServiceTimeoutError", async () => {
    const hang = await instance("hang");
    const started = performance.now();
    const err = (await rejectionOf(kyutaiStt({ urls: hang.url, startupTimeoutMs: 500 }).connect())) as ServiceTimeoutError;
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(ServiceTimeoutError);
    expect(err.timeoutMs).toBe(500);
    expect(err.message).toContain(`${hang.url} (no answer in 500 ms)`);
    expect(elapsed).toBeGreaterThanOrEqual(490);
    expect(elapsed).toBeLessThan(900);
  });

  test("the class of the final error follows the last failure: refuse then hang is a timeout", async () => {
    const refuse = await instance("refuse");
    const hang = await instance("hang");
    const err = await rejectionOf(kyutaiStt({ urls: [refuse.url, hang.url], random: () => 0.99, startupTimeoutMs: 400 }).connect());
    expect(err).toBeInstanceOf(ServiceTimeoutError);
    expect((err as Error).message).toContain(`${refuse.url} (at capacity)`);
  });

  test("aborting the search rejects with the abort reason at once", async () => {
    const hang = await instance("hang");
    const controller = new AbortController();
    const started = performance.now();
    const finding = kyutaiStt({ urls: hang.url, startupTimeoutMs: 500 }).connect(controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await rejectionOf(finding)).toHaveProperty("name", "AbortError");
    expect(performance.now() - started).toBeLessThan(300);
  });

  test("no URL is a configuration error", async () => {
    expect(() => kyutaiStt({ urls: [] })).toThrow(ConfigError);
    await expect(findInstance({ service: "x", urls: [], maxTries: undefined, startupTimeoutMs: 500 }, async () => 1)).rejects.toThrow(/no instance URL/);
  });
});

describe("start-up backoff", () => {
  test("the schedule is 50, 75, 112.5, 168.75 ms for 5 tries, and is capped at 1 s", () => {
    expect(backoffDelays()).toEqual([50, 75, 112.5, 168.75]);
    const long = backoffDelays({ tries: 12 });
    expect(long.slice(0, 8)).toEqual([50, 75, 112.5, 168.75, 253.125, 379.6875, 569.53125, 854.296875]);
    expect(long.slice(8)).toEqual([1000, 1000, 1000]);
  });

  test("retries wait the scheduled delays, measured on the clock", async () => {
    const times: number[] = [];
    const scheduled: number[] = [];
    const err = await rejectionOf(
      retryWithBackoff(
        async () => {
          times.push(performance.now());
          throw new AtCapacityError("busy");
        },
        { onRetry: (info) => scheduled.push(info.delayMs) },
      ),
    );
    expect(err).toBeInstanceOf(AtCapacityError);
    expect(times).toHaveLength(5);
    // The schedule is exact; the clock shows each wait was at least as long. No upper bound: a
    // loaded machine (CI, load 18) runs timers late, and how late is the machine's, not the code's.
    expect(scheduled).toEqual([50, 75, 112.5, 168.75]);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(scheduled[i] - 2));
  });

  test("an error that retrying cannot fix is thrown at once", async () => {
    let calls = 0;
    const err = await rejectionOf(
      retryWithBackoff(async () => {
        calls++;
        throw new ConfigError("bad option");
      }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(calls).toBe(1);
  });

  test("kyutaiTts emits one warning per missed start-up and connects when an instance frees up", async () => {
    let refusals = 2;
    const server = await startWsServer((conn) => {
      if (refusals-- > 0) conn.sendMsgpack({ type: "Error", message: "no free channels" });
      else conn.sendMsgpack({ type: "Ready" });
    });
    servers.push(server);
    const tts = kyutaiTts({ urls: server.url });
    const warnings: ProviderWarning[] = [];
    const off = tts.on("warning", (w) => warnings.push(w));
    const stream = await tts.connect();
    off();
    expect(server.connections).toHaveLength(3);
    expect(warnings.map((w) => [w.service, w.attempt, w.delayMs])).toEqual([
      ["tts", 1, 50],
      ["tts", 2, 75],
    ]);
    expect(warnings[0].message).toMatch(/looking for tts resources/i);
    expect(warnings[0].cause).toBeInstanceOf(AtCapacityError);
    await stream.close();
  });

  test("kyutaiTts gives up after 5 start-up attempts with AtCapacityError", async () => {
    const refuse = await instance("refuse");
    const tts = kyutaiTts({ urls: refuse.url });
    const warnings: ProviderWarning[] = [];
    tts.on("warning", (w) => warnings.push(w));
    expect(await rejectionOf(tts.connect())).toBeInstanceOf(AtCapacityError);
    expect(refuse.connections).toHaveLength(5);
    expect(warnings.map((w) => w.delayMs)).toEqual([50, 75, 112.5, 168.75]);
  });
});
