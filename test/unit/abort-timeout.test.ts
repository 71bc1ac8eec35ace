import { afterEach, describe, expect, test, vi } from "vitest";
import { abortable, isAbort, raceAbort } from "../../src/util/abort.js";
import { Emitter } from "../../src/util/emitter.js";
import { delay, timeout } from "../../src/util/timeout.js";
import { sleep } from "../lib/wait.mjs";

/** A signal that counts its live abort listeners. */
function countingSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  let live = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  const handlers = new Set<unknown>();
  signal.addEventListener = ((type: string, fn: EventListenerOrEventListenerObject, opts?: AddEventListenerOptions) => {
    if (type === "abort" && !handlers.has(fn)) {
      handlers.add(fn);
      live++;
    }
    add(type, fn, opts);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((type: string, fn: EventListenerOrEventListenerObject) => {
    if (type === "abort" && handlers.delete(fn)) live--;
    remove(type, fn);
  }) as typeof signal.removeEventListener;
  return { controller, signal, live: () => live };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("abortable and raceAbort", () => {
  test("a long-lived signal collects no listeners: 1000 waits that settled leave none behind", async () => {
    const { signal, live } = countingSignal();
    for (let i = 0; i < 500; i++) await raceAbort(Promise.resolve(i), signal);
    for (let i = 0; i < 500; i++) await raceAbort(Promise.reject(new Error("x")), signal).catch(() => {});
    expect(live()).toBe(0);
  });

  test("an abort rejects with the signal's reason and runs the cleanup once", async () => {
    const { controller, signal, live } = countingSignal();
    const cleanup = vi.fn();
    const waiting = abortable<number>(() => cleanup, signal);
    expect(live()).toBe(1);
    const reason = new DOMException("user left", "AbortError");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(cleanup).toHaveBeenCalledTimes(1);
    expect(live()).toBe(0);
  });

  test("a synchronous resolve wins, and the cleanup still runs once", async () => {
    const cleanup = vi.fn();
    const { controller, signal } = countingSignal();
    const value = abortable<string>((resolve) => {
      resolve("now");
      return cleanup;
    }, signal);
    controller.abort();
    expect(await value).toBe("now");
    expect(cleanup).toHaveBeenCalledTimes(1);
  });

  test("an already aborted signal rejects at once without calling the executor", async () => {
    const executor = vi.fn();
    await expect(abortable(executor, AbortSignal.abort())).rejects.toSatisfy(isAbort);
    expect(executor).not.toHaveBeenCalled();
  });

  test("raceAbort gives up on the abort, and the raced promise failing later is not an unhandled rejection", async () => {
    const controller = new AbortController();
    let fail!: (e: unknown) => void;
    const slow = new Promise<never>((_, reject) => (fail = reject));
    const raced = raceAbort(slow, controller.signal);
    controller.abort();
    await expect(raced).rejects.toSatisfy(isAbort);
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    fail(new Error("late"));
    await sleep(10);
    process.off("unhandledRejection", unhandled);
    expect(unhandled).not.toHaveBeenCalled();
  });

  test("Emitter.once, built on abortable, unsubscribes on the payload and on the abort", async () => {
    const emitter = new Emitter<{ ping: number }>();
    const controller = new AbortController();
    const first = emitter.once("ping", controller.signal);
    expect(emitter.listenerCount).toBe(1);
    emitter.emit("ping", 1);
    expect(await first).toBe(1);
    expect(emitter.listenerCount).toBe(0);
    const second = emitter.once("ping", controller.signal);
    controller.abort();
    await expect(second).rejects.toSatisfy(isAbort);
    expect(emitter.listenerCount).toBe(0);
  });
});

describe("timeout and delay", () => {
  test("timeout aborts its signal with a TimeoutError when the time is up, and not before", async () => {
    vi.useFakeTimers();
    const limit = timeout(250);
    await vi.advanceTimersByTimeAsync(249);
    expect(limit.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(limit.signal.aborted).toBe(true);
    expect(limit.expired).toBe(true);
    expect(limit.signal.reason).toMatchObject({ name: "TimeoutError" });
    expect(isAbort(limit.signal.reason)).toBe(false);
  });

  test("a parent's abort passes its reason through, is not `expired`, and stops the timer", async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const limit = timeout(1000, parent.signal);
    const reason = new DOMException("session stopped", "AbortError");
    parent.abort(reason);
    expect(limit.signal.reason).toBe(reason);
    expect(limit.expired).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  test("clear() stops the timer and unlinks the parent: nothing aborts afterwards", async () => {
    vi.useFakeTimers();
    const { controller, signal, live } = countingSignal();
    const limit = timeout(100, signal);
    expect(live()).toBe(1);
    limit.clear();
    expect(live()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    controller.abort();
    await vi.advanceTimersByTimeAsync(200);
    expect(limit.signal.aborted).toBe(false);
  });

  test("delay resolves after its time, and an abort rejects it at once and releases its timer", async () => {
    vi.useFakeTimers();
    let done = false;
    const waited = delay(300).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(299);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waited;
    expect(done).toBe(true);

    const controller = new AbortController();
    const cut = delay(10_000, controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    await expect(cut).rejects.toSatisfy(isAbort);
    expect(vi.getTimerCount()).toBe(0);
  });
});
