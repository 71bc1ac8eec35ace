/**
 * The time of the scripted audio parts (FakePlayer, FakeUser): the bot's audio
 * plays and the user's speech lasts on this clock, not on the wall clock.
 *
 * Virtual by default: time moves only when the test calls `advance()` (or a
 * fake that plays or speaks does), so a test is deterministic and takes no
 * real time. `run({ speed })` moves it with real time instead, for a page or
 * a demo that wants the fakes to pace themselves. Thread: main.
 */
import { ConfigError } from "../index.js";

export class FakeClock {
  #now = 0;
  readonly #listeners = new Set<(ms: number) => void>();
  /** Sleepers on a running clock, woken when it pauses (their rest of time is then virtual). */
  readonly #onPause = new Set<() => void>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Milliseconds since the clock was made. */
  get now(): number {
    return this.#now;
  }

  /** True while the clock moves with real time (`run()`). */
  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** Moves time on by `ms`; the player renders that much audio before this returns. */
  advance(ms: number): void {
    if (!(ms >= 0) || ms === Infinity) throw new ConfigError(`FakeClock.advance(): ms must be a finite number ≥ 0, not ${ms}`);
    if (ms === 0) return;
    this.#now += ms;
    for (const fn of [...this.#listeners]) fn(ms);
  }

  /** Calls `fn(ms)` each time the clock moves on; returns the function that stops it. */
  onAdvance(fn: (ms: number) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Moves the clock with real time × `speed` (checked every `tickMs`) until
   * `pause()`. The fakes then wait for time instead of making it.
   */
  run({ speed = 1, tickMs = 10 }: { speed?: number; tickMs?: number } = {}): void {
    if (!(speed > 0)) throw new ConfigError(`FakeClock.run(): speed must be a number > 0, not ${speed}`);
    this.pause();
    let last = performance.now();
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.advance((now - last) * speed);
      last = now;
    }, tickMs);
  }

  /** Stops a running clock; time is virtual again. */
  pause(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const fn of [...this.#onPause]) fn();
  }

  /**
   * Lets `ms` of clock time pass: a virtual clock is advanced at once, a
   * running one is waited for. Either way it resolves after a macrotask, so
   * what the session does in between (its STT stream, its timers) has run.
   */
  async sleep(ms: number): Promise<void> {
    if (!this.running) {
      this.advance(ms);
      return new Promise((resolve) => setTimeout(resolve, 0));
    }
    const until = this.#now + ms;
    await new Promise<void>((resolve) => {
      const done = () => {
        off();
        this.#onPause.delete(done);
        resolve();
      };
      const off = this.onAdvance(() => this.#now >= until && done());
      this.#onPause.add(done);
    });
    if (this.#now < until) this.advance(until - this.#now); // paused while waiting: the rest is virtual
    return new Promise((resolve) => setTimeout(resolve, 0));
  }
}
