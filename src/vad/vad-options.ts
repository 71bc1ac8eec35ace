/**
 * VadWorker options: vad-web's names, units and defaults, checked up front so a
 * bad value fails at construction with a ConfigError naming the option, not
 * later as odd detections. Pure (no DOM).
 */
import { ConfigError } from "../errors.js";
import type { SpeechOptions, VadModel } from "../protocol/vad-messages.js";

export interface VadWorkerOptions extends Partial<SpeechOptions> {
  /** URL folder holding vad-worker.js, the .onnx models and the onnxruntime wasm files. */
  assetsPath: string;
  /** Silero version: "v5" (default), "v6" or "legacy" (v4). */
  model?: VadModel;
  /** Model file URL, when not the shipped one in assetsPath (resolved against assetsPath). */
  modelUrl?: string;
  /** onnxruntime wasm URL, when not the one in assetsPath (resolved against assetsPath). */
  wasmUrl?: string;
  /** Attach the utterance's 16 kHz audio to `speechEnd`. Default false. */
  speechEndAudio?: boolean;
  /** While the meter is on, at most one `probability` event per this much audio (ms). Default 100. */
  meterIntervalMs?: number;
  /** How long `start()` may take to load before it fails (ms). Default 30000. */
  loadTimeoutMs?: number;
}

/** vad-web 0.0.31's FrameProcessor defaults. */
export const DEFAULT_SPEECH_OPTIONS: Readonly<SpeechOptions> = {
  positiveSpeechThreshold: 0.3,
  negativeSpeechThreshold: 0.25,
  redemptionMs: 1400,
  minSpeechMs: 400,
  preSpeechPadMs: 800,
  submitUserSpeechOnPause: false,
};

export const MODEL_FILES: Readonly<Record<VadModel, string>> = {
  v5: "silero_vad_v5.onnx",
  v6: "silero_vad_v6.onnx",
  legacy: "silero_vad_legacy.onnx",
};
export const WASM_FILE = "ort-wasm-simd-threaded.wasm";
export const WORKER_FILE = "vad-worker.js";

export type ResolvedVadOptions = SpeechOptions & {
  assetsPath: string;
  modelUrl?: string;
  wasmUrl?: string;
  model: VadModel;
  speechEndAudio: boolean;
  meterIntervalMs: number;
  loadTimeoutMs: number;
};

export function resolveVadOptions(options: VadWorkerOptions): ResolvedVadOptions {
  if (!options || typeof options.assetsPath !== "string" || options.assetsPath === "") {
    throw new ConfigError("VadWorker: `assetsPath` is required: the URL folder that holds vad-worker.js, the models and the onnxruntime wasm", { service: "vad" });
  }
  const model = options.model ?? "v5";
  if (!(model in MODEL_FILES)) {
    throw new ConfigError(`VadWorker: \`model\` must be "v5", "v6" or "legacy", not ${JSON.stringify(model)}`, { service: "vad" });
  }
  const merged: ResolvedVadOptions = {
    ...DEFAULT_SPEECH_OPTIONS,
    speechEndAudio: false,
    meterIntervalMs: 100,
    loadTimeoutMs: 30_000,
    ...definedOnly(options),
    model,
    assetsPath: options.assetsPath,
  };
  const fraction = (name: keyof ResolvedVadOptions, max = 1) => {
    const v = merged[name];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > max) {
      throw new ConfigError(`VadWorker: \`${name}\` must be a number from 0 to ${max}, got ${String(v)}`, { service: "vad" });
    }
  };
  const nonNegativeMs = (name: keyof ResolvedVadOptions) => {
    const v = merged[name];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new ConfigError(`VadWorker: \`${name}\` must be a non-negative number of milliseconds, got ${String(v)}`, { service: "vad" });
    }
  };
  fraction("positiveSpeechThreshold");
  fraction("negativeSpeechThreshold", merged.positiveSpeechThreshold);
  nonNegativeMs("redemptionMs");
  nonNegativeMs("minSpeechMs");
  nonNegativeMs("preSpeechPadMs");
  nonNegativeMs("meterIntervalMs");
  nonNegativeMs("loadTimeoutMs");
  return merged;
}

/** The folder URL, absolute and ending in "/", so file names resolve inside it. */
export function assetsFolderUrl(assetsPath: string, base: string): string {
  const folder = assetsPath.endsWith("/") ? assetsPath : `${assetsPath}/`;
  return new URL(folder, base).href;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
