/**
 * The pluggable turn detector: the contract between the VAD worker and an
 * app's own end-of-turn model (a Smart Turn ONNX file, say). Types and the
 * option's check only; the worker side is worker/turn-detector-host.ts.
 *
 * The app serves an ES module (resolved against `assetsPath`, like the
 * worker) that exports `createTurnDetector(init)`. The VAD worker imports it
 * once at start-up, with `import()`: no eval, no blob, so a strict CSP works
 * as long as its `script-src` allows the module's URL. `init.ort` is the
 * onnxruntime-web the worker already runs Silero on (wasm, one thread), so a
 * model needs no second runtime. At each utterance's end (the VAD's
 * `speechEnd`), the worker calls `predict()` with the utterance's audio: 16 kHz
 * mono, from its pre-speech pad through the silence that ended it, the last
 * TURN_DETECTOR_MAX_SECONDS at most. The answer is the probability (0..1) that
 * the user's turn is over.
 *
 * `predict` runs between the VAD's frames, in the worker: frames that arrive
 * meanwhile wait (none is lost) and their events come that much later. It runs
 * while the user is quiet, once an utterance; keep it well under the STT's
 * flush (about 100–150 ms), or its verdict comes after the turn was decided.
 */
import { ConfigError } from "../errors.js";

/** What `createTurnDetector` is given. */
export interface TurnDetectorInit {
  /** The audio's rate: 16000. */
  sampleRate: number;
  /** The module's own `options`, as given (structured-cloned into the worker). */
  options: Record<string, unknown>;
  /** The URL the module was loaded from: resolve the model's own files against it. */
  moduleUrl: string;
  /** The worker's onnxruntime-web (its wasm build, configured and loaded): `ort.InferenceSession.create(bytes)`. */
  ort: unknown;
}

/** What `createTurnDetector` returns. */
export interface TurnDetector {
  /** The probability (0..1) that the turn is over, given the utterance's audio (see the module's comment). */
  predict(audio: Float32Array): number | Promise<number>;
  /** Frees the model, when the VAD stops. */
  release?(): void | Promise<void>;
}

/** The module's shape: `export async function createTurnDetector(init) { … }`. */
export interface TurnDetectorModule {
  createTurnDetector(init: TurnDetectorInit): TurnDetector | Promise<TurnDetector>;
}

/** `vad.turnDetector`: which module, and its options. */
export interface TurnDetectorOptions {
  /** The module's URL, resolved against `assetsPath` (or the page). */
  module: string;
  /** Handed to `createTurnDetector` as `init.options`: plain data (it crosses into the worker). */
  options?: Record<string, unknown>;
}

/** The most audio `predict` is given (s): Smart Turn's window. */
export const TURN_DETECTOR_MAX_SECONDS = 8;

/** Checks `vad.turnDetector` (who: the option's name in messages); throws a ConfigError naming what is wrong. */
export function checkTurnDetectorOptions(who: string, given: unknown): TurnDetectorOptions | undefined {
  if (given === undefined) return undefined;
  const o = given as TurnDetectorOptions;
  if (typeof o !== "object" || o === null || typeof o.module !== "string" || o.module === "") {
    throw new ConfigError(`${who} must be { module: "<URL of an ES module exporting createTurnDetector>", options? }, not ${JSON.stringify(given)}`, { service: "vad" });
  }
  if (o.options !== undefined) {
    try {
      if (typeof o.options !== "object" || o.options === null) throw new TypeError("not an object");
      structuredClone(o.options);
    } catch (err) {
      throw new ConfigError(`${who}.options must be an object of plain data (it is sent to the VAD worker): ${(err as Error).message}`, { service: "vad" });
    }
  }
  return { module: o.module, ...(o.options ? { options: o.options } : {}) };
}
