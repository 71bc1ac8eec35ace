/**
 * Scripted audio parts for VoiceSession tests in Node: a player that follows
 * the playback worklet's pause-token rules and a VAD whose events the test
 * emits. The real worklets and worker are proven in the browser suites.
 */
import { clearPauses, NO_PAUSE, pauseHolds, requestPause, requestResume } from "../../src/audio/pause-token.js";
import { PLAYBACK_CONTROL_SLOTS, PlaybackSlot } from "../../src/protocol/audio-messages.js";
import type { PlayerPort, VadPort } from "../../src/session/ports.js";
import { Emitter } from "../../src/util/emitter.js";

/**
 * A player that follows the playback worklet's rules for the pause token by
 * running them (src/audio/pause-token.ts) on a control block of its own: a
 * pause holds only the generation it names, a resume lifts only the pause of
 * its token, and a new generation starts unpaused.
 */
export class VirtualPlayer implements PlayerPort {
  readonly log: string[] = [];
  readonly events = new Emitter<{ started: { generation: number; at: number }; ended: { generation: number } }>();
  generation = 0;
  written = new Map<number, number>();
  rendered = 0;
  outputLatency = 0.1;
  readonly #control = new Int32Array(PLAYBACK_CONTROL_SLOTS).fill(0);
  constructor() {
    this.#control[PlaybackSlot.PAUSED] = NO_PAUSE;
  }
  get paused(): boolean {
    return pauseHolds(this.#control, this.generation);
  }
  write(pcm: Float32Array | Int16Array, o: { generation: number }) {
    if (o.generation < this.generation) return;
    const first = !this.written.has(o.generation);
    this.written.set(o.generation, (this.written.get(o.generation) ?? 0) + pcm.length);
    if (first) this.#startWhenPlaying(o.generation);
  }
  /** Like the worklet: a paused player plays nothing, so a generation starts once it is resumed. */
  #startWhenPlaying(generation: number) {
    if (this.paused) {
      this.#waitingToStart = generation;
      return;
    }
    queueMicrotask(() => this.events.emit("started", { generation, at: performance.now() }));
  }
  #waitingToStart: number | undefined;
  setGeneration(g: number) {
    this.log.push(`generation=${g}`);
    this.generation = g;
    this.rendered = 0;
  }
  endGeneration(g: number) {
    this.log.push(`end(${g})`);
  }
  flush() {
    this.log.push("flush");
    clearPauses(this.#control, this.generation);
  }
  pause(token: number) {
    this.log.push(`pause(${token})`);
    requestPause(this.#control, token);
  }
  resume(token: number) {
    this.log.push(`resume(${token})`);
    if (!requestResume(this.#control, token)) return;
    const waiting = this.#waitingToStart;
    this.#waitingToStart = undefined;
    if (waiting !== undefined && waiting >= this.generation) this.#startWhenPlaying(waiting);
  }
  renderedSeconds() {
    return this.rendered;
  }
  on(name: any, fn: any) {
    return this.events.on(name, fn);
  }
  /** Pretends the whole generation played out. */
  playOut(g: number) {
    this.events.emit("ended", { generation: g });
  }
}

export class VirtualVad implements VadPort {
  readonly events = new Emitter<any>();
  /** The armed pause token, or null. */
  autoPause: number | null = null;
  setAutoPause(token: number | null) {
    this.autoPause = token;
  }
  setMeter() {}
  on(name: any, fn: any) {
    return this.events.on(name, fn);
  }
  emit(name: string, e: object = {}) {
    this.events.emit(name, { contextTime: 0, pausedPlayback: false, resumedPlayback: false, ...e });
  }
}

