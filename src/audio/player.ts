/**
 * Player: the main-thread side of playback. It converts and resamples PCM to
 * the context's rate, tags it with a generation, and feeds the
 * `bargein-playback` worklet, through a shared ring when the page is
 * crossOriginIsolated and through the node's MessagePort otherwise (decided
 * once, in the constructor).
 *
 * Generations: `write` with a newer generation fences the older ones (their
 * audio still in the ring is dropped unread); a write with an older one is
 * dropped here and counted in `droppedStaleSamples`.
 *
 * Other threads: `createControlPort()` gives a port that accepts
 * `{kind:"pause"|"resume"|"flush"}` from any thread (the VAD worker pauses on
 * speech start without the main thread); when crossOriginIsolated,
 * `controlBuffer` is the shared control block the worklet polls every quantum
 * (see PlaybackSlot and playback-control.ts), the lowest-latency path.
 */
import { ConfigError } from "../errors.js";
import {
  PLAYBACK_CONTROL_SLOTS,
  PlaybackSlot as S,
  PlaybackStateCode,
  type MainToPlaybackMessage,
  type PlaybackProcessorOptions,
  type PlaybackState,
  type PlaybackToMainMessage,
} from "../protocol/audio-messages.js";
import { Emitter } from "../util/emitter.js";
import { Resampler } from "./resampler.js";
import { RingBuffer } from "./ring-buffer.js";
import { assetUrl, ensureRunning, loadWorklet } from "./worklet-loader.js";

export interface PlayerOptions {
  /** The shared AudioContext, created by the caller at the device's default rate. */
  context: AudioContext;
  /** URL folder holding dist/'s playback-worklet.js. */
  assetsPath: string;
  /** Where the player's node connects (default: `context.destination`). */
  destination?: AudioNode;
  /** Audio held before a generation starts, in ms (default 40). */
  prebufferMs?: number;
  /** Pause/resume/flush ramp, in ms (default and maximum 5; at most 128 samples). */
  fadeMs?: number;
  /** Ring size, in seconds of audio (default 10). More waits on the main thread. */
  capacitySeconds?: number;
  /** @internal Measure the worklet's process() time (benchmarks). */
  profile?: boolean;
  /** @internal A shared clock for worklets without `performance` (see worklets/process-clock.ts). */
  profileClock?: SharedArrayBuffer;
}

export interface PlayerWriteOptions {
  /** The rate of `pcm` (any; resampled to the context's rate). */
  sampleRate: number;
  /** The generation this audio belongs to. */
  generation: number;
}

export interface PlayerPosition {
  generation: number;
  /** Samples of `generation` rendered by the worklet, at the context's rate. */
  samples: number;
  seconds: number;
}

export interface PlayerEvents extends Record<string, unknown> {
  /** The first audible sample of `generation` is at `contextTime`. */
  started: { generation: number; contextTime: number };
  underrun: { generation: number; underruns: number };
  /** `generation` was ended with `end()` and has fully played. */
  ended: { generation: number; samples: number };
  /** A flush was applied by the worklet at context frame `frame`. */
  flushed: { generation: number; frame: number; dropped: number };
}

/** @internal process() durations reported by a worklet built with `profile`. */
export interface ProcessProfile {
  micros: Float32Array;
  meanMicrosByDate: number;
  clock: string;
}

const DEFAULT_PREBUFFER_MS = 40;
const MAX_FADE_MS = 5;

export class Player {
  readonly context: AudioContext;
  readonly #emitter = new Emitter<PlayerEvents>();
  readonly #url: string;
  readonly #destination: AudioNode;
  readonly #options: PlaybackProcessorOptions;
  /** Present when crossOriginIsolated: the producer end of the shared ring. */
  readonly #ring: RingBuffer | undefined;
  readonly #control: Int32Array | undefined;
  #node: AudioWorkletNode | undefined;
  #generation = 0;
  #resampler: Resampler | undefined;
  /** Shared path: samples that did not fit in the ring yet, oldest first. */
  #pending: Float32Array[] = [];
  #endRequested = -1;
  #status: { generation: number; rendered: number; underruns: number; state: PlaybackState } = {
    generation: 0,
    rendered: 0,
    underruns: 0,
    state: "idle",
  };
  /** Samples dropped because they were written with a generation older than the current one. */
  droppedStaleSamples = 0;

  constructor(options: PlayerOptions) {
    if (!options?.context) throw new ConfigError("Player: `context` (an AudioContext) is required");
    if (typeof options.assetsPath !== "string") {
      throw new ConfigError("Player: `assetsPath` (the URL folder holding playback-worklet.js) is required");
    }
    this.context = options.context;
    this.#url = assetUrl(options.assetsPath, "playback-worklet.js");
    this.#destination = options.destination ?? options.context.destination;
    const rate = this.context.sampleRate;
    const fadeMs = Math.min(MAX_FADE_MS, options.fadeMs ?? MAX_FADE_MS);
    const capacity = Math.ceil((options.capacitySeconds ?? 10) * rate);
    this.#options = {
      capacity,
      prebufferSamples: Math.round(((options.prebufferMs ?? DEFAULT_PREBUFFER_MS) / 1000) * rate),
      fadeSamples: Math.max(1, Math.min(128, Math.round((fadeMs / 1000) * rate))),
      profile: options.profile,
      profileClock: options.profileClock,
    };
    if (globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function") {
      this.#ring = RingBuffer.create(capacity, true);
      const control = new SharedArrayBuffer(PLAYBACK_CONTROL_SLOTS * Int32Array.BYTES_PER_ELEMENT);
      this.#control = new Int32Array(control);
      this.#control[S.END_GEN] = -1;
      this.#options.shared = { ring: this.#ring.buffer as SharedArrayBuffer, control };
    }
  }

  /** "shared" (SharedArrayBuffer ring) or "port" (MessagePort), fixed at construction. */
  get transport(): "shared" | "port" {
    return this.#ring ? "shared" : "port";
  }

  /**
   * The shared control block (Int32 slots, see PlaybackSlot), or undefined on
   * the MessagePort path. Another thread may set PAUSED and bump FLUSH_SEQ.
   */
  get controlBuffer(): SharedArrayBuffer | undefined {
    return this.#options.shared?.control;
  }

  /** The worklet node (for tests that record its output). */
  get node(): AudioWorkletNode | undefined {
    return this.#node;
  }

  /** The context's output latency plus its base latency, in seconds. */
  get outputLatency(): number {
    return (this.context.outputLatency ?? 0) + (this.context.baseLatency ?? 0);
  }

  get generation(): number {
    return this.#generation;
  }

  on<K extends keyof PlayerEvents & string>(name: K, fn: (payload: PlayerEvents[K]) => void): () => void {
    return this.#emitter.on(name, fn);
  }

  once<K extends keyof PlayerEvents & string>(name: K, signal?: AbortSignal): Promise<PlayerEvents[K]> {
    return this.#emitter.once(name, signal);
  }

  /**
   * Loads the worklet, starts the context and connects the node. Rejects with
   * AssetLoadError (naming the URL) or AudioContextError.
   */
  async start(): Promise<void> {
    if (this.#node) return;
    await ensureRunning(this.context);
    await loadWorklet(this.context, this.#url);
    const node = new AudioWorkletNode(this.context, "bargein-playback", {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: this.#options,
    });
    node.port.onmessage = (event: MessageEvent<PlaybackToMainMessage>) => this.#onMessage(event.data);
    node.connect(this.#destination);
    this.#node = node;
  }

  /**
   * Queues `pcm` (s16 or f32, any rate) for `generation`. Returns the number
   * of context-rate samples accepted (0 when the generation is stale).
   */
  write(pcm: Int16Array | Float32Array, { sampleRate, generation }: PlayerWriteOptions): number {
    const node = this.#requireNode("write");
    if (generation < this.#generation) {
      this.droppedStaleSamples += pcm.length;
      return 0;
    }
    if (generation > this.#generation) this.fence(generation);
    let samples = pcm instanceof Int16Array ? int16ToFloat(pcm) : pcm;
    if (sampleRate !== this.context.sampleRate) {
      if (this.#resampler?.inputRate !== sampleRate) this.#resampler = new Resampler(sampleRate, this.context.sampleRate);
      samples = this.#resampler.resampleAll(samples);
    } else if (samples === pcm) {
      samples = samples.slice(); // never detach or alias the caller's buffer
    }
    const accepted = samples.length; // read before #send transfers (detaches) the buffer
    this.#send(node, samples as Float32Array);
    return accepted;
  }

  /**
   * Makes `generation` the newest: audio of older generations still queued or
   * in the ring is dropped unread, and later writes of them are refused.
   */
  fence(generation: number): void {
    const node = this.#requireNode("fence");
    if (generation <= this.#generation) return;
    this.#generation = generation;
    this.#resampler = undefined;
    this.#pending = [];
    this.#endRequested = -1;
    if (this.#ring && this.#control) {
      Atomics.store(this.#control, S.FENCE_START, this.#ring.writeCounter | 0);
      Atomics.store(this.#control, S.FENCE_GEN, generation);
    } else {
      this.#post(node, { kind: "fence", generation });
    }
  }

  /** Says that `generation` has no more audio: its end is `ended`, not an underrun. */
  end(generation = this.#generation): void {
    const node = this.#requireNode("end");
    if (generation !== this.#generation) return;
    if (this.#resampler) {
      // Push the filter's tail out: the last input samples are still in its history.
      const tail = this.#resampler.resampleAll(new Float32Array(this.#resampler.delayInputSamples + 1));
      this.#send(node, tail);
      this.#resampler = undefined;
    }
    if (this.#ring && this.#control) {
      this.#endRequested = generation;
      this.#drain();
    } else {
      this.#post(node, { kind: "end", generation });
    }
  }

  /**
   * Drops everything written so far, within one render quantum (under a
   * ≤ 128-sample fade), and clears a pause. Audio written after this call plays.
   */
  flush(): void {
    const node = this.#requireNode("flush");
    this.#pending = [];
    if (this.#ring && this.#control) {
      // Cut at what is written now, so audio written right after the flush survives it.
      Atomics.store(this.#control, S.CUT_AT, this.#ring.writeCounter | 0);
      Atomics.add(this.#control, S.CUT_SEQ, 1);
    } else {
      this.#post(node, { kind: "flush" });
    }
  }

  /** Fades out within 5 ms; the faded samples are replayed on `resume()`. */
  pause(): void {
    const node = this.#requireNode("pause");
    if (this.#control) Atomics.store(this.#control, S.PAUSED, 1);
    else this.#post(node, { kind: "pause" });
  }

  resume(): void {
    const node = this.#requireNode("resume");
    if (this.#control) Atomics.store(this.#control, S.PAUSED, 0);
    else this.#post(node, { kind: "resume" });
  }

  /**
   * Samples of the current generation the worklet has rendered (not counting
   * output latency: subtract `outputLatency` for what was heard). Exact and
   * current on the shared path; on the MessagePort path, as of the worklet's
   * last status (sent every 8 quanta while playing and on each transition).
   */
  position(): PlayerPosition {
    let generation: number;
    let samples: number;
    if (this.#control) {
      let before: number;
      do {
        before = Atomics.load(this.#control, S.GEN);
        samples = Atomics.load(this.#control, S.RENDERED) >>> 0;
        generation = Atomics.load(this.#control, S.GEN);
      } while (generation !== before);
    } else {
      ({ generation, rendered: samples } = this.#status);
    }
    if (generation !== this.#generation) samples = 0; // the worklet has not reached the fence yet
    return { generation: this.#generation, samples, seconds: samples / this.context.sampleRate };
  }

  /** The worklet's state and underrun count, as last known. */
  get state(): PlaybackState {
    if (this.#control) {
      const code = Atomics.load(this.#control, S.STATE);
      return (Object.keys(PlaybackStateCode) as PlaybackState[]).find((k) => PlaybackStateCode[k] === code) ?? "idle";
    }
    return this.#status.state;
  }

  get underruns(): number {
    return this.#control ? Atomics.load(this.#control, S.UNDERRUNS) : this.#status.underruns;
  }

  /**
   * A port that accepts PlaybackCommand messages (`{kind:"pause"}`,
   * `{kind:"resume"}`, `{kind:"flush"}`) from any thread it is transferred to.
   * The worklet applies each at its next render quantum.
   */
  createControlPort(): MessagePort {
    const node = this.#requireNode("createControlPort");
    const channel = new MessageChannel();
    node.port.postMessage({ kind: "attach-control", port: channel.port2 } satisfies MainToPlaybackMessage, [
      channel.port2,
    ]);
    return channel.port1;
  }

  /** @internal Asks the worklet for its process() durations (µs); needs `profile: true`. */
  async profile(): Promise<ProcessProfile> {
    const node = this.#requireNode("profile");
    const reply = new Promise<ProcessProfile>((resolve) => {
      this.#profileReply = resolve;
    });
    this.#post(node, { kind: "profile" });
    return reply;
  }
  #profileReply: ((p: ProcessProfile) => void) | undefined;

  /** Disconnects the node; the player cannot be used again. */
  async close(): Promise<void> {
    const node = this.#node;
    if (!node) return;
    this.#node = undefined;
    this.#pending = [];
    node.port.onmessage = null;
    // Stops the processor, which would otherwise run until the context closes.
    this.#post(node, { kind: "close" });
    node.port.close();
    node.disconnect();
  }

  #send(node: AudioWorkletNode, samples: Float32Array): void {
    if (samples.length === 0) return;
    if (this.#ring) {
      this.#pending.push(samples);
      this.#drain();
    } else {
      this.#post(node, { kind: "pcm", generation: this.#generation, samples }, [samples.buffer]);
    }
  }

  /** Shared path: moves pending samples into the ring; asks for a `space` message if some remain. */
  #drain(): void {
    const ring = this.#ring!;
    const control = this.#control!;
    while (this.#pending.length > 0) {
      const chunk = this.#pending[0];
      const n = ring.push(chunk);
      if (n < chunk.length) {
        this.#pending[0] = chunk.subarray(n);
        Atomics.store(control, S.WANT_SPACE, 1);
        return;
      }
      this.#pending.shift();
    }
    if (this.#endRequested === this.#generation) {
      Atomics.store(control, S.END_GEN, this.#generation);
      this.#endRequested = -1;
    }
  }

  #onMessage(message: PlaybackToMainMessage): void {
    switch (message.kind) {
      case "started":
        if (message.generation === this.#generation) {
          this.#emitter.emit("started", { generation: message.generation, contextTime: message.contextTime });
        }
        break;
      case "underrun":
        this.#emitter.emit("underrun", { generation: message.generation, underruns: message.underruns });
        break;
      case "ended":
        this.#emitter.emit("ended", { generation: message.generation, samples: message.samples });
        break;
      case "flushed":
        this.#emitter.emit("flushed", { generation: message.generation, frame: message.frame, dropped: message.dropped });
        break;
      case "status":
        this.#status = message;
        break;
      case "space":
        if (this.#ring) this.#drain();
        break;
      case "profile":
        this.#profileReply?.({ micros: message.micros, meanMicrosByDate: message.meanMicrosByDate, clock: message.clock });
        this.#profileReply = undefined;
        break;
    }
  }

  #post(node: AudioWorkletNode, message: MainToPlaybackMessage, transfer: Transferable[] = []): void {
    node.port.postMessage(message, transfer);
  }

  #requireNode(method: string): AudioWorkletNode {
    if (!this.#node) throw new ConfigError(`Player.${method}(): call and await player.start() first`);
    return this.#node;
  }
}

function int16ToFloat(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i] / 32768;
  return out;
}
