/**
 * Playback processor `bargein-playback`: renders one ring of mono float32
 * samples at the context's rate, with flush, pause/resume and a generation
 * fence.
 *
 * Transport, decided once from processorOptions (a PlaybackFeed, see
 * playback-feed.ts): with `shared`, the ring and the control block are
 * SharedArrayBuffers written by the Player (and by any thread it handed them
 * to); without, PCM and commands arrive as messages and the feed owns a
 * plain-memory ring with the same control layout. Below the feed, nothing
 * depends on which one it is.
 *
 * Every quantum, in this order: apply a flush request, then a generation
 * fence, then the pause, then render, then the duck.
 * - flush: the samples at the read position are rendered under a fade-out
 *   (≤ fadeSamples ≤ 128, so silence comes within this quantum) and the ring is
 *   emptied; the pause is cleared (nothing is left to resume).
 * - fence: samples written before the newest generation's start are dropped
 *   unread, so an old generation's audio is never rendered.
 * - pause: the next fadeSamples are rendered under a fade-out but NOT
 *   consumed; on resume the same samples are rendered again under a fade-in and
 *   consumed. So no sample is lost: the faded-out ones are replayed.
 * - duck: while the DUCKED slot names the generation rendered, what is
 *   rendered is played DUCK_DB softer; the gain moves to it and back over
 *   fadeSamples. Nothing is held, so nothing is replayed: a duck is what the
 *   onset cue does for a sound that may not be speech (src/vad/onset-cue.ts).
 *
 * Who writes the pause: the Player (the session), any thread holding a
 * control port or the shared block (the VAD worker), and this processor's
 * flush. Their channels have no order between them, so every pause and resume
 * carries a token, the generation it is for, and the PAUSED slot is written
 * only by the rules of src/audio/pause-token.ts, the same for a port command
 * and a shared write: the generation rendered is paused only while the slot
 * names it. A pause older than the fence holds nothing (a new generation
 * starts unpaused), a resume lifts only its own token, and a stale command of
 * either kind changes nothing.
 *
 * Allocation: `process()` allocates nothing on the steady path. It posts a
 * message only on a transition (generation started, underrun, ended, flushed,
 * space available) and, on the MessagePort path, a status every 8 quanta
 * while playing, since there is no shared memory for the position.
 */
import { clearPauses, pauseHolds, requestPause, requestResume } from "../src/audio/pause-token.js";
import { duckPlayback, unduckPlayback } from "../src/audio/playback-control.js";
import type { RingBuffer } from "../src/audio/ring-buffer.js";
import {
  PlaybackSlot as S,
  PlaybackStateCode,
  type MainToPlaybackMessage,
  type PlaybackCommand,
  type PlaybackProcessorOptions,
  type PlaybackState,
  type PlaybackToMainMessage,
} from "../src/protocol/audio-messages.js";
import type { PlaybackFeed } from "./playback-feed.js";
import { PortPlaybackFeed } from "./port-playback-feed.js";
import { echoTap, releaseEchoTap, writeTap, type EchoTap } from "./echo-tap.js";
import { ProcessClock, profileReport } from "./process-clock.js";
import { LevelWriter } from "../src/audio/level-cell.js";
import { SharedPlaybackFeed } from "./shared-playback-feed.js";
import { requireProcessorOptions } from "./processor-options.js";

const STATUS_EVERY_QUANTA = 8;
type Phase = "idle" | "prebuffering" | "playing";

class PlaybackProcessor extends AudioWorkletProcessor {
  readonly #feed: PlaybackFeed;
  readonly #ring: RingBuffer;
  readonly #control: Int32Array;
  readonly #prebuffer: number;
  readonly #fade: number;
  readonly #scratch = new Float32Array(128);
  readonly #clock: ProcessClock | undefined;

  #phase: Phase = "idle";
  #paused = false;
  #fadeInNext = false;
  #generation: number;
  #rendered = 0;
  #started = false;
  #waited = 0;
  #lastFlushSeq = 0;
  #lastCutSeq = 0;
  #quanta = 0;
  /** The gain applied now (1: not ducked), moving to the duck's by 1/fade a sample. */
  #gain = 1;
  #duckDb = 0;
  #duckGain = 1;

  /** Control channels handed in by attach-control, closed with the node. */
  readonly #controlPorts: MessagePort[] = [];
  /** The echo tap this processor publishes to (processorOptions.echoTap), if any. */
  readonly #tap: EchoTap | undefined;
  readonly #tapName: string | undefined;
  /** Set by "close": process() returns false and the processor can be collected. */
  #closed = false;
  /** What is heard, for the main thread's getLevels() (processorOptions.levelCell). */
  readonly #level: LevelWriter | undefined;

  constructor(options: { processorOptions?: unknown }) {
    super();
    const opts = requireProcessorOptions<PlaybackProcessorOptions>("bargein-playback", options, ["capacity", "prebufferSamples", "fadeSamples"], "bargein's Player");
    this.#feed = opts.shared ? new SharedPlaybackFeed(opts.shared) : new PortPlaybackFeed(opts.capacity);
    this.#ring = this.#feed.ring;
    this.#control = this.#feed.control;
    this.#prebuffer = opts.prebufferSamples;
    this.#fade = Math.max(1, Math.min(128, opts.fadeSamples));
    this.#generation = Atomics.load(this.#control, S.FENCE_GEN);
    this.#lastFlushSeq = Atomics.load(this.#control, S.FLUSH_SEQ);
    this.#lastCutSeq = Atomics.load(this.#control, S.CUT_SEQ);
    this.#clock = opts.profile ? new ProcessClock(opts.profileClock) : undefined;
    this.#tapName = opts.echoTap;
    this.#level = opts.levelCell ? new LevelWriter(opts.levelCell, sampleRate) : undefined;
    this.#tap = opts.echoTap ? echoTap(opts.echoTap) : undefined;
    this.port.onmessage = (event: MessageEvent<MainToPlaybackMessage>) => this.#onMessage(event.data);
  }

  #onMessage(message: MainToPlaybackMessage): void {
    switch (message.kind) {
      case "pause":
      case "resume":
      case "duck":
      case "unduck":
      case "flush":
        this.#command(message);
        break;
      case "attach-control":
        message.port.onmessage = (event: MessageEvent<PlaybackCommand>) => this.#command(event.data);
        this.#controlPorts.push(message.port);
        break;
      case "close":
        this.#closed = true;
        if (this.#tapName) releaseEchoTap(this.#tapName);
        for (const port of this.#controlPorts.splice(0)) port.close();
        this.port.close();
        break;
      case "fence":
      case "pcm":
      case "end":
        this.#feed.receive(message);
        break;
      case "profile":
        this.#post(profileReport(this.#clock));
        break;
    }
  }

  /**
   * Commands from the node's port or an attached control port (any thread):
   * the same writes, by the same token rules, as a thread holding the shared
   * block makes. A pause or resume without a valid token is dropped there.
   */
  #command(command: PlaybackCommand): void {
    switch (command?.kind) {
      case "pause":
        requestPause(this.#control, command.token);
        break;
      case "resume":
        requestResume(this.#control, command.token);
        break;
      case "duck":
        duckPlayback(this.#control, command.token, command.db);
        break;
      case "unduck":
        unduckPlayback(this.#control, command.token);
        break;
      case "flush":
        this.#feed.requestFlush();
        break;
    }
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    if (this.#closed) return false;
    const started = this.#clock?.start() ?? 0;
    const out = outputs[0][0];
    const quantum = out.length;
    out.fill(0);
    this.#feed.fill();

    let written = 0;
    const flushSeq = Atomics.load(this.#control, S.FLUSH_SEQ);
    const cutSeq = Atomics.load(this.#control, S.CUT_SEQ);
    if (flushSeq !== this.#lastFlushSeq || cutSeq !== this.#lastCutSeq) {
      // A whole flush wins over a cut: it drops at least as much.
      const upTo = flushSeq !== this.#lastFlushSeq ? this.#ring.writeCounter : Atomics.load(this.#control, S.CUT_AT) >>> 0;
      this.#lastFlushSeq = flushSeq;
      this.#lastCutSeq = cutSeq;
      written = this.#flush(out, upTo);
    }
    this.#applyFence();

    // After the fence: a pause holds only the generation now being rendered.
    const wantPaused = pauseHolds(this.#control, this.#generation);
    if (written === 0 && wantPaused !== this.#paused) {
      this.#paused = wantPaused;
      if (this.#phase === "playing") {
        if (wantPaused) {
          // Fade out over samples we do not consume: they play again after resume.
          const n = this.#ring.peek(this.#scratch, 0, this.#fade);
          for (let i = 0; i < n; i++) out[i] = this.#scratch[i] * (1 - (i + 1) / this.#fade);
          written = quantum;
        } else {
          this.#fadeInNext = true;
        }
      }
    }

    if (written === 0 && !this.#paused) this.#render(out, quantum);
    this.#applyDuck(out);
    // What is heard, after pause, fade and flush: the capture's echo guard cancels exactly this.
    if (this.#tap) writeTap(this.#tap, currentFrame, out);
    this.#level?.write(out);
    this.#publish();
    if (Atomics.load(this.#control, S.WANT_SPACE) === 1 && this.#ring.availableWrite() >= this.#ring.capacity / 2) {
      Atomics.store(this.#control, S.WANT_SPACE, 0);
      this.#post({ kind: "space" });
    }
    this.#quanta++;
    if (this.#feed.postsStatus && this.#phase === "playing" && this.#quanta % STATUS_EVERY_QUANTA === 0) this.#postStatus();
    if (this.#clock) this.#clock.stop(started);
    return true;
  }

  /**
   * Renders the fade-out of what is audible, then drops everything written
   * before the ring's write counter was `upTo`. Returns samples written.
   */
  #flush(out: Float32Array, upTo: number): number {
    let n = 0;
    if (this.#phase === "playing" && !this.#paused) {
      const ahead = (upTo - this.#ring.readCounter) >>> 0; // samples before the cut
      const before = ahead > this.#ring.availableRead() ? 0 : Math.min(this.#fade, ahead);
      n = this.#ring.peek(this.#scratch, 0, before);
      for (let i = 0; i < n; i++) out[i] = this.#scratch[i] * (1 - (i + 1) / this.#fade);
    }
    const dropped = this.#ring.skipTo(upTo) + this.#feed.takeDropped();
    // Clears the pause of every generation fenced so far (the fence may be applied
    // later in this quantum); a pause for one not yet fenced stands.
    clearPauses(this.#control, Atomics.load(this.#control, S.FENCE_GEN));
    clearPauses(this.#control, Atomics.load(this.#control, S.FENCE_GEN), S.DUCKED);
    this.#paused = false;
    this.#fadeInNext = false;
    this.#phase = "idle";
    this.#postStatus(); // first, so the state is current when `flushed` is handled
    this.#post({ kind: "flushed", generation: this.#generation, frame: currentFrame, dropped });
    return Math.max(n, 1);
  }

  /** The duck's gain over `out`, ramped (no allocation); a duck holds only the generation rendered. */
  #applyDuck(out: Float32Array): void {
    let target = 1;
    if (pauseHolds(this.#control, this.#generation, S.DUCKED)) {
      const db = Atomics.load(this.#control, S.DUCK_DB);
      if (db !== this.#duckDb) {
        this.#duckDb = db;
        this.#duckGain = Math.pow(10, -db / 20);
      }
      target = this.#duckGain;
    }
    if (target === 1 && this.#gain === 1) return;
    const step = 1 / this.#fade;
    for (let i = 0; i < out.length; i++) {
      if (this.#gain !== target) this.#gain = this.#gain < target ? Math.min(target, this.#gain + step) : Math.max(target, this.#gain - step);
      out[i] *= this.#gain;
    }
  }

  #applyFence(): void {
    const fence = Atomics.load(this.#control, S.FENCE_GEN);
    if (fence === this.#generation) return;
    this.#ring.skipTo(Atomics.load(this.#control, S.FENCE_START) >>> 0);
    this.#generation = fence;
    this.#rendered = 0;
    this.#started = false;
    this.#fadeInNext = false;
    this.#phase = "idle";
  }

  #render(out: Float32Array, quantum: number): void {
    const available = this.#ring.availableRead();
    const complete = Atomics.load(this.#control, S.END_GEN) === this.#generation;
    if (this.#phase === "idle") {
      if (available === 0) return;
      this.#phase = "prebuffering";
      this.#waited = 0;
    }
    if (this.#phase === "prebuffering") {
      // Start once the prebuffer is full, once the first samples have waited
      // as long as the prebuffer lasts, or once the generation is complete.
      if (available < this.#prebuffer && this.#waited < this.#prebuffer && !complete) {
        this.#waited += quantum;
        return;
      }
      this.#phase = "playing";
    }
    const n = this.#ring.pop(out, 0, quantum);
    if (this.#fadeInNext) {
      this.#fadeInNext = false;
      const ramp = Math.min(n, this.#fade);
      for (let i = 0; i < ramp; i++) out[i] *= (i + 1) / this.#fade;
    }
    if (n > 0 && !this.#started) {
      this.#started = true;
      this.#post({ kind: "started", generation: this.#generation, contextTime: currentTime, frame: currentFrame });
    }
    this.#rendered = (this.#rendered + n) >>> 0;
    if (n < quantum) {
      // Status first, so the main thread's position is current when it handles the event.
      if (complete || Atomics.load(this.#control, S.END_GEN) === this.#generation) {
        this.#phase = "idle";
        this.#postStatus();
        this.#post({ kind: "ended", generation: this.#generation, samples: this.#rendered, frame: currentFrame + n });
      } else {
        this.#phase = "prebuffering";
        this.#waited = 0;
        const underruns = Atomics.add(this.#control, S.UNDERRUNS, 1) + 1;
        this.#postStatus();
        this.#post({ kind: "underrun", generation: this.#generation, underruns, frame: currentFrame + n });
      }
    }
  }

  #publish(): void {
    const c = this.#control;
    Atomics.store(c, S.GEN, this.#generation);
    Atomics.store(c, S.RENDERED, this.#rendered | 0);
    Atomics.store(c, S.STATE, PlaybackStateCode[this.#state()]);
  }

  #state(): PlaybackState {
    if (this.#paused && this.#phase === "playing") return "paused";
    return this.#phase;
  }

  /** Publishes the shared counters, then posts the status (MessagePort path's position). */
  #postStatus(): void {
    this.#publish();
    const buffered = this.#ring.availableRead() + this.#feed.waiting();
    this.#post({
      kind: "status",
      generation: this.#generation,
      rendered: this.#rendered,
      underruns: Atomics.load(this.#control, S.UNDERRUNS),
      state: this.#state(),
      buffered,
    });
  }

  #post(message: PlaybackToMainMessage): void {
    this.port.postMessage(message);
  }
}

registerProcessor("bargein-playback", PlaybackProcessor);
