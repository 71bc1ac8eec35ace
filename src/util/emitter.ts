import { abortable } from "./abort.js";

/**
 * A typed event emitter on top of EventTarget, with no dependencies.
 *
 * - `on(name, fn)` subscribes and returns its own unsubscribe function.
 * - `once(name, fn)` subscribes for the next payload only; `once(name, signal?)`
 *   is the promise form, resolving with that payload.
 * - `off(name, fn)` removes a subscription of `fn` made with `on` or `once`;
 *   when `fn` is subscribed more than once to `name`, the latest subscription
 *   goes (as Node's `off`). Removing a listener that is not subscribed does
 *   nothing.
 *
 * Listeners run synchronously in `emit`, in subscription order; one removed
 * during an emit does not run in it, if it had not run yet (EventTarget's
 * rule). A listener that throws does not stop the others: the error is
 * reported through `reportError` (the browser's global error path), never
 * swallowed.
 */
export type EventMap = Record<string, unknown>;
export type Listener<T> = (payload: T) => void;

class PayloadEvent<T> extends Event {
  constructor(
    type: string,
    readonly payload: T,
  ) {
    super(type);
  }
}

/** One subscription: the app's function and the EventTarget handler wrapping it. */
interface Subscription {
  readonly fn: Listener<never>;
  readonly handler: (event: Event) => void;
}

export class Emitter<Events extends EventMap> {
  readonly #target = new EventTarget();
  /** Per event name, the live subscriptions in subscription order, for `off`. */
  readonly #subscriptions = new Map<string, Subscription[]>();
  #count = 0;

  on<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): () => void {
    return this.#subscribe(name, fn, false);
  }

  /** Calls `fn` with the next payload of `name` only. Returns the function that unsubscribes before then. */
  once<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): () => void;
  /** Resolves with the next payload of `name`; rejects if `signal` aborts first. */
  once<K extends keyof Events & string>(name: K, signal?: AbortSignal): Promise<Events[K]>;
  once<K extends keyof Events & string>(
    name: K,
    fnOrSignal?: Listener<Events[K]> | AbortSignal,
  ): (() => void) | Promise<Events[K]> {
    if (typeof fnOrSignal === "function") return this.#subscribe(name, fnOrSignal, true);
    // The subscription is the cleanup: it goes with the first payload or the abort.
    return abortable<Events[K]>((resolve) => this.#subscribe(name, resolve, false), fnOrSignal);
  }

  /** Removes the latest subscription of `fn` to `name`; does nothing if there is none. */
  off<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): void {
    const list = this.#subscriptions.get(name);
    if (!list) return;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i].fn === fn) {
        this.#remove(name, list[i]);
        return;
      }
    }
  }

  emit<K extends keyof Events & string>(name: K, payload: Events[K]): void {
    this.#target.dispatchEvent(new PayloadEvent(name, payload));
  }

  /** Number of live subscriptions, for leak checks. */
  get listenerCount(): number {
    return this.#count;
  }

  #subscribe<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>, once: boolean): () => void {
    const subscription: Subscription = {
      fn,
      handler: (event: Event) => {
        // A `once` goes before it runs, so an emit from inside `fn` does not call it again.
        if (once) this.#remove(name, subscription);
        try {
          fn((event as PayloadEvent<Events[K]>).payload);
        } catch (err) {
          report(err);
        }
      },
    };
    this.#target.addEventListener(name, subscription.handler);
    let list = this.#subscriptions.get(name);
    if (!list) this.#subscriptions.set(name, (list = []));
    list.push(subscription);
    this.#count++;
    return () => this.#remove(name, subscription);
  }

  /** Idempotent: a subscription already removed (by `off`, its `once`, or its unsubscribe) is left alone. */
  #remove(name: string, subscription: Subscription): void {
    const list = this.#subscriptions.get(name);
    const index = list ? list.indexOf(subscription) : -1;
    if (index < 0) return;
    list!.splice(index, 1);
    if (list!.length === 0) this.#subscriptions.delete(name);
    this.#count--;
    this.#target.removeEventListener(name, subscription.handler);
  }
}

function report(err: unknown): void {
  if (typeof reportError === "function") reportError(err);
  else queueMicrotask(() => {
    throw err;
  });
}

/**
 * The public `on` / `once` / `off` of a class that emits `Events`, written
 * once: the Player, the Microphone, the Uplink and the VoiceSession extend it
 * and emit with `this.emit`.
 */
export class EventSource<Events extends EventMap> {
  /** The subclass's emitter, for helpers it hands its events to. */
  protected readonly emitter = new Emitter<Events>();

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): () => void {
    return this.emitter.on(name, fn);
  }

  /** Calls `fn` with the next payload of `name` only; returns the function that unsubscribes before then. */
  once<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): () => void;
  /** Resolves with the next payload of `name`; rejects if `signal` aborts first. */
  once<K extends keyof Events & string>(name: K, signal?: AbortSignal): Promise<Events[K]>;
  once<K extends keyof Events & string>(name: K, fnOrSignal?: Listener<Events[K]> | AbortSignal): (() => void) | Promise<Events[K]> {
    return typeof fnOrSignal === "function" ? this.emitter.once(name, fnOrSignal) : this.emitter.once(name, fnOrSignal);
  }

  /** Removes the latest subscription of `fn` to `name` (by `on` or `once`); does nothing if there is none. */
  off<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): void {
    this.emitter.off(name, fn);
  }

  protected emit<K extends keyof Events & string>(name: K, payload: Events[K]): void {
    this.emitter.emit(name, payload);
  }
}
