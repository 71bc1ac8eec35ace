import { abortable } from "./abort.js";

/**
 * A typed event emitter on top of EventTarget, with no dependencies.
 * `on` returns its own unsubscribe function. A listener that throws does not
 * stop the others: the error is reported through `reportError` (the browser's
 * global error path), never swallowed.
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

export class Emitter<Events extends EventMap> {
  readonly #target = new EventTarget();
  #count = 0;

  on<K extends keyof Events & string>(name: K, fn: Listener<Events[K]>): () => void {
    const handler = (event: Event) => {
      try {
        fn((event as PayloadEvent<Events[K]>).payload);
      } catch (err) {
        report(err);
      }
    };
    this.#target.addEventListener(name, handler);
    this.#count++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.#count--;
      this.#target.removeEventListener(name, handler);
    };
  }

  /** Resolves with the next payload of `name`; rejects if `signal` aborts first. */
  once<K extends keyof Events & string>(name: K, signal?: AbortSignal): Promise<Events[K]> {
    // The subscription is the cleanup: it goes with the first payload or the abort.
    return abortable<Events[K]>((resolve) => this.on(name, resolve), signal);
  }

  emit<K extends keyof Events & string>(name: K, payload: Events[K]): void {
    this.#target.dispatchEvent(new PayloadEvent(name, payload));
  }

  /** Number of live subscriptions, for leak checks. */
  get listenerCount(): number {
    return this.#count;
  }
}

function report(err: unknown): void {
  if (typeof reportError === "function") reportError(err);
  else queueMicrotask(() => {
    throw err;
  });
}
