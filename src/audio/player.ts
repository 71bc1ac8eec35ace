/**
 * Player: the main-thread side of playback. It converts and resamples PCM to
 * the context's rate, tags it with a generation, and feeds the
 * `bargein-playback` worklet, through a shared ring when the page is
 * crossOriginIsolated and through the node's MessagePort otherwise (a
 * PlayerTransport chosen once, in the constructor; see player-transport.ts).
 *
 * Generations: `write` with a newer generation fences the older ones (their
 * audio still in the ring is dropped unread); a write with an older one is
 * dropped here and counted in `droppedStaleSamples`.
 *
 * The pause has several writers: this Player (the session's pause/resume),
 * any thread given `createControlPort()` or `controlBuffer` (the VAD worker
 * pauses on speech start without the main thread), and the worklet's flush,
 * which clears it. They reach the worklet on channels with no order between
 * them, so none is trusted to arrive in time: every pause and resume carries a
 * token, the playback generation it is for, and the worklet applies it by the
 * rules of pause-token.ts. A pause holds only the generation it names (a fence
 * to a newer one starts unpaused), a resume lifts only its own token, and a
 * stale one of either changes nothing. `controlBuffer` is the shared control
 * block the worklet reads every quantum (see PlaybackSlot and
 * playback-control.ts), the lowest-latency path.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import type {
  MainToPlaybackMessage,
  PlaybackProcessorOptions,
  PlaybackState,
  PlaybackToMainMessage,
} from "../protocol/audio-messages.js";
import { EventSource } from "../util/emitter.js";
import type { PlayerEvents, PlayerOptions, PlayerPosition, PlayerWriteOptions, ProcessProfile } from "./player-types.js";
import { makeLevelCell } from "./level-meter.js";
import { isPauseToken } from "./pause-token.js";
import { PortPlayerTransport } from "./player-port-transport.js";
import { SharedPlayerTransport } from "./player-shared-transport.js";
import type { PlayerTransport } from "./player-transport.js";
import { readOutputLatency } from "./output-latency.js";
import { Resampler } from "./resampler.js";
import { ensureRunning, loadWorklet } from "./worklet-loader.js";
import { checkAssetUrls, resolveAssetUrl } from "../assets/asset-urls.js";

export type { PlayerEnded, PlayerEvents, PlayerFlushed, PlayerOptions, PlayerPosition, PlayerStarted, PlayerUnderrun, PlayerWriteOptions, ProcessProfile } from "./player-types.js";

const MAX_FADE_MS = 5;

export class Player extends EventSource<PlayerEvents> {
  readonly context: AudioContext;
  readonly #url: string;
  readonly #destination: AudioNode;
  readonly #options: PlaybackProcessorOptions;
  readonly #transport: PlayerTransport;
  #node: AudioWorkletNode | undefined;
  #generation = 0;
  #resampler: Resampler | undefined;
  readonly #givenLatency: number | undefined;
  #outputLatency = 0;
  /** The latency is given, or the context reported it: it is not read again (output-latency.ts). */
  #latencyKnown = false;
  /** Samples dropped because they were written with a generation older than the current one. */
  droppedStaleSamples = 0;

  constructor(options: PlayerOptions) {
    super();
    if (!options?.context) throw new ConfigError("Player: `context` (an AudioContext) is required");
    checkAssetUrls("Player", options.assets);
    this.context = options.context;
    this.#url = resolveAssetUrl("playbackWorklet", options);
    this.#destination = options.destination ?? options.context.destination;
    const given = options.outputLatency;
    if (given !== undefined && !(Number.isFinite(given) && given >= 0)) {
      throw new ConfigError(`Player: \`outputLatency\` must be a number of seconds ≥ 0 (got ${String(given)})`);
    }
    this.#givenLatency = given;
    this.#outputLatency = given ?? 0;
    this.#latencyKnown = given !== undefined;
    const rate = this.context.sampleRate;
    const fadeMs = Math.min(MAX_FADE_MS, options.fadeMs ?? MAX_FADE_MS);
    const capacity = Math.ceil((options.capacitySeconds ?? DEFAULTS.player.capacitySeconds) * rate);
    // Shared memory when the page can have it, else the port: decided here, once.
    this.#transport =
      globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function" ? new SharedPlayerTransport(capacity) : new PortPlayerTransport();
    this.#options = {
      shared: this.#transport.shared,
      capacity,
      prebufferSamples: Math.round(((options.prebufferMs ?? DEFAULTS.player.prebufferMs) / 1000) * rate),
      fadeSamples: Math.max(1, Math.min(128, Math.round((fadeMs / 1000) * rate))),
      profile: options.profile,
      profileClock: options.profileClock,
      echoTap: options.echoTap,
      levelCell: makeLevelCell(),
    };
  }

  /** The playback worklet's level of what is heard, on a crossOriginIsolated page (level-cell.ts); else undefined. */
  get levelCell(): SharedArrayBuffer | undefined {
    return this.#options.levelCell;
  }

  /** "shared" (SharedArrayBuffer ring) or "port" (MessagePort), fixed at construction. */
  get transport(): "shared" | "port" {
    return this.#transport.kind;
  }

  /**
   * The shared control block (Int32 slots, see PlaybackSlot), or undefined on
   * the MessagePort path. Another thread may pause and resume by token and
   * request a flush there, only through playback-control.ts (pausePlayback,
   * resumePlayback, flushPlayback), never by storing into the slots itself.
   */
  get controlBuffer(): SharedArrayBuffer | undefined {
    return this.#transport.shared?.control;
  }

  /** The worklet node (for tests that record its output). */
  get node(): AudioWorkletNode | undefined {
    return this.#node;
  }

  /**
   * Seconds from rendering to hearing: the app's `outputLatency`, else the
   * context's output latency plus its base latency as read by `start()`, and
   * read once more at the first `started` if the context reported none then
   * (Chromium reports it once audio has rendered). 0 before `start()`.
   * Reading this never touches the context's getters.
   */
  get outputLatency(): number {
    return this.#outputLatency;
  }

  /**
   * Reads the context's latency again (after its output device changed), unless
   * the app gave it. Not in Firefox's risk: call it only where the context has
   * `setSinkId` (output-latency.ts).
   * @internal
   */
  remeasureOutputLatency(): void {
    if (this.#givenLatency === undefined) this.#measureLatency();
  }

  #measureLatency(): void {
    const { seconds, reported } = readOutputLatency(this.context);
    this.#outputLatency = seconds;
    this.#latencyKnown = reported;
  }

  get generation(): number {
    return this.#generation;
  }


  /**
   * Loads the worklet, starts the context and connects the node. Rejects with
   * AssetLoadError (naming the URL) or AudioContextError.
   */
  async start(): Promise<void> {
    if (this.#node) return;
    await ensureRunning(this.context);
    // Before this player's node exists, and never again (output-latency.ts).
    if (this.#givenLatency === undefined) this.#measureLatency();
    await loadWorklet(this.context, this.#url, "playbackWorklet");
    const node = new AudioWorkletNode(this.context, "bargein-playback", {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: this.#options,
    });
    node.port.onmessage = (event: MessageEvent<PlaybackToMainMessage>) => this.#onMessage(event.data);
    node.connect(this.#destination);
    this.#transport.connect(node.port);
    this.#node = node;
  }

  /**
   * Queues `pcm` (s16 or f32, any rate) for `generation`. Returns the number
   * of context-rate samples accepted (0 when the generation is stale).
   */
  write(pcm: Int16Array | Float32Array, { sampleRate, generation }: PlayerWriteOptions): number {
    this.#requireNode("write");
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
    const accepted = samples.length; // read before the transport transfers (detaches) the buffer
    this.#transport.send(samples as Float32Array, generation);
    return accepted;
  }

  /**
   * Makes `generation` the newest: audio of older generations still queued or
   * in the ring is dropped unread, and later writes of them are refused. A
   * pause with an older token no longer holds anything: `generation` starts
   * unpaused unless a pause names it.
   */
  fence(generation: number): void {
    this.#requireNode("fence");
    if (generation <= this.#generation) return;
    this.#generation = generation;
    this.#resampler = undefined;
    this.#transport.fence(generation);
  }

  /** Says that `generation` has no more audio: its end is `ended`, not an underrun. */
  end(generation = this.#generation): void {
    this.#requireNode("end");
    if (generation !== this.#generation) return;
    if (this.#resampler) {
      // Push the filter's tail out: the last input samples are still in its history.
      const tail = this.#resampler.resampleAll(new Float32Array(this.#resampler.delayInputSamples + 1));
      this.#transport.send(tail, generation);
      this.#resampler = undefined;
    }
    this.#transport.end(generation);
  }

  /**
   * Drops everything written so far, within one render quantum (under a
   * ≤ 128-sample fade), and clears a pause. Audio written after this call plays.
   */
  flush(): void {
    this.#requireNode("flush");
    this.#transport.flush();
  }

  /**
   * Fades out within 5 ms and holds generation `token`; the faded samples are
   * replayed on `resume(token)`. The pause holds only while `token` is the
   * generation playing: a pause for an older one does nothing, and fencing a
   * newer one voids it. It does not overwrite a pause with a newer token.
   */
  pause(token: number = this.#generation): void {
    this.#requireNode("pause");
    this.#transport.pause(this.#token("pause", token));
  }

  /** Lifts the pause of `token`, and only that one: a resume for an older generation lifts nothing. */
  resume(token: number = this.#generation): void {
    this.#requireNode("resume");
    this.#transport.resume(this.#token("resume", token));
  }

  /**
   * Samples of the current generation the worklet has rendered (not counting
   * output latency: subtract `outputLatency` for what was heard). Exact and
   * current on the shared path; on the MessagePort path, as of the worklet's
   * last status (sent every 8 quanta while playing and on each transition).
   */
  position(): PlayerPosition {
    const rendered = this.#transport.rendered();
    // Until the worklet reaches the fence, nothing of the current generation has played.
    const samples = rendered.generation === this.#generation ? rendered.samples : 0;
    return { generation: this.#generation, samples, seconds: samples / this.context.sampleRate };
  }

  /** The worklet's state and underrun count, as last known. */
  get state(): PlaybackState {
    return this.#transport.state;
  }

  get underruns(): number {
    return this.#transport.underruns;
  }

  /**
   * A port that accepts PlaybackCommand messages (`{kind:"pause", token}`,
   * `{kind:"resume", token}`, `{kind:"flush"}`) from any thread it is
   * transferred to. The worklet applies each at its next render quantum, by
   * the same token rules as the shared control block.
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
    this.#transport.close();
    node.port.onmessage = null;
    // Stops the processor, which would otherwise run until the context closes.
    this.#post(node, { kind: "close" });
    node.port.close();
    node.disconnect();
  }

  #onMessage(message: PlaybackToMainMessage): void {
    switch (message.kind) {
      case "started":
        // A context that reported no latency before it rendered (Chromium) reports it now; one that
        // reported it (Firefox) is not asked again, and an app's value never is.
        if (!this.#latencyKnown) this.#measureLatency();
        if (message.generation === this.#generation) {
          this.emit("started", { generation: message.generation, contextTime: message.contextTime });
        }
        break;
      case "underrun":
        this.emit("underrun", { generation: message.generation, underruns: message.underruns });
        break;
      case "ended":
        this.emit("ended", { generation: message.generation, samples: message.samples });
        break;
      case "flushed":
        this.emit("flushed", { generation: message.generation, frame: message.frame, dropped: message.dropped });
        break;
      case "status":
      case "space":
        this.#transport.handle(message);
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

  #token(method: string, token: number): number {
    if (!isPauseToken(token)) {
      throw new ConfigError(`Player.${method}(): the token must be a playback generation (an integer ≥ 0); got ${String(token)}`);
    }
    return token;
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
