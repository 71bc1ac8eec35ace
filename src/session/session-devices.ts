/**
 * The session's devices: the input and output the app picked, the swaps of
 * the capture to another input while the session runs, the output's sink,
 * and the `devicechange` watch with its fallback to the default input when
 * the one in use goes away (a headset unplugged). It decides nothing about
 * turns: the capture keeps feeding the same worklet, so the VAD, the STT
 * stream and the turn machine never notice a swap.
 *
 * Thread: main. Owner: VoiceSession, which gives it the live components.
 */
import { ConfigError, MicrophoneError } from "../errors.js";
import type { Emitter } from "../util/emitter.js";
import type { AudioLevels, DeviceList, DeviceMetrics } from "./device-types.js";
import type { SessionComponents } from "./ports.js";
import type { VoiceSessionEvents } from "./types.js";

export interface DeviceSink {
  events: Emitter<VoiceSessionEvents>;
  /** The components of the running session, or undefined. */
  components(): SessionComponents | undefined;
  /** The session cannot go on: report and stop. */
  fail(err: unknown): void;
}

export class SessionDevices {
  readonly #sink: DeviceSink;
  #input: string | undefined;
  #output: string | undefined;
  /** Swaps run one after another: a fallback never races the app's pick. */
  #queue: Promise<unknown> = Promise.resolve();
  #fallingBack = false;
  readonly #metrics: DeviceMetrics = { inputSwaps: 0, lastSwapGapMs: null, maxSwapGapMs: 0 };

  constructor(sink: DeviceSink) {
    this.#sink = sink;
  }

  /** The input the app picked (undefined: the default), which start() opens. */
  get inputDeviceId(): string | undefined {
    return this.#input;
  }

  get metrics(): DeviceMetrics {
    return { ...this.#metrics };
  }

  /**
   * Before start(): the input start() opens. While running: the capture moves
   * to it (CapturePort.setDevice), and `inputDevice` reports the gap. A
   * failure leaves the old device running and rejects with the error.
   */
  setInput(deviceId: string | undefined, reason: "app" | "fallback" = "app"): Promise<void> {
    if (deviceId !== undefined && (typeof deviceId !== "string" || !deviceId)) {
      return Promise.reject(new ConfigError("VoiceSession.setInputDevice(): give a deviceId from navigator.mediaDevices.enumerateDevices() (or the `devicechange` event), or undefined for the default"));
    }
    const run = this.#queue.then(async () => {
      const capture = this.#sink.components()?.capture;
      if (!capture) {
        this.#input = deviceId;
        return;
      }
      if (typeof capture.setDevice !== "function") {
        throw new ConfigError("VoiceSession.setInputDevice(): this session's components have no `capture.setDevice(deviceId)`; add it to your components factory (see CapturePort)");
      }
      const { gapMs } = await capture.setDevice(deviceId);
      this.#input = deviceId;
      this.#metrics.inputSwaps++;
      if (Number.isFinite(gapMs)) {
        this.#metrics.lastSwapGapMs = gapMs;
        this.#metrics.maxSwapGapMs = Math.max(this.#metrics.maxSwapGapMs, gapMs);
      }
      this.#sink.events.emit("inputDevice", { deviceId, reason, gapMs });
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Before start(): the output start() plays to. While running: the player's
   * sink moves (PlayerPort.setSinkId; a ConfigError where the browser lacks
   * AudioContext.setSinkId). "" is the default output.
   */
  async setOutput(deviceId: string): Promise<void> {
    if (typeof deviceId !== "string") throw new ConfigError("VoiceSession.setOutputDevice(): give an output deviceId (\"\" for the default)");
    const player = this.#sink.components()?.player;
    if (player) await requireSink(player).call(player, deviceId);
    this.#output = deviceId;
  }

  /** A session just started on `components`: applies the output picked before, and watches the devices. */
  async attach(components: SessionComponents): Promise<Array<() => void>> {
    if (this.#output !== undefined) await requireSink(components.player).call(components.player, this.#output);
    const devices = components.devices;
    if (!devices) return [];
    return [devices.on("change", () => void this.#onChange(components))];
  }

  /**
   * The input's track ended (unplugged, or revoked). Where the capture can
   * swap, the default input takes over with a `warning`; otherwise, or if
   * that fails too, the session fails with `ended`.
   */
  inputEnded(ended: MicrophoneError): void {
    const capture = this.#sink.components()?.capture;
    if (typeof capture?.setDevice !== "function") return this.#sink.fail(ended);
    void this.#fallBack("the microphone's track ended").catch(() => this.#sink.fail(ended));
  }

  async #onChange(components: SessionComponents): Promise<void> {
    let list: DeviceList;
    try {
      list = await components.devices!.list();
    } catch {
      return; // The list is a courtesy; a browser that refuses it changes nothing.
    }
    if (this.#sink.components() !== components) return;
    const current = components.capture.deviceId ?? this.#input;
    const inputLost = current !== undefined && current !== "default" && !list.inputs.some((d) => d.deviceId === current);
    this.#sink.events.emit("devicechange", { ...list, inputLost });
    if (!inputLost || typeof components.capture.setDevice !== "function") return;
    await this.#fallBack(`the input device "${current}" went away`).catch((err) => this.#sink.fail(err));
  }

  /** Moves to the default input, once at a time. */
  async #fallBack(why: string): Promise<void> {
    if (this.#fallingBack) return;
    this.#fallingBack = true;
    try {
      await this.setInput(undefined, "fallback");
      // Said once it worked: an `input` stream of the app's cannot be replaced, and then the session fails instead.
      this.#sink.events.emit("warning", { service: "microphone", message: `${why}: the session now captures the default input` });
    } finally {
      this.#fallingBack = false;
    }
  }
}

function requireSink(player: SessionComponents["player"]): NonNullable<SessionComponents["player"]["setSinkId"]> {
  if (typeof player.setSinkId === "function") return player.setSinkId;
  throw new ConfigError("VoiceSession.setOutputDevice(): this session's components have no `player.setSinkId(deviceId)`; add it to your components factory (see PlayerPort)");
}

const SILENT = { rmsDb: -100 } as const;

/**
 * `getLevels()`: reads each side's analyser now (made on the first read, so
 * a session that never asks pays nothing). Before start(), or with
 * components that have no `level`, a side reads silence.
 */
export function readLevels(components: SessionComponents | undefined, bins: boolean): AudioLevels {
  return {
    input: components?.capture.level?.(bins) ?? { ...SILENT },
    output: components?.player.level?.(bins) ?? { ...SILENT },
  };
}
