/**
 * Microphone: opens the mic (or takes an injected MediaStream), and runs it
 * through the `bargein-capture` worklet, which makes 16 kHz VAD frames (sent
 * straight to a VAD worker's port) and uplink frames (delivered here as
 * `frame` events). Main thread only; the per-frame VAD path never touches it.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError, MicrophoneError } from "../errors.js";
import type {
  CaptureProcessorOptions,
  CaptureToMainMessage,
  MainToCaptureMessage,
  UplinkFormat,
} from "../protocol/audio-messages.js";
import { VAD_SAMPLE_RATE } from "../protocol/frames.js";
import { EventSource } from "../util/emitter.js";
import type { ProcessProfile } from "./player.js";
import { Resampler } from "./resampler.js";
import { openInput } from "./input-device.js";
import { connectStream } from "./stream-source.js";
import { LevelMeter, LevelReader, SILENT_DB, makeLevelCell, readChannel, type ChannelLevel } from "./level-meter.js";
import { ensureRunning, loadWorklet } from "./worklet-loader.js";
import { checkAssetUrls, resolveAssetUrl, type AssetUrls } from "../assets/asset-urls.js";

/** A MediaStream, or a function that returns one (or a promise of one). */
export type MicrophoneInput = MediaStream | (() => MediaStream | Promise<MediaStream>);

export interface MicrophoneUplinkOptions {
  /** The provider's rate, e.g. 24000 (Kyutai) or 16000. */
  sampleRate: number;
  /** Sample format on the wire (default "s16"). */
  format?: UplinkFormat;
  /** Frame duration in ms (default 20; Kyutai takes 80 = 1920 samples at 24 kHz). */
  frameMs?: number;
}

export interface MicrophoneOptions {
  /** The shared AudioContext, created by the caller at the device's default rate. */
  context: AudioContext;
  /**
   * URL folder holding bargein's dist/ files (capture-worklet.js). Default:
   * beside bargein's bundle, which Vite and webpack 5 copy into the build.
   */
  assetsPath?: string;
  /** Per-file URLs: the microphone reads `assets.captureWorklet`, which overrides `assetsPath`. */
  assets?: AssetUrls;
  /** Known audio instead of the mic (a device the page chose, or a test signal). */
  input?: MicrophoneInput;
  /** Extra getUserMedia audio constraints (deviceId, …); the processing flags stay on. */
  constraints?: MediaTrackConstraints;
  /** The input device to open (as `deviceId: { exact }`); default: the browser's default input. */
  deviceId?: string;
  /** Produce 16 kHz VAD frames (default true). */
  vad?: boolean;
  /** Produce uplink frames (`frame` events) at this rate and format. */
  uplink?: MicrophoneUplinkOptions;
  /** Level meter window when enabled with `setMeter(true)` (default 50 ms). */
  meterIntervalMs?: number;
  /**
   * Cancel the echo of a Player in the same AudioContext from the VAD's
   * signal. Frames the echo alone explains are marked, so they never confirm
   * a barge-in. Default: off.
   */
  echoGuard?: {
    /** The name given to that Player's `echoTap`. */
    tap: string;
    /** The echo tail covered, in ms (as the session's `echoGuard.tailMs`, default 256). */
    tailMs?: number;
    /** The uplink gets the cleaned 16 kHz signal, resampled to its rate, not the raw mic. */
    cleanUplink?: boolean;
  };
  /** @internal Measure the worklet's process() time (benchmarks). */
  profile?: boolean;
  /** @internal A shared clock for worklets without `performance` (see worklets/process-clock.ts). */
  profileClock?: SharedArrayBuffer;
}

export interface MicrophoneFrame {
  samples: Int16Array | Float32Array;
  /** Index of the first sample in the uplink-rate stream since start. */
  sampleIndex: number;
  contextTime: number;
}

/** The input's RMS level over the meter window (`setMeter(true)`). */
export interface MicrophoneLevel {
  rms: number;
  contextTime: number;
}

/** The capture's sample 0 is context frame `frame`. */
export interface MicrophoneStarted {
  frame: number;
  contextTime: number;
  sampleRate: number;
}

/**
 * The browser skipped the capture worklet for `frames` context frames (a
 * render-thread hiccup): that audio is lost. It was counted as silence, so
 * sample indices after it still map to the right context time.
 */
export interface MicrophoneGap {
  frames: number;
  contextTime: number;
}

/** About once a second with `echoGuard`: its echo return loss enhancement (dB), the echo delay it found (ms), whether it has converged. */
export interface MicrophoneEcho {
  erleDb: number;
  delayMs: number;
  converged: boolean;
  referenceActive: boolean;
  contextTime: number;
}

/** After setDevice() `id`: ms of the input lost (silent) across the swap; `capped` when it stayed silent for a second. */
export interface MicrophoneSwapGap {
  id: number;
  ms: number;
  capped: boolean;
}

export interface MicrophoneEvents extends Record<string, unknown> {
  frame: MicrophoneFrame;
  level: MicrophoneLevel;
  started: MicrophoneStarted;
  /** The input track ended (device unplugged, permission revoked). No payload. */
  ended: undefined;
  gap: MicrophoneGap;
  echo: MicrophoneEcho;
  swapGap: MicrophoneSwapGap;
}

export class Microphone extends EventSource<MicrophoneEvents> {
  readonly context: AudioContext;
  readonly #options: MicrophoneOptions;
  readonly #url: string;
  #stream: MediaStream | undefined;
  #ownsStream = false;
  #source: MediaStreamAudioSourceNode | undefined;
  #node: AudioWorkletNode | undefined;
  #started: MicrophoneEvents["started"] | undefined;

  constructor(options: MicrophoneOptions) {
    super();
    if (!options?.context) throw new ConfigError("Microphone: `context` (an AudioContext) is required");
    checkAssetUrls("Microphone", options.assets);
    this.context = options.context;
    this.#options = options;
    this.#url = resolveAssetUrl("captureWorklet", options);
    this.#deviceId = options.deviceId;
  }


  /** The device asked for (the `deviceId` option, then setDevice()); undefined: the default. */
  #deviceId: string | undefined;
  #swaps = 0;
  #levels: LevelMeter | undefined;
  /** The capture worklet's level of the raw input, on a crossOriginIsolated page (level-cell.ts). */
  readonly #levelCell = makeLevelCell();
  readonly #levelReader = this.#levelCell && new LevelReader(this.#levelCell);

  /** The stream being captured (after start). */
  get stream(): MediaStream | undefined {
    return this.#stream;
  }

  /** The node that feeds the capture worklet (tests tap it to record the raw input). */
  get source(): AudioNode | undefined {
    return this.#source;
  }

  /** Context frame of the capture's sample 0, once the worklet has run. */
  get startedAt(): MicrophoneEvents["started"] | undefined {
    return this.#started;
  }

  /** Delay of the 16 kHz VAD stream behind the input, in seconds (the worklet's resampler's). */
  get vadDelaySeconds(): number {
    return (this.#vadDelay ??= new Resampler(this.context.sampleRate, VAD_SAMPLE_RATE).delaySeconds);
  }
  #vadDelay: number | undefined;

  /** Delay of the uplink stream behind the input, in seconds (the worklet's resampler's). */
  get uplinkDelaySeconds(): number | undefined {
    const uplink = this.#options.uplink;
    if (!uplink) return undefined;
    return (this.#uplinkDelay ??= new Resampler(this.context.sampleRate, uplink.sampleRate).delaySeconds);
  }
  #uplinkDelay: number | undefined;

  /**
   * Opens the input and starts capturing. Rejects with MicrophoneError
   * (`reason` "denied", "not-found", "in-use", "unsupported"), AssetLoadError
   * (naming the worklet URL) or AudioContextError.
   */
  async start(): Promise<void> {
    if (this.#node) return;
    await ensureRunning(this.context);
    await loadWorklet(this.context, this.#url, "captureWorklet");
    const stream = await this.#open();
    try {
      // First: a context it cannot join (Firefox, at another rate) then leaves no worklet node behind.
      const source = connectStream(this.context, stream);
      const options = this.#options;
      const uplink = options.uplink;
      const processorOptions: CaptureProcessorOptions = {
        vad: options.vad ?? DEFAULTS.microphone.vad,
        uplink: uplink && {
          sampleRate: uplink.sampleRate,
          format: uplink.format ?? DEFAULTS.microphone.uplink.format,
          frameSamples: Math.round((uplink.sampleRate * (uplink.frameMs ?? DEFAULTS.microphone.uplink.frameMs)) / 1000),
        },
        meterIntervalMs: options.meterIntervalMs ?? DEFAULTS.microphone.meterIntervalMs,
        echoGuard: options.echoGuard,
        profile: options.profile,
        profileClock: options.profileClock,
        levelCell: this.#levelCell,
      };
      const node = new AudioWorkletNode(this.context, "bargein-capture", {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        processorOptions,
      });
      node.port.onmessage = (event: MessageEvent<CaptureToMainMessage>) => this.#onMessage(event.data);
      source.connect(node);
      for (const track of stream.getAudioTracks()) track.addEventListener("ended", this.#onTrackEnded);
      this.#node = node;
      this.#source = source;
    } catch (err) {
      this.#release(stream);
      throw err;
    }
  }

  /**
   * From now on the worklet posts every VAD frame to `port` (whose other end
   * belongs to the VAD worker). The port is transferred.
   */
  connectVad(port: MessagePort): void {
    this.#post({ kind: "connect-vad", port }, [port]);
  }

  /** Turns the level meter (`level` events every meterIntervalMs) on or off. */
  setMeter(enabled: boolean): void {
    this.#post({ kind: "meter", enabled });
  }

  /**
   * Muted, the worklet replaces the input by silence, from its next render
   * quantum on: the VAD, the uplink and the meter all get zeros. The track
   * stays open, so unmuting is as fast.
   */
  setMuted(muted: boolean): void {
    this.#post({ kind: "mute", muted });
  }

  /** The deviceId of the track being captured, as the browser reports it (`getSettings()`). */
  get deviceId(): string | undefined {
    return this.#stream?.getAudioTracks()[0]?.getSettings?.().deviceId;
  }

  /**
   * Moves the capture to another input device without stopping the worklet:
   * the new track is opened with the same constraints, its source node takes
   * the old one's place in the same task (the VAD, the uplink and their
   * frame counts go on), and only then is the old track stopped. `deviceId`
   * undefined: the browser's default. If the new device cannot be opened
   * (a MicrophoneError naming it) or connected to the context (one with
   * reason "unsupported"), this throws and the old device keeps running.
   * Resolves with the swap's id: its `swapGap` event follows once
   * the new device's first sample arrives. With the `input` option (the
   * app's own stream), a ConfigError: the app swaps its stream itself.
   */
  async setDevice(deviceId: string | undefined): Promise<number> {
    const node = this.#requireNode("setDevice");
    if (this.#options.input) {
      throw new ConfigError("Microphone.setDevice(): this microphone captures the app's own `input` stream; open the device yourself and give a new session its stream, or leave `input` unset");
    }
    const stream = await openInput(this.#options.constraints, deviceId);
    let source: MediaStreamAudioSourceNode;
    try {
      if (this.#node !== node) throw new MicrophoneError("Microphone.setDevice(): the microphone was stopped while the new device opened", { reason: "ended" });
      source = connectStream(this.context, stream);
    } catch (err) {
      // Only the new device is released: the old one, if still running, goes on.
      for (const track of stream.getAudioTracks()) track.stop();
      throw err;
    }
    const old = { stream: this.#stream, source: this.#source };
    // Both graph changes happen in this task, so the render thread sees one swap.
    source.connect(node);
    if (this.#levels) source.connect(this.#levels.node);
    old.source?.disconnect();
    const id = ++this.#swaps;
    this.#post({ kind: "swap-mark", id });
    if (old.stream) this.#release(old.stream);
    for (const track of stream.getAudioTracks()) track.addEventListener("ended", this.#onTrackEnded);
    this.#stream = stream;
    this.#ownsStream = true;
    this.#source = source;
    this.#deviceId = deviceId;
    return id;
  }

  /**
   * The input's level now (RMS dBFS, before the mute), and its frequency
   * bins when `bins`. On a crossOriginIsolated page the level is the capture
   * worklet's (smoothed over ~30 ms, one shared float: no analyser); else
   * the analyser's last 256 samples. The analyser is made on the first call
   * that needs it; before start(), silence.
   */
  level(bins = false): ChannelLevel {
    const source = this.#source;
    if (!source) return { rmsDb: SILENT_DB };
    return readChannel(this.#levelReader, bins, () => {
      if (!this.#levels) source.connect((this.#levels = new LevelMeter(this.context)).node);
      return this.#levels;
    });
  }

  /** @internal The worklet's process() durations (µs); needs `profile: true`. */
  profile(): Promise<ProcessProfile> {
    const node = this.#requireNode("profile");
    return new Promise((resolve) => {
      const onReply = (event: MessageEvent<CaptureToMainMessage>) => {
        if (event.data.kind !== "profile") return;
        node.port.removeEventListener("message", onReply);
        resolve({ micros: event.data.micros, meanMicrosByDate: event.data.meanMicrosByDate, clock: event.data.clock });
      };
      node.port.addEventListener("message", onReply);
      this.#post({ kind: "profile" });
    });
  }

  /** Stops capturing: nodes disconnected and, if this opened the device, its tracks stopped. */
  async stop(): Promise<void> {
    const node = this.#node;
    this.#node = undefined;
    if (node) {
      node.port.onmessage = null;
      // Stops the processor, which would otherwise run until the context closes.
      const close: MainToCaptureMessage = { kind: "close" };
      node.port.postMessage(close);
      node.port.close();
      node.disconnect();
    }
    this.#source?.disconnect();
    this.#source = undefined;
    this.#levels?.disconnect();
    this.#levels = undefined;
    if (this.#stream) this.#release(this.#stream);
  }

  async #open(): Promise<MediaStream> {
    const input = this.#options.input;
    if (input) {
      const stream = typeof input === "function" ? await input() : input;
      if (!stream || stream.getAudioTracks().length === 0) {
        throw new MicrophoneError("Microphone: `input` gave no MediaStream with an audio track", { reason: "not-found" });
      }
      this.#stream = stream;
      this.#ownsStream = false;
      return stream;
    }
    const stream = await openInput(this.#options.constraints, this.#deviceId);
    this.#stream = stream;
    this.#ownsStream = true;
    return stream;
  }

  #release(stream: MediaStream): void {
    for (const track of stream.getAudioTracks()) {
      track.removeEventListener("ended", this.#onTrackEnded);
      if (this.#ownsStream) track.stop();
    }
    this.#stream = undefined;
  }

  readonly #onTrackEnded = () => this.emit("ended", undefined);

  #onMessage(message: CaptureToMainMessage): void {
    switch (message.kind) {
      case "capture-started":
        this.#started = { frame: message.frame, contextTime: message.contextTime, sampleRate: message.sampleRate };
        this.emit("started", this.#started);
        break;
      case "uplink-frame":
        this.emit("frame", {
          samples: message.samples,
          sampleIndex: message.sampleIndex,
          contextTime: message.contextTime,
        });
        break;
      case "level":
        this.emit("level", { rms: message.rms, contextTime: message.contextTime });
        break;
      case "capture-gap":
        this.emit("gap", { frames: message.frames, contextTime: message.contextTime });
        break;
      case "swap-gap":
        this.emit("swapGap", { id: message.id, ms: (message.frames / this.context.sampleRate) * 1000, capped: message.capped });
        break;
      case "echo-stats": {
        const { kind: _, ...stats } = message;
        this.emit("echo", stats);
        break;
      }
    }
  }

  #post(message: MainToCaptureMessage, transfer: Transferable[] = []): void {
    this.#requireNode(message.kind).port.postMessage(message, transfer);
  }

  #requireNode(method: string): AudioWorkletNode {
    if (!this.#node) throw new ConfigError(`Microphone (${method}): call and await microphone.start() first`);
    return this.#node;
  }
}
