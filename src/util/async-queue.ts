/**
 * AsyncQueue: an unbounded push queue with one consumer, the one the
 * providers' sockets and the testing fakes share.
 *
 * Contracts:
 * - One thread. Producers call `push`, `end` and `fail`; one consumer reads
 *   with `next` or `iterate`. A second read while one is waiting throws a
 *   StateError: with two readers, which one gets an item would be luck.
 * - Items come out in push order. After `end()` the consumer reads what is
 *   queued, then `done`; after `fail(error)`, what is queued, then `error`.
 *   The first of `end`/`fail` decides; `push` after either is ignored.
 * - Aborting a read rejects that read with the signal's reason and ends it;
 *   the queue and its items stay as they were.
 * - `push` stores one array slot; a read allocates only when it must wait.
 */
import { StateError } from "../errors.js";
import { abortable } from "./abort.js";

type Ending = { kind: "ended" } | { kind: "failed"; error: unknown };

export class AsyncQueue<T> {
  #items: T[] = [];
  #ending: Ending | undefined;
  /** The waiting read's wake-up, while one waits. */
  #wake: (() => void) | undefined;

  /** Queues `item` for the consumer; ignored once the queue is ended or failed. */
  push(item: T): void {
    if (this.#ending) return;
    this.#items.push(item);
    this.#wakeReader();
  }

  /** The consumer gets the queued items, then `done`. */
  end(): void {
    this.#ending ??= { kind: "ended" };
    this.#wakeReader();
  }

  /** The consumer gets the queued items, then `error` (on every later read too). */
  fail(error: unknown): void {
    this.#ending ??= { kind: "failed", error };
    this.#wakeReader();
  }

  /** True once `end` or `fail` was called (items may still be queued). */
  get closed(): boolean {
    return this.#ending !== undefined;
  }

  /** Items queued and not yet read. */
  get size(): number {
    return this.#items.length;
  }

  /**
   * The next item, or `done` once the queue ended and is empty. Rejects with
   * the failure once the queue failed and is empty, or with the signal's
   * reason when it aborts first.
   */
  async next(signal?: AbortSignal): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      signal?.throwIfAborted();
      if (this.#items.length > 0) return { done: false, value: this.#items.shift()! };
      if (this.#ending?.kind === "failed") throw this.#ending.error;
      if (this.#ending) return { done: true, value: undefined };
      if (this.#wake) throw new StateError("AsyncQueue.next(): another read is already waiting; a queue has one consumer");
      await abortable<void>((resolve) => {
        this.#wake = resolve;
        return () => {
          if (this.#wake === resolve) this.#wake = undefined;
        };
      }, signal);
    }
  }

  /** Reads until the queue ends; see `next`. */
  async *iterate(signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    for (;;) {
      const result = await this.next(signal);
      if (result.done) return;
      yield result.value;
    }
  }

  /**
   * Replaces each queued item by `map(item)`, in order, dropping those that
   * map to `undefined`, and returns this queue typed for the new items (the
   * old reference must not be used any more). For an owner that changes what
   * its items are, such as MessageSocket.map after a handshake. When `map`
   * throws, the items already mapped stay, the rest are dropped, and the
   * error is rethrown for the owner to handle (usually by `fail`).
   */
  remap<U>(map: (item: T) => U | undefined): AsyncQueue<U> {
    const self = this as unknown as AsyncQueue<U>;
    const old = this.#items;
    const mapped: U[] = [];
    self.#items = mapped;
    for (const item of old) {
      const value = map(item);
      if (value !== undefined) mapped.push(value);
    }
    return self;
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
