/**
 * QuestManager: owns the session's remote streams by name.
 *
 * Rules (from Unmute's quest_manager):
 * - At most one quest per name is ever live. `add` first awaits the removal of
 *   the live quest of that name, and only then starts the new one. Calls for one
 *   name (`add`, `remove`) run strictly in call order, even when not awaited.
 * - A quest whose run ends (normally or not) is removed, so its close runs.
 * - `wait()` rejects with the first real error of any quest; aborts are not errors.
 * - Disposing removes every quest, swallows the errors expected at shutdown
 *   (at capacity, timeout, socket already closed) and throws any other.
 */
import { isExpectedAtShutdown, StateError } from "../errors.js";
import { isAbort, linkAbort } from "../util/abort.js";
import type { Quest } from "./quest.js";
import { defineAsyncDispose, type AsyncDisposableIfSupported } from "../util/async-dispose.js";

/** An AsyncDisposable where the app's lib has the type: `await using` disposes it (see util/async-dispose.ts). */
export interface QuestManager extends AsyncDisposableIfSupported {}

export class QuestManager {
  static {
    defineAsyncDispose(QuestManager, function () {
      return this.dispose();
    });
  }

  readonly #live = new Map<string, Quest<any>>();
  /** Per name, the tail of the chain of pending add/remove calls. */
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #controller = new AbortController();
  readonly #unlinkParent: () => void;
  #firstError: { error: unknown } | undefined;
  readonly #waiters = new Set<{ resolve: () => void; reject: (e: unknown) => void }>();
  #disposal: Promise<void> | undefined;

  /** Every quest's signal also aborts when `parent` (e.g. the session's) does. */
  constructor(parent?: AbortSignal) {
    this.#unlinkParent = linkAbort(parent, this.#controller);
  }

  /** Names of the live quests. */
  get names(): string[] {
    return [...this.#live.keys()];
  }

  get size(): number {
    return this.#live.size;
  }

  /**
   * Replaces any live quest of the same name, then starts `quest`.
   * Resolves with the quest once it has started (not once init is done:
   * `await quest.get()` for that). Rejects if the manager is disposed first,
   * or if closing the replaced quest threw (the new quest still starts).
   */
  add<T>(quest: Quest<T>): Promise<Quest<T>> {
    return this.#enqueue(quest.name, async () => {
      let closeError: { error: unknown } | undefined;
      const previous = this.#live.get(quest.name);
      if (previous) {
        this.#live.delete(quest.name);
        await previous.remove().catch((error) => (closeError = { error }));
      }
      if (this.#disposal) {
        await quest.remove();
        throw new StateError(`QuestManager.add(): the manager is disposed; quest "${quest.name}" was not started`);
      }
      this.#live.set(quest.name, quest);
      quest.start(this.#controller.signal).then(
        () => this.#settled(quest, undefined),
        (error) => this.#settled(quest, { error }),
      );
      if (closeError) throw closeError.error;
      return quest;
    });
  }

  /** Removes the live quest called `name`; a no-op when there is none. */
  remove(name: string): Promise<void> {
    return this.#enqueue(name, async () => {
      const quest = this.#live.get(name);
      if (!quest) return;
      this.#live.delete(name);
      await quest.remove();
    });
  }

  /** The live quest called `name`, if any. */
  get<T = unknown>(name: string): Quest<T> | undefined {
    return this.#live.get(name) as Quest<T> | undefined;
  }

  /**
   * Resolves once no quest is live and none is pending; rejects with the first
   * real error any quest has had (also one that happened before this call).
   */
  wait(): Promise<void> {
    if (this.#firstError) return Promise.reject(this.#firstError.error);
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.add({ resolve, reject }));
  }

  #idle(): boolean {
    return this.#live.size === 0 && this.#chains.size === 0;
  }

  #enqueue<R>(name: string, step: () => Promise<R>): Promise<R> {
    const previous = this.#chains.get(name) ?? Promise.resolve();
    const result = previous.then(step);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#chains.set(name, tail);
    tail.then(() => {
      if (this.#chains.get(name) === tail) this.#chains.delete(name);
      this.#notify();
    });
    return result;
  }

  #settled(quest: Quest<any>, failure: { error: unknown } | undefined): void {
    if (failure) this.#failUnlessExpected(failure.error);
    if (this.#live.get(quest.name) === quest) this.#live.delete(quest.name);
    quest.remove().then(
      () => this.#notify(),
      (error) => {
        this.#failUnlessExpected(error);
        this.#notify();
      },
    );
  }

  /** Aborts are never errors; at shutdown, neither are the expected closing errors. */
  #failUnlessExpected(error: unknown): void {
    if (isAbort(error)) return;
    if (this.#disposal && isExpectedAtShutdown(error)) return;
    this.#fail(error);
  }

  #fail(error: unknown): void {
    if (this.#firstError) return;
    this.#firstError = { error };
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters.clear();
  }

  #notify(): void {
    if (!this.#idle()) return;
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  /**
   * Removes every quest. Errors expected at shutdown are swallowed; any other
   * is thrown (an AggregateError when there are several).
   */
  dispose(): Promise<void> {
    this.#disposal ??= this.#disposeOnce();
    return this.#disposal;
  }

  async #disposeOnce(): Promise<void> {
    // Let queued add/remove calls finish first, so none starts a quest after us.
    await Promise.all([...this.#chains.values()]);
    const quests = [...this.#live.values()];
    this.#live.clear();
    const results = await Promise.allSettled(quests.map((q) => q.remove()));
    this.#controller.abort();
    this.#unlinkParent();
    this.#notify();
    const unexpected = results
      .filter((r): r is PromiseRejectedResult => r.status === "rejected")
      .map((r) => r.reason)
      .filter((e) => !isAbort(e) && !isExpectedAtShutdown(e));
    if (unexpected.length === 1) throw unexpected[0];
    if (unexpected.length > 1) throw new AggregateError(unexpected, "errors while closing quests");
  }
}
