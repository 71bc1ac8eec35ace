/**
 * A scripted stand-in for React's hooks runtime, for the tests of
 * bargein/react while react is not installed here (it is a mock because the
 * real one cannot run: see the report). It follows the documented semantics
 * the hook relies on (https://react.dev/reference/react): state kept per
 * slot; effects run after the render, cleaned up before a re-run when their
 * deps change and at unmount; useSyncExternalStore re-renders when the
 * snapshot changes. `strict` does what StrictMode does in development: the
 * first render twice (the first one's state thrown away), then the effects
 * mounted, unmounted and mounted again.
 */
import type { ReactHooks } from "../../src/react/use-voice-session.js";

interface EffectSlot {
  deps: readonly unknown[] | undefined;
  cleanup: (() => void) | void;
}

export class FakeRoot<T> {
  result!: T;
  renders = 0;
  #slots: unknown[] = [];
  #i = 0;
  #pending: Array<() => void> = [];
  #subscriptions: Array<() => void> = [];
  #mounted = false;
  readonly #render: (hooks: ReactHooks) => T;

  constructor(render: (hooks: ReactHooks) => T) {
    this.#render = render;
  }

  mount({ strict = false } = {}): void {
    if (strict) {
      this.#renderOnce(); // thrown away, as StrictMode's first render
      this.#slots = [];
      this.#pending = [];
    }
    this.#renderOnce();
    this.#mounted = true;
    this.#commit();
    if (strict) {
      this.#cleanupAll();
      for (const slot of this.#slots) if (isEffect(slot)) slot.cleanup = slot.run!();
    }
  }

  unmount(): void {
    this.#mounted = false;
    for (const off of this.#subscriptions.splice(0)) off();
    this.#cleanupAll();
  }

  #cleanupAll(): void {
    for (const slot of this.#slots) if (isEffect(slot) && typeof slot.cleanup === "function") slot.cleanup();
  }

  #renderOnce(): void {
    this.#i = 0;
    this.renders++;
    this.result = this.#render(this.#hooks);
  }

  #commit(): void {
    for (const fn of this.#pending.splice(0)) fn();
  }

  readonly #hooks: ReactHooks = {
    useState: <S>(initial: () => S): [S, unknown] => {
      const i = this.#i++;
      if (!(i in this.#slots)) this.#slots[i] = { value: initial() };
      return [(this.#slots[i] as { value: S }).value, () => {}];
    },
    useEffect: (effect, deps) => {
      const i = this.#i++;
      const slot = (this.#slots[i] ??= { effect: true, deps: undefined, cleanup: undefined }) as EffectSlot & { run?: () => void | (() => void) };
      slot.run = effect;
      if (slot.deps && deps.length === slot.deps.length && deps.every((d, k) => Object.is(d, slot.deps![k]))) return;
      this.#pending.push(() => {
        if (typeof slot.cleanup === "function") slot.cleanup();
        slot.deps = deps;
        slot.cleanup = effect();
      });
    },
    useSyncExternalStore: <S>(subscribe: (fn: () => void) => () => void, getSnapshot: () => S): S => {
      const i = this.#i++;
      const value = getSnapshot();
      if (!(i in this.#slots)) {
        this.#slots[i] = { store: true };
        this.#pending.push(() =>
          this.#subscriptions.push(
            subscribe(() => {
              if (!this.#mounted) return;
              this.#renderOnce();
              this.#commit();
            }),
          ),
        );
      }
      return value;
    },
  };
}

function isEffect(slot: unknown): slot is EffectSlot & { run?: () => void | (() => void) } {
  return typeof slot === "object" && slot !== null && "effect" in slot;
}
