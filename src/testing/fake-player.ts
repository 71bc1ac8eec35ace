/**
 * FakePlayer: a PlayerPort with no Web Audio. The TTS audio the session writes
 * is queued, and "plays" as a FakeClock moves on: `renderedSeconds()` counts
 * it, `started` fires when a reply's first audio arrives and `ended` once a
 * generation that was ended has all played, as with the real Player.
 *
 * The pause follows the playback worklet's own rules, by running them
 * (audio/pause-token.ts on a control block of this player's): a pause holds
 * only the generation it names, a resume lifts only its own token's pause, a
 * fence to a new generation starts unpaused. A paused player renders nothing.
 *
 * Its pure parts (the pause rules, the slot layout) are the SDK's own; the
 * SDK's classes (errors, Emitter) come from its public entry, so that in the
 * built package dist/testing.js uses dist/bargein.js's, not a copy.
 *
 * What it leaves out: resampling, the ring's capacity, prebuffering and fades
 * (a first sample is "rendered" as soon as it is written). Thread: main.
 */
import { clearPauses, NO_PAUSE, pauseHolds, requestPause, requestResume } from "../audio/pause-token.js";
import { Emitter, type ChannelLevel, type PlayerPort } from "../advanced.js";
import { ConfigError, StateError } from "../index.js";
import { PLAYBACK_CONTROL_SLOTS, PlaybackSlot } from "../protocol/audio-messages.js";
import { FakeClock } from "./fake-clock.js";

export interface FakePlayerOptions {
  /** The clock the audio plays on. Default: a virtual clock of its own (`player.clock`). */
  clock?: FakeClock;
  /** Seconds between rendering a sample and hearing it (`PlayerPort.outputLatency`). Default 0. */
  outputLatency?: number;
}

/** Events of the PlayerPort, plus `changed` for the player's own waiters. */
type FakePlayerEvents = {
  started: { generation: number; at: number; audibleContextTime: number };
  ended: { generation: number };
  contextState: { state: string };
  changed: undefined;
};

const EPSILON_S = 1e-9;

export class FakePlayer implements PlayerPort {
  readonly clock: FakeClock;
  outputLatency: number;
  protected readonly emitter = new Emitter<FakePlayerEvents>();
  readonly #control = new Int32Array(PLAYBACK_CONTROL_SLOTS);
  #generation = 0;
  /** Of the current generation, in seconds: audio written, and the part of it rendered. */
  #writtenS = 0;
  #renderedS = 0;
  #endRequested = false;
  #ended = false;
  /** The current generation's audio arrived while paused: it starts on resume. */
  #startPending = false;
  #startedGeneration = -1;

  /** The output device (`setSinkId`): "" the default. */
  sinkId = "";
  /** As AudioContext.setSinkId. */
  async setSinkId(deviceId: string): Promise<void> {
    this.sinkId = deviceId;
  }
  /** -20 dBFS while audio is playing (buffered, not paused), else -100. */
  level(bins: boolean): ChannelLevel {
    const rmsDb = this.bufferedSeconds > EPSILON_S && !this.paused ? -20 : -100;
    return bins ? { rmsDb, bins: new Uint8Array(128).fill(rmsDb > -100 ? 128 : 0) } : { rmsDb };
  }

  constructor(options: FakePlayerOptions = {}) {
    this.clock = options.clock ?? new FakeClock();
    this.outputLatency = options.outputLatency ?? 0;
    this.#control[PlaybackSlot.PAUSED] = NO_PAUSE;
    this.clock.onAdvance((ms) => this.render(ms / 1000));
  }

  /** The generation being played (the newest fence). */
  get generation(): number {
    return this.#generation;
  }

  /** True while a pause holds the current generation. */
  get paused(): boolean {
    return pauseHolds(this.#control, this.#generation);
  }

  /** Seconds of the current generation written and not yet rendered. */
  get bufferedSeconds(): number {
    return this.#writtenS - this.#renderedS;
  }

  /** Seconds of the current generation written so far. */
  get writtenSeconds(): number {
    return this.#writtenS;
  }

  // ─── PlayerPort ───────────────────────────────────────────────────────────

  write(pcm: Float32Array | Int16Array, { sampleRate, generation }: { sampleRate: number; generation: number }): void {
    if (!(sampleRate > 0)) throw new ConfigError(`FakePlayer.write(): sampleRate must be a number > 0, not ${sampleRate}`);
    if (generation < this.#generation) return; // stale: fenced off, as in the worklet
    if (generation > this.#generation) this.setGeneration(generation);
    const first = this.#writtenS === 0 && pcm.length > 0;
    this.#writtenS += pcm.length / sampleRate;
    if (first) this.#start();
    this.#changed();
  }

  setGeneration(generation: number): void {
    if (generation <= this.#generation) return;
    this.#generation = generation;
    this.#writtenS = this.#renderedS = 0;
    this.#endRequested = this.#ended = this.#startPending = false;
    this.#changed();
  }

  endGeneration(generation: number): void {
    if (generation !== this.#generation) return;
    this.#endRequested = true;
    // The worklet reports the end by message: never inside the caller's call.
    queueMicrotask(() => this.#maybeEnd(generation));
  }

  flush(): void {
    this.#writtenS = this.#renderedS;
    clearPauses(this.#control, this.#generation);
    this.#changed();
  }

  pause(token: number): void {
    requestPause(this.#control, token);
    this.#changed();
  }

  resume(token: number): void {
    if (!requestResume(this.#control, token)) return;
    if (this.#startPending) this.#start();
    this.#changed();
  }

  renderedSeconds(): number {
    return this.#renderedS;
  }

  on<K extends "started" | "ended" | "contextState">(name: K, fn: (e: FakePlayerEvents[K]) => void): () => void {
    return this.emitter.on(name, fn);
  }

  // ─── for the test ─────────────────────────────────────────────────────────

  /** As if the AudioContext left "running" ("suspended", "interrupted", "closed"): the session hears `contextState`. */
  setContextState(state: string): void {
    this.emitter.emit("contextState", { state });
  }

  /**
   * Plays `ms` of the current generation's audio (without `ms`: all of it, to
   * its end), moving the clock on. When the audio written so far runs out, it
   * waits (in real time, up to `timeoutMs` for each change) for the TTS to
   * write more or to end the reply; the clock stands still meanwhile, as if
   * the TTS were instant. Stops early when the generation ends, is fenced off
   * (an interruption) or is paused (the user speaks). Returns the seconds
   * played. On a running clock it only waits for the audio to play.
   */
  async play(ms = Infinity, { timeoutMs = 2000 }: { timeoutMs?: number } = {}): Promise<number> {
    if (!(ms >= 0)) throw new ConfigError(`FakePlayer.play(): ms must be a number ≥ 0, not ${ms}`);
    const generation = this.#generation;
    const from = this.#renderedS;
    const target = from + ms / 1000;
    const current = () => this.#generation === generation && !this.#ended && !this.paused;
    while (current() && this.#renderedS < target - EPSILON_S) {
      const step = Math.min(target - this.#renderedS, this.bufferedSeconds);
      if (step > EPSILON_S && !this.clock.running) this.clock.advance(step * 1000);
      else await this.#nextChange(timeoutMs, `${(this.#renderedS - from).toFixed(3)} s played of ${ms / 1000} s`);
    }
    // Let the session handle what the audio did (an `ended`) before the test looks.
    await new Promise((resolve) => setTimeout(resolve, 0));
    return this.#generation === generation ? this.#renderedS - from : 0;
  }

  /** Renders up to `seconds` of the current generation; the clock calls it as it moves. Returns what it rendered. */
  protected render(seconds: number): number {
    if (this.paused) return 0;
    const rendered = Math.min(seconds, this.bufferedSeconds);
    if (rendered <= 0) return 0;
    this.#renderedS += rendered;
    this.#maybeEnd(this.#generation);
    this.#changed();
    return rendered;
  }

  #start(): void {
    if (this.paused) {
      this.#startPending = true;
      return;
    }
    this.#startPending = false;
    const generation = this.#generation;
    if (this.#startedGeneration === generation) return;
    this.#startedGeneration = generation;
    // As the worklet's report: by message, and only for the generation still current.
    const audibleContextTime = this.clock.now / 1000 + this.outputLatency;
    queueMicrotask(() => {
      if (this.#generation === generation) this.emitter.emit("started", { generation, at: performance.now() + this.outputLatency * 1000, audibleContextTime });
    });
  }

  #maybeEnd(generation: number): void {
    if (generation !== this.#generation || !this.#endRequested || this.#ended || this.bufferedSeconds > EPSILON_S) return;
    this.#ended = true;
    this.emitter.emit("ended", { generation });
    this.#changed();
  }

  #changed(): void {
    this.emitter.emit("changed", undefined);
  }

  /** Resolves on the player's next change (a write, an end, a fence, a pause…); fails after `timeoutMs`. */
  #nextChange(timeoutMs: number, progress: string): Promise<void> {
    const generation = this.#generation;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(
          new StateError(
            `FakePlayer.play(): nothing changed for ${timeoutMs} ms (generation ${generation}, ${progress}); the TTS wrote no more audio and did not end the reply`,
          ),
        );
      }, timeoutMs);
      const off = this.emitter.on("changed", () => {
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }
}
