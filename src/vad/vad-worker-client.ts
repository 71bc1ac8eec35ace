/**
 * VadWorker: the main thread's handle on the VAD worker. Main thread only.
 *
 * The main thread sets things up (loads the worker, hands it ports) and then
 * only receives speech events. Audio frames go from the capture worklet to the
 * worker through `framePort()` and never pass through here, unless the app
 * feeds its own audio with `feed()`. Probabilities arrive only while
 * `setMeter(true)`, throttled in the worker.
 *
 * Lifecycle: `start()` once; `stop()` (or `await using`) releases the ORT
 * session, closes every port and terminates the worker. A stopped VadWorker
 * cannot be restarted; make a new one. With `waitForModel: false`, `start()`
 * resolves once the worker runs its level fallback, and `ready` (or
 * `loadError`) comes later, in order with the speech events.
 */
import { AssetLoadError, BargeinError, ConfigError, ServiceTimeoutError } from "../errors.js";
import type { ConnectFramesMessage, FrameEcho, VadFrameMessage } from "../protocol/frames.js";
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE } from "../protocol/frames.js";
import type { MainToVadMessage, VadModel, VadFlushMessage, VadToMainMessage, VadWorkerSettings } from "../protocol/vad-messages.js";
import type { VadWorkerEvents } from "./vad-events.js";
import { isPauseToken } from "../audio/pause-token.js";
import { abortError } from "../util/abort.js";
import { Emitter } from "../util/emitter.js";
import { defineAsyncDispose, type AsyncDisposableIfSupported } from "../util/async-dispose.js";
import { ASSET_LABELS, assetHint, assetsFolderUrl, pageBase, resolveAssetUrl, type AssetName } from "../assets/asset-urls.js";
import { describeAnswer } from "../audio/worklet-loader.js";
import {
  vadAssetUrls,
  resolveVadOptions,
  type ResolvedVadOptions,
  type VadWorkerOptions,
} from "./vad-options.js";

export type { VadLoadProgress, VadReady, VadMisfire, VadOnsetPause, VadPauseLapse, VadProbability, VadJudged, VadSpeechEnd, VadSpeechQuiet, VadSpeechRealStart, VadSpeechResumed, VadSpeechStart, VadSpeechVoiced, VadTurnPrediction, VadWorkerEvents } from "./vad-events.js";

export type VadWorkerState = "idle" | "loading" | "running" | "stopped";

/** How long `stop()` waits for the worker to release its session before terminating it anyway. */
const DISPOSE_GRACE_MS = 1000;

/** An AsyncDisposable where the app's lib has the type: `await using` stops it (see util/async-dispose.ts). */
export interface VadWorker extends AsyncDisposableIfSupported {}

export class VadWorker extends Emitter<VadWorkerEvents> {
  static {
    defineAsyncDispose(VadWorker, function () {
      return this.stop();
    });
  }

  readonly options: Readonly<ResolvedVadOptions>;
  #state: VadWorkerState = "idle";
  #worker: Worker | undefined;
  #ports: MessagePort[] = [];
  #feedPort: MessagePort | undefined;
  #feedSampleIndex = 0;
  #loadMs: number | undefined;
  #onDisposed: (() => void) | undefined;
  #flushes = new Map<number, () => void>();
  #nextFlushId = 1;
  /** Settles the pending start(); set only while loading. */
  #settleLoad: ((err?: unknown) => void) | undefined;
  #modelReady = false;
  /** With `waitForModel: false`: why the model never became ready, once `loadError` was sent. */
  #loadError: BargeinError | undefined;
  /** With `waitForModel: false`: the model's load timeout, from start() until `ready`. */
  #modelTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: VadWorkerOptions) {
    super();
    this.options = Object.freeze(resolveVadOptions(options));
  }

  get state(): VadWorkerState {
    return this.#state;
  }

  get model(): VadModel {
    return this.options.model;
  }

  /** Time the worker took to fetch the assets and create the session (ms), once the model is ready. */
  get loadMs(): number | undefined {
    return this.#loadMs;
  }

  /** Whether Silero judges the frames (false before it is ready: nothing, or the level fallback, judges them). */
  get modelReady(): boolean {
    return this.#modelReady;
  }

  /** With `waitForModel: false`: the `loadError` sent, if the model failed to load after start() resolved. */
  get loadError(): BargeinError | undefined {
    return this.#loadError;
  }

  /**
   * Starts the worker and loads the model and onnxruntime's wasm. Resolves when
   * frames can be processed: once the model is ready, or with `waitForModel:
   * false` once the worker runs its level fallback. Rejects with AssetLoadError
   * naming the URL that failed, ServiceTimeoutError after `loadTimeoutMs`, or
   * the signal's reason; with `waitForModel: false` a failure after it
   * resolved is a `loadError` event instead.
   */
  async start({ signal }: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#state !== "idle") {
      throw new ConfigError(`VadWorker.start(): already ${this.#state}; a VadWorker starts once`, { service: "vad" });
    }
    signal?.throwIfAborted();
    this.#state = "loading";
    const where = { assetsPath: this.options.assetsPath, assets: vadAssetUrls(this.options) };
    const model = this.options.model;
    const turnDetector = this.options.turnDetector;
    let workerUrl: string, modelUrl: string, wasmUrl: string, detectorUrl: string | undefined;
    try {
      workerUrl = resolveAssetUrl("vadWorker", where, model);
      modelUrl = resolveAssetUrl("model", where, model);
      wasmUrl = resolveAssetUrl("wasm", where, model);
      detectorUrl = turnDetector && this.#turnDetectorUrl(turnDetector.module);
    } catch (err) {
      this.#state = "stopped";
      throw err;
    }
    let worker: Worker;
    try {
      // The URL is passed as a variable, not as `new Worker(new URL(...))`, so
      // that bundlers copy vad-worker.js (self-contained) instead of bundling it again.
      worker = new Worker(workerUrl, { type: "module", name: "bargein-vad" });
    } catch (err) {
      this.#state = "stopped";
      throw new AssetLoadError(`VAD worker could not be created from ${workerUrl}: ${assetHint("vadWorker")}`, { service: "vad", url: workerUrl, cause: err });
    }
    this.#worker = worker;

    const loaded = new Promise<void>((resolve, reject) => {
      this.#settleLoad = (err) => (err ? reject(err) : resolve());
    });
    const settle = (err?: unknown) => this.#settleLoad?.(err);
    worker.onmessage = (event: MessageEvent<VadToMainMessage>) => this.#handle(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      if (this.#state === "loading") {
        const what = event.message || "the script did not load";
        // A worker's error event does not say why; one GET tells a 404 from an HTML fallback page.
        void describeAnswer(workerUrl).then((answer) =>
          settle(new AssetLoadError(`VAD worker failed at ${workerUrl} (${what}${answer}): ${assetHint("vadWorker")}`, { service: "vad", url: workerUrl })),
        );
      } else {
        // It had loaded: not a missing asset but a crash while running.
        this.emit("error", new BargeinError(`the VAD worker (${workerUrl}) crashed while detecting speech: ${event.message || "no message"}`, { service: "vad" }));
      }
    };
    const { assets: _assets, assetsPath: _assetsPath, turnDetector: _detector, ...speech } = this.options;
    const detector = turnDetector && detectorUrl ? { turnDetector: { url: detectorUrl, options: turnDetector.options ?? {} } } : {};
    const settings: VadWorkerSettings = { ...speech, modelUrl, wasmUrl, ...detector };
    this.#post({ kind: "init", settings });

    const timeoutMs = this.options.loadTimeoutMs;
    const timedOut = () => new ServiceTimeoutError(`VAD did not load within ${timeoutMs} ms (${modelUrl}, ${wasmUrl}): check that the server sends both files, or raise \`loadTimeoutMs\` for a slow link`, { service: "vad", timeoutMs });
    const timer = setTimeout(() => settle(timedOut()), timeoutMs);
    const onAbort = () => settle(signal!.reason ?? abortError("VadWorker.start()"));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await loaded;
      if (this.#state !== "loading") throw abortError("VadWorker.start()");
      this.#state = "running";
      // The fallback runs: the model's own time limit goes on, as a loadError.
      if (!this.#modelReady) this.#modelTimer = setTimeout(() => this.#failLoad(timedOut()), timeoutMs);
    } catch (err) {
      this.#terminate();
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#settleLoad = undefined;
    }
  }

  /**
   * A new port whose frames (VadFrameMessage, 512 samples at 16 kHz,
   * transferred) go straight to the worker. Hand it to the capture worklet with
   * a ConnectVadMessage; the main thread never sees those frames.
   */
  framePort(): MessagePort {
    const channel = new MessageChannel();
    this.attach(channel.port2);
    this.#ports.push(channel.port1);
    return channel.port1;
  }

  /** Connects a port that already carries VadFrameMessages (transferred to the worker). */
  attach(port: MessagePort): void {
    this.#requireStarted("attach");
    const message: ConnectFramesMessage = { kind: "connect-frames", port };
    this.#post(message, [port]);
  }

  /**
   * Tells the worker how to reach the playback worklet, once:
   * `connectPlaybackControl(player.createControlPort(), player.controlBuffer)`.
   * On speech start while auto-pause is armed, the worker pauses playback
   * directly (in `control`, the shared control block, when given: no message
   * hop; else by `{kind:"pause", token}` on `port`), and resumes the same token
   * if that speech turns out to be a misfire. The port is transferred.
   */
  connectPlaybackControl(port: MessagePort, control?: SharedArrayBuffer): void {
    this.#requireStarted("connectPlaybackControl");
    this.#post({ kind: "connect-playback-control", port, control }, [port]);
  }

  /**
   * Arms auto-pause for playback generation `token` (the reply the bot is
   * speaking; the worker's pause is for it alone), or disarms it with `null`.
   * Arm again with the next reply's generation when it starts.
   */
  setAutoPause(token: number | null): void {
    this.#requireStarted("setAutoPause");
    if (token !== null && !isPauseToken(token)) {
      throw new ConfigError(
        `VadWorker.setAutoPause(): pass the playback generation to pause (an integer ≥ 0, e.g. player.generation) or null to disarm; got ${String(token)}`,
        { service: "vad" },
      );
    }
    this.#post({ kind: "auto-pause", token });
  }

  /** Turns the throttled `probability` events on or off (off by default: no per-frame traffic). */
  setMeter(on: boolean): void {
    this.#requireStarted("setMeter");
    this.#post({ kind: "set-meter", on });
  }

  /**
   * Turns the `judged` events on or off (off by default): every 128 ms of audio, how far the worker has
   * judged it. The session uses them to keep the STT's words behind what the VAD has heard.
   */
  reportJudged(on: boolean): void {
    this.#requireStarted("reportJudged");
    this.#post({ kind: "report-judged", on });
  }

  /** Stops detection; the current utterance ends or is dropped per `submitUserSpeechOnPause`. */
  pause(): void {
    this.#requireStarted("pause");
    this.#post({ kind: "pause" });
  }

  resume(): void {
    this.#requireStarted("resume");
    this.#post({ kind: "resume" });
  }

  /**
   * For a turn the STT service called over: ends the current utterance (`speechEnd` or `misfire`) once quiet
   * `quietMs`, now if it is, as `redemptionMs` would later. Voice first cancels it; no utterance, no effect.
   */
  endWhenQuiet(quietMs: number): void {
    this.#requireStarted("endWhenQuiet");
    if (!(quietMs >= 0)) throw new ConfigError(`VadWorker.endWhenQuiet(): quietMs must be a number of ms, 0 or more (got ${quietMs})`);
    this.#post({ kind: "end-when-quiet", quietMs });
  }

  /**
   * From now on, `speechQuiet` when a confirmed utterance has been quiet `quietMs` (short of `redemptionMs`;
   * it goes on), and `speechResumed` when its voice comes back after that: a likely end of turn before the
   * certain one, where a preemptive reply starts. `null` turns it off.
   */
  noticeQuiet(quietMs: number | null): void {
    this.#requireStarted("noticeQuiet");
    if (quietMs !== null && !(quietMs >= 0)) throw new ConfigError(`VadWorker.noticeQuiet(): quietMs must be a number of ms, 0 or more, or null (got ${quietMs})`);
    this.#post({ kind: "notice-quiet", quietMs });
  }

  /**
   * From now on, `speechVoiced` once a confirmed utterance's voice has lasted `voicedMs` from its onset (it goes
   * on): speech that long over the bot is no backchannel. `null` turns it off.
   */
  noticeVoiced(voicedMs: number | null): void {
    this.#requireStarted("noticeVoiced");
    if (voicedMs !== null && !(voicedMs >= 0)) throw new ConfigError(`VadWorker.noticeVoiced(): voicedMs must be a number of ms, 0 or more, or null (got ${voicedMs})`);
    this.#post({ kind: "notice-voiced", voicedMs });
  }

  /**
   * For apps that run the VAD on their own audio: feeds one 512-sample 16 kHz
   * frame from the main thread. The frame's buffer is transferred (do not reuse
   * it). `sampleIndex` defaults to continuing from the previous fed frame.
   * `echo`: an echo canceller's verdict on the frame, when the app runs one
   * (FrameEcho; without it the frame is `"clear"`, no bot audio).
   */
  feed(frame: Float32Array, sampleIndex = this.#feedSampleIndex, contextTime = sampleIndex / VAD_SAMPLE_RATE, echo?: FrameEcho): void {
    if (!(frame instanceof Float32Array) || frame.length !== VAD_FRAME_SAMPLES) {
      throw new ConfigError(`VadWorker.feed(): frames must be Float32Array(${VAD_FRAME_SAMPLES}) at 16 kHz`, { service: "vad" });
    }
    this.#feedPort ??= this.framePort();
    this.#feedSampleIndex = sampleIndex + VAD_FRAME_SAMPLES;
    const message: VadFrameMessage = { kind: "vad-frame", frame, sampleIndex, contextTime, ...(echo ? { echo } : {}) };
    this.#feedPort.postMessage(message, [frame.buffer]);
  }

  /**
   * Resolves once every frame passed to `feed()` so far has been processed and
   * its events delivered (events are posted before the answer, in order).
   */
  flush(): Promise<void> {
    this.#requireStarted("flush");
    this.#feedPort ??= this.framePort();
    const id = this.#nextFlushId++;
    return new Promise((resolve) => {
      this.#flushes.set(id, resolve);
      this.#feedPort!.postMessage({ kind: "vad-flush", id } satisfies VadFlushMessage);
    });
  }

  /**
   * Releases the ORT session, closes every port and terminates the worker.
   * Safe to call at any time and more than once.
   */
  async stop(): Promise<void> {
    if (this.#state === "stopped" || this.#state === "idle") {
      this.#state = "stopped";
      return;
    }
    const worker = this.#worker;
    if (worker && this.#state === "running") {
      const disposed = new Promise<void>((resolve) => (this.#onDisposed = resolve));
      this.#post({ kind: "dispose" });
      // A worker stuck in a long inference may not answer; terminate frees it all anyway.
      await Promise.race([disposed, new Promise((r) => setTimeout(r, DISPOSE_GRACE_MS))]);
    }
    this.#terminate();
  }

  #failLoad(error: BargeinError): void {
    this.#loadError ??= error;
    this.emit("loadError", error);
  }

  #terminate(): void {
    this.#state = "stopped";
    clearTimeout(this.#modelTimer);
    // stop() during start(): start() rejects as cancelled.
    this.#settleLoad?.(abortError("VadWorker.start()"));
    this.#onDisposed = undefined;
    // Pending flushes resolve: there is nothing left to wait for.
    for (const resolve of this.#flushes.values()) resolve();
    this.#flushes.clear();
    for (const port of this.#ports) port.close();
    this.#ports = [];
    this.#feedPort = undefined;
    if (this.#worker) {
      this.#worker.onmessage = null;
      this.#worker.onerror = null;
      this.#worker.terminate();
      this.#worker = undefined;
    }
  }

  /** `turnDetector.module`, resolved as the README says: against assetsPath, else the page. */
  #turnDetectorUrl(module: string): string {
    const path = this.options.assetsPath;
    try {
      return new URL(module, path === undefined ? pageBase() : assetsFolderUrl(path)).href;
    } catch (cause) {
      throw new ConfigError(`VadWorker: \`turnDetector.module\` is not a URL: ${JSON.stringify(module)}`, { service: "vad", cause });
    }
  }

  #post(message: MainToVadMessage, transfer: Transferable[] = []): void {
    this.#worker!.postMessage(message, transfer);
  }

  #requireStarted(what: string): void {
    if (!this.#worker || this.#state === "stopped") {
      throw new ConfigError(`VadWorker.${what}(): call start() first (state is ${this.#state})`, { service: "vad" });
    }
  }

  #handle(message: VadToMainMessage): void {
    const settle = this.#settleLoad;
    switch (message.kind) {
      case "fallback":
        settle?.();
        break;
      case "ready":
        this.#loadMs = message.loadMs;
        this.#modelReady = true;
        clearTimeout(this.#modelTimer);
        if (settle) settle();
        else this.emit("ready", { loadMs: message.loadMs, sampleIndex: message.sampleIndex, contextTime: message.contextTime, workerTime: message.workerTime });
        break;
      case "load-error": {
        const asset: AssetName | undefined = message.asset;
        const hint = asset ? ` (the ${ASSET_LABELS[asset]}): ${assetHint(asset, this.options.model)}` : "";
        const what = this.options.waitForModel ? "" : "; the level-based fallback goes on deciding when the user speaks";
        const error = new AssetLoadError(`VAD could not load ${message.url}: ${message.message}${hint}${what}`, { service: "vad", url: message.url });
        clearTimeout(this.#modelTimer);
        if (settle) settle(error);
        else this.#failLoad(error);
        break;
      }
      case "progress":
        this.emit("progress", { asset: message.asset, url: message.url, loaded: message.loaded, total: message.total, ...(message.cached === undefined ? {} : { cached: message.cached }) });
        break;
      case "speechStart":
      case "speechRealStart":
      case "speechEnd":
      case "misfire":
      case "pauseLapse":
      case "speechQuiet":
      case "speechResumed":
      case "speechVoiced":
      case "turnPrediction":
      case "onsetPause":
      case "probability":
      case "judged": {
        // The message less its kind is the event of that name.
        const { kind, ...payload } = message;
        (this.emit as (name: typeof kind, event: typeof payload) => void)(kind, payload);
        break;
      }
      case "runtime-error":
        this.emit("error", new BargeinError(`the VAD worker failed while detecting speech: ${message.message}`, { service: "vad" }));
        break;
      case "flushed":
        this.#flushes.get(message.id)?.();
        this.#flushes.delete(message.id);
        break;
      case "disposed":
        this.#onDisposed?.();
        break;
      case "pong":
        break;
    }
  }
}
