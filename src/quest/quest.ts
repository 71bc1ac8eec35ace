/**
 * Quest: an async RAII for one remote stream, after Kyutai Unmute's
 * quest_manager, with AbortSignal as the only cancellation mechanism.
 *
 *   init(signal) → resource     open the socket / start the fetch
 *   run(resource, signal)       pump the stream until it ends
 *   close(resource)             release it; runs only if init succeeded, at most once
 *
 * Contract: `init` and `run` must settle promptly once `signal` aborts, because
 * `remove()` waits for them to settle before it resolves. That is what lets a
 * QuestManager promise that two quests of one name are never live at once.
 */
import { abortError, linkAbort } from "../util/abort.js";
import { defineAsyncDispose, type AsyncDisposableIfSupported } from "../util/async-dispose.js";

export type QuestInit<T> = (signal: AbortSignal) => T | Promise<T>;
export type QuestRun<T> = (resource: T, signal: AbortSignal) => void | Promise<void>;
export type QuestClose<T> = (resource: T) => void | Promise<void>;

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** An AsyncDisposable where the app's lib has the type: `await using q = …` removes it (see util/async-dispose.ts). */
export interface Quest<T = void> extends AsyncDisposableIfSupported {}

export class Quest<T = void> {
  static {
    defineAsyncDispose(Quest, function () {
      return this.remove();
    });
  }

  readonly name: string;
  readonly #init: QuestInit<T>;
  readonly #run: QuestRun<T>;
  readonly #close: QuestClose<T> | undefined;
  readonly #controller = new AbortController();
  #unlinkParent: () => void = () => {};

  #initResult: Settled<T> | undefined;
  readonly #ready: Promise<T>;
  #resolveReady!: (value: T) => void;
  #rejectReady!: (error: unknown) => void;

  #task: Promise<void> | undefined;
  #removal: Promise<void> | undefined;
  #closed = false;

  constructor(name: string, init: QuestInit<T>, run: QuestRun<T>, close?: QuestClose<T>) {
    this.name = name;
    this.#init = init;
    this.#run = run;
    this.#close = close;
    this.#ready = new Promise<T>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    // get() may never be called; a failed init must not become an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /** A quest with no resource and nothing to close: only a run step. */
  static fromRunStep(name: string, run: (signal: AbortSignal) => void | Promise<void>): Quest<void> {
    return new Quest<void>(name, () => undefined, (_resource, signal) => run(signal));
  }

  /** Aborts when the quest is removed, or when the parent given to `start` aborts. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once `start` was called and until `remove` has begun. */
  get live(): boolean {
    return this.#task !== undefined && this.#removal === undefined;
  }

  /**
   * Starts init then run, once. The returned promise resolves when run ends,
   * and rejects with init's or run's error (an abort rejects with an AbortError).
   * The quest's signal also aborts when `parent` does.
   */
  start(parent?: AbortSignal): Promise<void> {
    if (this.#task) return this.#task;
    this.#unlinkParent = linkAbort(parent, this.#controller);
    this.#task = this.#execute();
    this.#task.catch(() => {});
    return this.#task;
  }

  async #execute(): Promise<void> {
    const signal = this.#controller.signal;
    let resource: T;
    try {
      signal.throwIfAborted();
      resource = await this.#init(signal);
      this.#initResult = { ok: true, value: resource };
    } catch (error) {
      this.#initResult = { ok: false, error };
      this.#rejectReady(error);
      throw error;
    }
    this.#resolveReady(resource);
    // A removal that began while init was in flight has already aborted; it
    // closes the late resource itself, so run must not start on it.
    signal.throwIfAborted();
    await this.#run(resource, signal);
  }

  /** Resolves with init's result; rejects if init failed or the quest was removed first. */
  get(): Promise<T> {
    return this.#ready;
  }

  /** Init's result, or `undefined` while there is none (not started, still in init, or failed). */
  getNowait(): T | undefined {
    return this.#initResult?.ok ? this.#initResult.value : undefined;
  }

  /**
   * Closes the resource if init succeeded (at most once), then aborts the
   * quest's signal in a `finally`, even when close throws. Waits for init and
   * run to settle. Calling it again returns the same promise.
   * Rejects only with close's error.
   */
  remove(): Promise<void> {
    this.#removal ??= this.#removeOnce();
    return this.#removal;
  }

  async #removeOnce(): Promise<void> {
    try {
      if (this.#initResult?.ok) await this.#closeOnce(this.#initResult.value);
    } finally {
      this.#abort();
      this.#unlinkParent();
    }
    if (!this.#task) {
      // Never started: nothing can settle later, so fail get() now.
      this.#rejectReady(this.#controller.signal.reason);
      return;
    }
    await this.#task.catch(() => {});
    // Init was still running when we aborted and then succeeded anyway
    // (it ignored the signal): that resource is ours to close.
    if (this.#initResult?.ok) await this.#closeOnce(this.#initResult.value);
  }

  async #closeOnce(resource: T): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#close?.(resource);
  }

  #abort(): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(abortError(`quest "${this.name}"`));
  }
}
