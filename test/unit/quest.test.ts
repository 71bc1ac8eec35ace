import { describe, expect, test } from "vitest";
import { AtCapacityError, ConnectionClosedError } from "../../src/errors.js";
import { Quest } from "../../src/quest/quest.js";
import { QuestManager } from "../../src/quest/quest-manager.js";
import { isAbort } from "../../src/util/abort.js";
import { delay } from "../../src/util/timeout.js";
import { sleep } from "../lib/wait.mjs";

/** A quest that records every step in `log` and runs until aborted. */
function recorded(
  name: string,
  tag: string,
  log: string[],
  opts: { initMs?: number; initError?: Error; runError?: Error; closeError?: Error; ignoreAbortInInit?: boolean } = {},
) {
  return new Quest<string>(
    name,
    async (signal) => {
      log.push(`${tag}:init`);
      await delay(opts.initMs ?? 0, opts.ignoreAbortInInit ? undefined : signal);
      if (opts.initError) throw opts.initError;
      log.push(`${tag}:ready`);
      return `${tag}-resource`;
    },
    async (_r, signal) => {
      log.push(`${tag}:run`);
      if (opts.runError) throw opts.runError;
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      log.push(`${tag}:aborted`);
    },
    (r) => {
      log.push(`${tag}:close(${r})`);
      if (opts.closeError) throw opts.closeError;
    },
  );
}

const tick = () => sleep(0);

describe("Quest", () => {
  test("get() resolves with init's result and getNowait() returns it afterwards", async () => {
    const log: string[] = [];
    const q = recorded("stt", "a", log, { initMs: 5 });
    q.start();
    expect(q.getNowait()).toBeUndefined();
    expect(await q.get()).toBe("a-resource");
    expect(q.getNowait()).toBe("a-resource");
    await q.remove();
  });

  test("get() rejects when init fails, and remove() then skips close", async () => {
    const log: string[] = [];
    const boom = new Error("init failed");
    const q = recorded("tts", "a", log, { initError: boom });
    const done = q.start();
    await expect(q.get()).rejects.toBe(boom);
    await expect(done).rejects.toBe(boom);
    expect(q.getNowait()).toBeUndefined();
    await q.remove();
    expect(log).toEqual(["a:init"]);
    expect(q.signal.aborted).toBe(true);
  });

  test("remove() closes before it aborts the signal, and only once", async () => {
    const log: string[] = [];
    const q = recorded("llm", "a", log);
    const done = q.start();
    await q.get();
    let abortedDuringClose: boolean | undefined;
    const original = log.push.bind(log);
    log.push = (...items: string[]) => {
      if (items[0].startsWith("a:close")) abortedDuringClose = q.signal.aborted;
      return original(...items);
    };
    await Promise.all([q.remove(), q.remove()]);
    await q.remove();
    expect(abortedDuringClose).toBe(false);
    expect(log.filter((l) => l.startsWith("a:close"))).toEqual(["a:close(a-resource)"]);
    expect(q.signal.aborted).toBe(true);
    const err = await done.catch((e) => e);
    expect(err === undefined || isAbort(err)).toBe(true);
  });

  test("the signal is aborted even when close throws, and remove() rejects with close's error", async () => {
    const log: string[] = [];
    const closeError = new Error("close failed");
    const q = recorded("tts", "a", log, { closeError });
    q.start();
    await q.get();
    await expect(q.remove()).rejects.toBe(closeError);
    expect(q.signal.aborted).toBe(true);
    expect(log).toContain("a:aborted");
  });

  test("a quest removed during init is aborted and never closes a resource it never got", async () => {
    const log: string[] = [];
    const q = recorded("tts", "a", log, { initMs: 50 });
    const done = q.start();
    await tick();
    await q.remove();
    expect(log).toEqual(["a:init"]);
    expect(isAbort(await done.catch((e) => e))).toBe(true);
    await expect(q.get()).rejects.toSatisfy(isAbort);
  });

  test("init that ignores the abort and succeeds late gets its resource closed, and run never starts", async () => {
    const log: string[] = [];
    const q = recorded("tts", "a", log, { initMs: 20, ignoreAbortInInit: true });
    q.start();
    await tick();
    await q.remove();
    expect(log).toEqual(["a:init", "a:ready", "a:close(a-resource)"]);
  });

  test("fromRunStep builds a quest with no resource and no close", async () => {
    const seen: string[] = [];
    const q = Quest.fromRunStep("llm", async (signal) => {
      seen.push("run");
      await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      seen.push("aborted");
    });
    q.start();
    await q.get();
    await tick();
    await q.remove();
    expect(seen).toEqual(["run", "aborted"]);
  });

  test("await using removes the quest at the end of the block", async () => {
    const log: string[] = [];
    {
      await using q = recorded("stt", "a", log);
      q.start();
      await q.get();
    }
    expect(log).toContain("a:close(a-resource)");
  });

  test("a parent signal aborts the quest", async () => {
    const parent = new AbortController();
    const log: string[] = [];
    const q = recorded("stt", "a", log);
    const done = q.start(parent.signal);
    await q.get();
    parent.abort();
    await done.catch(() => {});
    expect(q.signal.aborted).toBe(true);
    expect(log).toContain("a:aborted");
    await q.remove();
  });
});

describe("QuestManager", () => {
  test("replacing a quest closes the old one before the new one starts", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    await m.add(recorded("tts", "a", log));
    await m.get<string>("tts")!.get();
    const b = await m.add(recorded("tts", "b", log));
    await b.get();
    expect(log).toEqual(["a:init", "a:ready", "a:run", "a:close(a-resource)", "a:aborted", "b:init", "b:ready", "b:run"]);
    expect(m.names).toEqual(["tts"]);
    await m.dispose();
  });

  test("two adds of one name without awaiting never leave two quests live", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    let liveAtOnce = 0;
    let maxLive = 0;
    const tracked = (tag: string) =>
      new Quest<string>(
        "llm",
        async () => {
          liveAtOnce++;
          maxLive = Math.max(maxLive, liveAtOnce);
          log.push(`${tag}:init`);
          return tag;
        },
        (_r, signal) => new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true })),
        () => {
          liveAtOnce--;
          log.push(`${tag}:close`);
        },
      );
    const adds = [m.add(tracked("a")), m.add(tracked("b")), m.add(tracked("c"))];
    await Promise.all(adds);
    await m.get<string>("llm")!.get();
    expect(maxLive).toBe(1);
    expect(m.get<string>("llm")!.getNowait()).toBe("c");
    await m.dispose();
    expect(liveAtOnce).toBe(0);
  });

  test("replacing a quest that is still in init aborts its init and starts the new one", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    const a = await m.add(recorded("tts", "a", log, { initMs: 10_000 }));
    const b = await m.add(recorded("tts", "b", log));
    await b.get();
    await expect(a.get()).rejects.toSatisfy(isAbort);
    expect(log).toEqual(["a:init", "b:init", "b:ready", "b:run"]);
    await m.dispose();
  });

  test("a close that throws during replacement is reported to add(), and the new quest still starts", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    const closeError = new Error("socket close failed");
    await m.add(recorded("tts", "a", log, { closeError }));
    await m.get<string>("tts")!.get();
    await expect(m.add(recorded("tts", "b", log))).rejects.toBe(closeError);
    await m.get<string>("tts")!.get();
    expect(m.get<string>("tts")!.getNowait()).toBe("b-resource");
    await m.dispose();
  });

  test("remove(name) is a no-op for an unknown name, and double remove closes once", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    await m.remove("nothing");
    await m.add(recorded("stt", "a", log));
    await m.get<string>("stt")!.get();
    await Promise.all([m.remove("stt"), m.remove("stt")]);
    expect(log.filter((l) => l.includes("close"))).toEqual(["a:close(a-resource)"]);
    expect(m.size).toBe(0);
  });

  test("remove() right after an unawaited add() removes that quest", async () => {
    const log: string[] = [];
    const m = new QuestManager();
    void m.add(recorded("llm", "a", log));
    await m.remove("llm");
    expect(m.size).toBe(0);
    await m.wait();
  });

  test("wait() rejects with the first real error of any quest", async () => {
    const m = new QuestManager();
    const runError = new Error("stream broke");
    const log: string[] = [];
    await m.add(recorded("stt", "a", log));
    await m.add(recorded("llm", "b", log, { runError }));
    await expect(m.wait()).rejects.toBe(runError);
    // The failed quest was removed (its close ran); the other is still live.
    expect(log).toContain("b:close(b-resource)");
    expect(m.names).toEqual(["stt"]);
    await m.dispose();
  });

  test("wait() rejects with an init error too", async () => {
    const m = new QuestManager();
    const initError = new AtCapacityError("no free channels", { service: "tts" });
    await m.add(recorded("tts", "a", [], { initError }));
    await expect(m.wait()).rejects.toBe(initError);
  });

  test("aborts never reach wait(): removing quests resolves it", async () => {
    const m = new QuestManager();
    const log: string[] = [];
    await m.add(recorded("stt", "a", log));
    await m.add(recorded("llm", "b", log, { initMs: 1000 }));
    const waiting = m.wait();
    await m.remove("llm");
    await m.remove("stt");
    await expect(waiting).resolves.toBeUndefined();
  });

  test("a quest whose run ends is removed and closed", async () => {
    const m = new QuestManager();
    const log: string[] = [];
    await m.add(
      new Quest(
        "tts",
        async () => "r",
        async () => {
          log.push("run");
        },
        () => {
          log.push("close");
        },
      ),
    );
    await m.wait();
    expect(log).toEqual(["run", "close"]);
    expect(m.size).toBe(0);
  });

  test("dispose swallows expected shutdown errors and throws any other", async () => {
    const m = new QuestManager();
    await m.add(recorded("stt", "a", [], { closeError: new ConnectionClosedError("already closed") }));
    await m.add(recorded("tts", "b", [], { closeError: new AtCapacityError("no free channels") }));
    await m.get("stt")!.get();
    await m.get("tts")!.get();
    await expect(m.dispose()).resolves.toBeUndefined();

    const m2 = new QuestManager();
    const bug = new TypeError("a real bug in close");
    await m2.add(recorded("llm", "c", [], { closeError: bug }));
    await m2.get("llm")!.get();
    await expect(m2.dispose()).rejects.toBe(bug);
  });

  test("add() after dispose refuses to start the quest with a StateError, and removes it", async () => {
    const m = new QuestManager();
    await m.dispose();
    const log: string[] = [];
    await expect(m.add(recorded("tts", "a", log))).rejects.toMatchObject({ name: "StateError", code: "state", message: expect.stringMatching(/disposed/) });
    expect(log).toEqual([]);
  });

  test("the parent signal aborts every quest, and no error reaches wait()", async () => {
    const parent = new AbortController();
    const m = new QuestManager(parent.signal);
    const log: string[] = [];
    await m.add(recorded("stt", "a", log));
    await m.add(recorded("tts", "b", log));
    await m.get("stt")!.get();
    await m.get("tts")!.get();
    parent.abort();
    await expect(m.wait()).resolves.toBeUndefined();
    expect(log).toEqual(expect.arrayContaining(["a:aborted", "b:aborted", "a:close(a-resource)", "b:close(b-resource)"]));
  });

  test("1,000 rapid replacements leave no listener, timer or pending quest behind", async () => {
    // Count listeners on the long-lived parent signal, the way a session's would accumulate.
    const parent = new AbortController();
    let listeners = 0;
    const add = parent.signal.addEventListener.bind(parent.signal);
    const rm = parent.signal.removeEventListener.bind(parent.signal);
    parent.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      return add(...args);
    }) as typeof add;
    parent.signal.removeEventListener = ((...args: Parameters<typeof rm>) => {
      listeners--;
      return rm(...args);
    }) as typeof rm;
    const timers = () =>
      (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((h) => h === "Timeout")
        .length;
    const timersBefore = timers(); // vitest's own test-timeout timer is one
    const m = new QuestManager(parent.signal);
    const managerListeners = listeners; // the manager's own link
    let inits = 0;
    let closes = 0;
    let settled = 0;
    const quests: Quest<number>[] = [];
    for (let i = 0; i < 1000; i++) {
      const q = new Quest<number>(
        "tts",
        async (signal) => {
          inits++;
          await delay(i % 3, signal);
          return i;
        },
        (_r, signal) => new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true })),
        () => {
          closes++;
        },
      );
      quests.push(q);
      void m.add(q);
    }
    await m.get("tts");
    await tick();
    await m.remove("tts");
    await m.wait();
    await Promise.all(quests.map((q) => q.start().catch(() => {}).then(() => settled++)));
    expect(settled).toBe(1000);
    expect(m.size).toBe(0);
    expect(inits).toBe(1000);
    // Every quest whose init succeeded was closed exactly once.
    expect(closes).toBe(quests.filter((q) => q.getNowait() !== undefined).length);
    expect(listeners).toBe(managerListeners);
    expect(quests.every((q) => q.signal.aborted)).toBe(true);
    await m.dispose();
    expect(listeners).toBe(managerListeners - 1);
    // delay() timers were cleared on abort: nothing keeps the event loop busy. At most as many as
    // before, not exactly: a timer from an earlier test file in this worker may fire meanwhile (CI saw 1 → 0).
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  });
});
