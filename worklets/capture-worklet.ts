/**
 * Capture processor `bargein-capture`: takes the mic at the context's rate,
 * mixes it to mono, and produces
 * - 16 kHz frames of 512 samples for the VAD, posted straight to the VAD
 *   worker's port (ConnectVadMessage) as VadFrameMessages;
 * - uplink frames at the provider's rate and format (s16 or f32), posted to
 *   the main thread on the node's port;
 * - on request only, an RMS level every `meterIntervalMs`.
 * Both streams go through the windowed-sinc Resampler (anti-aliased), so a
 * frame's sample i is the input at context frame
 * `startFrame + i × contextRate / rate − resampler delay`.
 *
 * A quantum with no input channel (source not yet flowing) counts as silence,
 * so the sample indices stay locked to the context's frames. So does a quantum
 * the browser skipped: Chromium may not call a node's process() for a few
 * quanta (seen while a context starts, and in CI as a 4- and a 7-quantum shift
 * of the capture against a recorder in the same graph). currentFrame then
 * jumps; the missed span is fed as silence and reported (`capture-gap`), so
 * nothing downstream drifts.
 *
 * Allocation: scratch buffers are allocated up front. A frame is transferred
 * (never copied), so a fresh frame buffer is allocated each time one is posted,
 * once per 32 ms (VAD) or per uplink frame, not per quantum; nothing else in
 * `process()` allocates except the rare level and start messages.
 */
import { LevelWriter } from "../src/audio/level-cell.js";
import { Resampler } from "../src/audio/resampler.js";
import type {
  CaptureProcessorOptions,
  CaptureToMainMessage,
  MainToCaptureMessage,
  UplinkFormat,
} from "../src/protocol/audio-messages.js";
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE, type VadFrameMessage } from "../src/protocol/frames.js";
import { CaptureEcho } from "./capture-echo.js";
import { ProcessClock, profileReport } from "./process-clock.js";
import { requireProcessorOptions } from "./processor-options.js";

const QUANTUM = 128;
/** The echo guard's figures go to the main thread about once a second. */
const ECHO_STATS_EVERY_S = 1;

type Emit = (frame: Float32Array | Int16Array, sampleIndex: number) => boolean;

/** Collects resampled samples into fixed-size frames and hands each one off. */
class Framer {
  readonly resampler: Resampler;
  readonly #scratch: Float32Array;
  readonly #format: UplinkFormat;
  readonly #size: number;
  #frame: Float32Array | Int16Array;
  #filled = 0;
  /** Index, in this stream, of the current frame's first sample. */
  #frameStart = 0;

  constructor(inputRate: number, outputRate: number, size: number, format: UplinkFormat) {
    this.resampler = new Resampler(inputRate, outputRate);
    this.#scratch = new Float32Array(this.resampler.maxOutput(QUANTUM));
    this.#size = size;
    this.#format = format;
    this.#frame = this.#newFrame();
  }

  /**
   * Resamples `mono`; calls `emit` for each completed frame, which takes
   * ownership of it. Returns the samples resampled; allocates only a
   * replacement frame.
   */
  push(mono: Float32Array, emit: Emit | undefined): number {
    return this.pushFrom(mono, mono.length, emit);
  }

  /** As push, for the first `n` samples of `input` (at this framer's input rate). Returns the samples resampled. */
  pushFrom(input: Float32Array, n: number, emit: Emit | undefined): number {
    const m = this.resampler.process(input, 0, n, this.#scratch, 0);
    this.pushResampled(this.#scratch, m, emit);
    return m;
  }

  /** The samples the last push resampled, at the output rate (valid until the next push). */
  get resampled(): Float32Array {
    return this.#scratch;
  }

  /** Frames `n` samples already at the output rate (the echo guard's output). */
  pushResampled(samples: Float32Array, n: number, emit: Emit | undefined): void {
    for (let i = 0; i < n; i++) {
      const x = samples[i];
      if (this.#format === "s16") {
        const clamped = x > 1 ? 1 : x < -1 ? -1 : x;
        this.#frame[this.#filled++] = Math.round(clamped * 32767);
      } else {
        this.#frame[this.#filled++] = x;
      }
      if (this.#filled === this.#size) {
        // Only a frame that was handed off (transferred) needs replacing.
        if (emit?.(this.#frame, this.#frameStart)) this.#frame = this.#newFrame();
        this.#filled = 0;
        this.#frameStart += this.#size;
      }
    }
  }

  #newFrame(): Float32Array | Int16Array {
    return this.#format === "s16" ? new Int16Array(this.#size) : new Float32Array(this.#size);
  }
}

class CaptureProcessor extends AudioWorkletProcessor {
  readonly #mono = new Float32Array(QUANTUM);
  readonly #vad: Framer | undefined;
  /** The echo guard between the microphone and the VAD (processorOptions.echoGuard). */
  readonly #echo: CaptureEcho | undefined;
  readonly #echoStatsQuanta: number;
  #quanta = 0;
  /** 16 kHz samples the last quantum gave the VAD (for cleanUplink). */
  #lastVadCount = 0;
  readonly #uplink: Framer | undefined;
  /**
   * echoGuard.cleanUplink: the uplink takes the 16 kHz signal the VAD gets
   * (the guard's output), resampled to the uplink's rate, instead of the raw
   * microphone at the context's rate.
   */
  readonly #cleanUplink: boolean;
  readonly #meterWindow: number;
  readonly #clock: ProcessClock | undefined;
  #vadPort: MessagePort | undefined;
  /** Set by "close": process() returns false and the processor can be collected. */
  #closed = false;
  #meterOn = false;
  /** The raw input's level for the main thread's getLevels() (processorOptions.levelCell). */
  readonly #level: LevelWriter | undefined;
  /** Muted (see MainToCaptureMessage "mute"): the input counts as silence from the next quantum on. */
  #muted = false;
  #meterSum = 0;
  #meterCount = 0;
  /** A device swap being timed ("swap-mark"): its id, and the silent frames since (-1: none). */
  #swapId = 0;
  #swapSilentFrames = -1;
  /** The context frame the next process() call should start at (-1: not started). */
  #nextFrame = -1;
  readonly #silence = new Float32Array(QUANTUM);
  readonly #emitVad = (frame: Float32Array | Int16Array, sampleIndex: number): boolean => {
    if (!this.#vadPort) return false;
    const message: VadFrameMessage = {
      kind: "vad-frame",
      frame: frame as Float32Array,
      sampleIndex,
      contextTime: currentTime + QUANTUM / sampleRate,
      echoPath: this.#echo?.takeEchoPath(),
      echo: this.#echo?.takeVerdict(),
    };
    this.#vadPort.postMessage(message, [frame.buffer as ArrayBuffer]);
    return true;
  };
  readonly #emitUplink = (frame: Float32Array | Int16Array, sampleIndex: number): boolean => {
    this.#post({ kind: "uplink-frame", samples: frame, sampleIndex, contextTime: currentTime + QUANTUM / sampleRate }, [
      frame.buffer as ArrayBuffer,
    ]);
    return true;
  };

  constructor(options: { processorOptions?: unknown }) {
    super();
    const opts = requireProcessorOptions<CaptureProcessorOptions>("bargein-capture", options, ["meterIntervalMs"], "bargein's Microphone");
    if (opts.vad) this.#vad = new Framer(sampleRate, VAD_SAMPLE_RATE, VAD_FRAME_SAMPLES, "f32");
    if (opts.vad && opts.echoGuard) this.#echo = new CaptureEcho(sampleRate, opts.echoGuard);
    this.#echoStatsQuanta = Math.round((ECHO_STATS_EVERY_S * sampleRate) / QUANTUM);
    this.#cleanUplink = this.#echo !== undefined && opts.echoGuard?.cleanUplink === true;
    if (opts.uplink) {
      const { sampleRate: rate, frameSamples, format } = opts.uplink;
      this.#uplink = new Framer(this.#cleanUplink ? VAD_SAMPLE_RATE : sampleRate, rate, frameSamples, format);
    }
    this.#meterWindow = Math.max(QUANTUM, Math.round((opts.meterIntervalMs / 1000) * sampleRate));
    this.#clock = opts.profile ? new ProcessClock(opts.profileClock) : undefined;
    this.#level = opts.levelCell ? new LevelWriter(opts.levelCell, sampleRate) : undefined;
    this.port.onmessage = (event: MessageEvent<MainToCaptureMessage>) => this.#onMessage(event.data);
  }

  #onMessage(message: MainToCaptureMessage): void {
    switch (message.kind) {
      case "connect-vad":
        this.#vadPort?.close();
        this.#vadPort = message.port;
        break;
      case "close":
        this.#closed = true;
        this.#vadPort?.close();
        this.#vadPort = undefined;
        this.port.close();
        break;
      case "meter":
        this.#meterOn = message.enabled;
        this.#meterSum = 0;
        this.#meterCount = 0;
        break;
      case "mute":
        this.#muted = message.muted;
        break;
      case "swap-mark":
        this.#swapId = message.id;
        this.#swapSilentFrames = 0;
        break;
      case "profile":
        this.#post(profileReport(this.#clock));
        break;
    }
  }

  process(inputs: Float32Array[][]): boolean {
    if (this.#closed) return false;
    const started = this.#clock?.start() ?? 0;
    if (this.#nextFrame < 0) {
      this.#nextFrame = currentFrame;
      this.#post({ kind: "capture-started", frame: currentFrame, contextTime: currentTime, sampleRate });
    }
    if (currentFrame > this.#nextFrame) this.#fillGap(currentFrame - this.#nextFrame);
    this.#nextFrame = currentFrame + QUANTUM;
    const mono = this.#mono;
    const channels = inputs[0];
    mono.fill(0);
    if (this.#swapSilentFrames >= 0) this.#timeSwap(channels);
    // The microphone before the mute, as its analyser shows it (a muted user still sees their voice).
    this.#level?.write(channels?.[0]);
    if (channels && channels.length > 0 && !this.#muted) {
      const scale = 1 / channels.length;
      for (let c = 0; c < channels.length; c++) {
        const data = channels[c];
        for (let i = 0; i < QUANTUM; i++) mono[i] += data[i] * scale;
      }
    }
    // Muted, the echo guard is left out: silence for a microphone would teach its filter that the
    // bot's echo is gone, and it would have to converge again after the unmute.
    if (this.#muted) this.#lastVadCount = this.#vad?.push(mono, this.#emitVad) ?? 0;
    else this.#toVad(mono, currentFrame);
    this.#toUplink(mono);
    if (this.#meterOn) this.#meter(mono);
    if (this.#echo && ++this.#quanta % this.#echoStatsQuanta === 0) this.#postEchoStats();
    if (this.#clock) this.#clock.stop(started);
    return true;
  }

  /**
   * Counts the raw input's silent quanta after a device swap (before the
   * mute, which would hide the new device), up to one second; no allocation.
   */
  #timeSwap(channels: Float32Array[] | undefined): void {
    let heard = false;
    for (let c = 0; channels && c < channels.length && !heard; c++) {
      const data = channels[c];
      for (let i = 0; i < QUANTUM; i++) if (data[i] !== 0) { heard = true; break; }
    }
    const capped = !heard && this.#swapSilentFrames + QUANTUM >= sampleRate;
    if (!heard && !capped) {
      this.#swapSilentFrames += QUANTUM;
      return;
    }
    this.#post({ kind: "swap-gap", id: this.#swapId, frames: this.#swapSilentFrames, capped, contextTime: currentTime });
    this.#swapSilentFrames = -1;
  }

  /** Feeds `frames` of silence for quanta the browser skipped, and reports them. */
  #fillGap(frames: number): void {
    for (let done = 0; done < frames; done += QUANTUM) {
      this.#toVad(this.#silence, this.#nextFrame + done);
      this.#toUplink(this.#silence);
    }
    this.#post({ kind: "capture-gap", frames, contextTime: currentTime });
  }

  /** The VAD's path: through the echo guard when it is on, else straight to the 16 kHz framer. */
  #toVad(mono: Float32Array, frame: number): void {
    if (!this.#vad) return;
    if (!this.#echo) {
      this.#vad.push(mono, this.#emitVad);
      return;
    }
    const n = (this.#lastVadCount = this.#echo.process(mono, frame));
    this.#vad.pushResampled(this.#echo.out, n, this.#emitVad);
  }

  /** The uplink's path: the raw quantum, or (cleanUplink) the 16 kHz samples the VAD just got. */
  #toUplink(mono: Float32Array): void {
    if (!this.#uplink) return;
    if (!this.#cleanUplink) {
      this.#uplink.push(mono, this.#emitUplink);
      return;
    }
    // Muted, the VAD's framer resampled the silence itself; otherwise the guard wrote its output.
    if (this.#muted) this.#uplink.pushFrom(this.#vad!.resampled, this.#lastVadCount, this.#emitUplink);
    else this.#uplink.pushFrom(this.#echo!.out, this.#lastVadCount, this.#emitUplink);
  }

  #postEchoStats(): void {
    const s = this.#echo!.state;
    this.#post({ kind: "echo-stats", erleDb: s.erleDb, delayMs: s.delayMs, converged: s.converged, referenceActive: s.referenceActive, contextTime: currentTime });
  }

  #meter(mono: Float32Array): void {
    for (let i = 0; i < QUANTUM; i++) this.#meterSum += mono[i] * mono[i];
    this.#meterCount += QUANTUM;
    if (this.#meterCount >= this.#meterWindow) {
      this.#post({ kind: "level", rms: Math.sqrt(this.#meterSum / this.#meterCount), contextTime: currentTime });
      this.#meterSum = 0;
      this.#meterCount = 0;
    }
  }

  #post(message: CaptureToMainMessage, transfer: Transferable[] = []): void {
    this.port.postMessage(message, transfer);
  }
}

registerProcessor("bargein-capture", CaptureProcessor);
