import { describe, expect, test } from "vitest";
import { StateError } from "../../src/errors.js";
import { AsyncQueue } from "../../src/util/async-queue.js";
import { prng } from "../lib/prng.mjs";

async function readAll<T>(queue: AsyncQueue<T>, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  for await (const item of queue.iterate(signal)) out.push(item);
  return out;
}

describe("AsyncQueue", () => {
  test("items pushed before and while a read waits come out in push order, then done after end()", async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    queue.push(2);
    const reading = readAll(queue);
    await Promise.resolve();
    queue.push(3);
    setTimeout(() => {
      queue.push(4);
      queue.end();
    }, 5);
    expect(await reading).toEqual([1, 2, 3, 4]);
    expect(await queue.next()).toEqual({ done: true, value: undefined });
  });

  test("after fail() the consumer reads what was queued, then the error, on every later read too", async () => {
    const queue = new AsyncQueue<string>();
    const boom = new Error("dropped");
    queue.push("a");
    queue.push("b");
    queue.fail(boom);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const item of queue.iterate()) seen.push(item);
      })(),
    ).rejects.toBe(boom);
    expect(seen).toEqual(["a", "b"]);
    await expect(queue.next()).rejects.toBe(boom);
  });

  test("the first ending decides and a push after it is ignored", async () => {
    const queue = new AsyncQueue<string>();
    queue.push("kept");
    queue.end();
    queue.fail(new Error("too late"));
    queue.push("ignored");
    expect(queue.closed).toBe(true);
    expect(queue.size).toBe(1);
    expect(await readAll(queue)).toEqual(["kept"]);

    const failed = new AsyncQueue<string>();
    const first = new Error("first");
    failed.fail(first);
    failed.end();
    await expect(failed.next()).rejects.toBe(first);
  });

  test("a waiting read that is aborted rejects with the reason and loses no item: the next read gets the next push", async () => {
    const queue = new AsyncQueue<number>();
    const controller = new AbortController();
    const aborted = queue.next(controller.signal);
    const reason = new DOMException("stop", "AbortError");
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    // The old fakes' queue kept the aborted reader's resolver, and this item went to it.
    queue.push(7);
    expect(await queue.next()).toEqual({ done: false, value: 7 });
  });

  test("an already aborted read rejects at once, even with items queued, and leaves them queued", async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    const signal = AbortSignal.abort(new DOMException("gone", "AbortError"));
    await expect(queue.next(signal)).rejects.toMatchObject({ message: "gone" });
    expect(queue.size).toBe(1);
  });

  test("a second read while one waits throws a StateError: a queue has one consumer", async () => {
    const queue = new AsyncQueue<number>();
    const first = queue.next();
    await expect(queue.next()).rejects.toBeInstanceOf(StateError);
    queue.push(1);
    expect(await first).toEqual({ done: false, value: 1 });
  });

  test("remap turns the queued items into new ones in place, drops undefined, and keeps the ending after them", async () => {
    const queue = new AsyncQueue<number>();
    for (const n of [1, 2, 3, 4]) queue.push(n);
    queue.end();
    const strings = queue.remap((n) => (n % 2 === 0 ? `even ${n}` : undefined));
    expect(await readAll(strings)).toEqual(["even 2", "even 4"]);
  });

  test("when remap's function throws, the items mapped before stay and the rest are dropped", async () => {
    const queue = new AsyncQueue<number>();
    for (const n of [1, 2, 3]) queue.push(n);
    const bad = new Error("cannot map 2");
    expect(() =>
      queue.remap((n) => {
        if (n === 2) throw bad;
        return n * 10;
      }),
    ).toThrow(bad);
    queue.end();
    expect(await readAll(queue)).toEqual([10]);
  });

  test("10 000 items from a producer with random pauses reach a consumer with random pauses, in order (seeded)", async () => {
    const random = prng(0x5eed);
    const queue = new AsyncQueue<number>();
    const total = 10_000;
    const producer = (async () => {
      for (let i = 0; i < total; i++) {
        queue.push(i);
        if (random() < 0.1) await new Promise<void>((r) => setImmediate(r));
      }
      queue.end();
    })();
    const got: number[] = [];
    for await (const item of queue.iterate()) {
      got.push(item);
      if (random() < 0.1) await new Promise<void>((r) => setImmediate(r));
    }
    await producer;
    expect(got.length).toBe(total);
    expect(got.every((v, i) => v === i)).toBe(true);
  });
});
