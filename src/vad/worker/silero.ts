/**
 * Silero VAD on onnxruntime-web's wasm backend, one 512-sample 16 kHz frame at a
 * time. Worker thread only.
 *
 * v5 and v6 take a single `state` tensor and, like silero-vad's own
 * OnnxWrapper, expect each frame prefixed by the last 64 samples of the frame
 * before (the "context"), so an onset that straddles a frame boundary is seen
 * whole: input is [1, 64 + 512]. Legacy (v4) takes the bare frame and h/c states.
 *
 * Allocation: the input buffer and its tensor are allocated once and rewritten
 * per frame (ORT copies inputs into wasm memory inside `run`), so a frame costs
 * only the output tensors ORT creates. Calls must not overlap: the caller
 * awaits each `probability` before the next.
 */
import * as ort from "onnxruntime-web/wasm";
import type { VadModel } from "../../protocol/vad-messages.js";
import { VAD_FRAME_SAMPLES } from "../../protocol/frames.js";

export const CONTEXT_SAMPLES = 64;

export interface SileroModel {
  /** Speech probability (0..1) of `frame`; advances the model's state. */
  probability(frame: Float32Array): Promise<number>;
  /** Back to the state of a fresh stream (silence before, zero context). */
  reset(): void;
  release(): Promise<void>;
}

/**
 * Hands onnxruntime the wasm bytes we already fetched (with progress), with a
 * single thread and no proxy worker. Must run before the first session.
 *
 * `wasmPaths` is deliberately left unset: this worker bundles ORT's
 * `ort.wasm.bundle` build, whose Emscripten glue (the .mjs) is embedded, and
 * ORT uses the embedded glue only when no path overrides it. Setting a path
 * makes ORT `import()` the .mjs from there, and for a cross-origin assetsPath
 * (a CDN) it would fetch it into a blob: URL, which a strict CSP blocks. So
 * nothing here loads code from a URL: no CDN, no blob:, no eval.
 */
export function configureOrt(wasmBinary: ArrayBuffer): void {
  ort.env.wasm.wasmBinary = wasmBinary;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
}

export async function createSilero(model: VadModel, modelBytes: ArrayBuffer): Promise<SileroModel> {
  const session = await ort.InferenceSession.create(new Uint8Array(modelBytes), {
    executionProviders: ["wasm"],
    graphOptimizationLevel: "all",
  });
  return model === "legacy" ? new SileroLegacy(session) : new SileroV5(session);
}

const sampleRate = () => new ort.Tensor("int64", BigInt64Array.from([16000n]), [1]);

class SileroV5 implements SileroModel {
  readonly #session: ort.InferenceSession;
  readonly #input = new Float32Array(CONTEXT_SAMPLES + VAD_FRAME_SAMPLES);
  readonly #inputTensor = new ort.Tensor("float32", this.#input, [1, this.#input.length]);
  readonly #sr = sampleRate();
  #state = zeroState([2, 1, 128]);

  constructor(session: ort.InferenceSession) {
    this.#session = session;
  }

  async probability(frame: Float32Array): Promise<number> {
    // #input[0..64) still holds the previous frame's tail: the context.
    this.#input.set(frame, CONTEXT_SAMPLES);
    const out = await this.#session.run({ input: this.#inputTensor, state: this.#state, sr: this.#sr });
    this.#input.copyWithin(0, this.#input.length - CONTEXT_SAMPLES);
    this.#state = out.stateN as ort.Tensor;
    return (out.output.data as Float32Array)[0];
  }

  reset(): void {
    this.#input.fill(0);
    this.#state = zeroState([2, 1, 128]);
  }

  async release(): Promise<void> {
    await this.#session.release();
  }
}

class SileroLegacy implements SileroModel {
  readonly #session: ort.InferenceSession;
  readonly #input = new Float32Array(VAD_FRAME_SAMPLES);
  readonly #inputTensor = new ort.Tensor("float32", this.#input, [1, VAD_FRAME_SAMPLES]);
  readonly #sr = sampleRate();
  #h = zeroState([2, 1, 64]);
  #c = zeroState([2, 1, 64]);

  constructor(session: ort.InferenceSession) {
    this.#session = session;
  }

  async probability(frame: Float32Array): Promise<number> {
    this.#input.set(frame);
    const out = await this.#session.run({ input: this.#inputTensor, h: this.#h, c: this.#c, sr: this.#sr });
    this.#h = out.hn as ort.Tensor;
    this.#c = out.cn as ort.Tensor;
    return (out.output.data as Float32Array)[0];
  }

  reset(): void {
    this.#h = zeroState([2, 1, 64]);
    this.#c = zeroState([2, 1, 64]);
  }

  async release(): Promise<void> {
    await this.#session.release();
  }
}

function zeroState(dims: number[]): ort.Tensor {
  return new ort.Tensor("float32", new Float32Array(dims.reduce((a, b) => a * b, 1)), dims);
}
