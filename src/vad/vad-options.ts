/**
 * VadWorker options: vad-web's names, units and defaults, checked up front so a
 * bad value fails at construction with a ConfigError naming the option, not
 * later as odd detections. Pure (no DOM).
 */
import { DEFAULTS } from "../defaults.js";
import { MODEL_FILES, assetsFolderUrl, checkAssetUrls, type AssetUrls } from "../assets/asset-urls.js";
import { ConfigError } from "../errors.js";
import type { OnsetCueSettings, SpeechOptions, VadModel } from "../protocol/vad-messages.js";
import { resolveOnsetPause, type OnsetPauseOptions } from "./onset-options.js";
import { checkTurnDetectorOptions, type TurnDetectorOptions } from "./turn-detector.js";

export interface VadWorkerOptions extends Partial<SpeechOptions> {
  /**
   * URL folder holding bargein's dist/ files (vad-worker.js, the .onnx models,
   * the onnxruntime wasm). Default: beside bargein's bundle, which Vite and
   * webpack 5 copy into the build.
   */
  assetsPath?: string;
  /**
   * Per-file URLs: the VAD reads `assets.vadWorker`, `assets.model` and
   * `assets.wasm`; each overrides `assetsPath` for its file.
   */
  assets?: AssetUrls;
  /** Silero version: "v5" (default), "v6" or "legacy" (v4). With `assets.model`, the version of that file. */
  model?: VadModel;
  /** @deprecated Use `assets.model`. Model file URL, resolved against assetsPath (or the page). */
  modelUrl?: string;
  /** @deprecated Use `assets.wasm`. onnxruntime wasm URL, resolved against assetsPath (or the page). */
  wasmUrl?: string;
  /** Attach the utterance's 16 kHz audio to `speechEnd`. Default false. */
  speechEndAudio?: boolean;
  /**
   * The onset cue (while auto-pause is armed): on a sudden rise of the mic's
   * level, before Silero calls it speech, duck the bot and silence it once
   * the sound turns speech-like, or (`{ action: "pause" }`) silence it at
   * once; with no speech the bot plays on as before (src/vad/onset-cue.ts).
   * On by default: real voices that begin with a fricative or a breath reach
   * Silero's threshold only well after they begin. `true` takes the
   * defaults of OnsetPauseOptions; an object sets some of them.
   * @defaultValue true
   */
  onsetPause?: boolean | OnsetPauseOptions;
  /** While the meter is on, at most one `probability` event per this much audio (ms). Default 100. */
  meterIntervalMs?: number;
  /** How long `start()` may take to load before it fails (ms). Default 30000. */
  loadTimeoutMs?: number;
  /**
   * `true`: `start()` resolves once the model is ready, and no frame is
   * judged before. `false`: `start()` resolves as soon as the worker runs, a
   * level-based fallback (src/vad/level-voice.ts) judges the frames until
   * the model is ready, and `ready` says when it takes over (`loadError` if
   * it never does). The session sets `false` (its `vad.waitForModel`).
   * @defaultValue true
   */
  waitForModel?: boolean;
  /**
   * The app's own end-of-turn model, run in the worker on each utterance's
   * audio at its end: `{ module, options }`, the URL of an ES module that
   * exports `createTurnDetector` (resolved against `assetsPath`, or the page).
   * Each verdict is a `turnPrediction` event. The contract:
   * src/vad/turn-detector.ts and README, "Your own turn detector".
   */
  turnDetector?: TurnDetectorOptions;
}

/** vad-web 0.0.31's FrameProcessor defaults: a VadWorker on its own behaves as vad-web does. */
export const DEFAULT_SPEECH_OPTIONS: Readonly<SpeechOptions> = {
  positiveSpeechThreshold: DEFAULTS.vadWorker.positiveSpeechThreshold,
  negativeSpeechThreshold: DEFAULTS.vadWorker.negativeSpeechThreshold,
  redemptionMs: DEFAULTS.vadWorker.redemptionMs,
  minSpeechMs: DEFAULTS.vadWorker.minSpeechMs,
  preSpeechPadMs: DEFAULTS.vadWorker.preSpeechPadMs,
  submitUserSpeechOnPause: DEFAULTS.vadWorker.submitUserSpeechOnPause,
};

export type ResolvedVadOptions = SpeechOptions & {
  assetsPath?: string;
  assets?: AssetUrls;
  modelUrl?: string;
  wasmUrl?: string;
  model: VadModel;
  speechEndAudio: boolean;
  onsetPause: OnsetCueSettings | null;
  meterIntervalMs: number;
  loadTimeoutMs: number;
  waitForModel: boolean;
  turnDetector?: TurnDetectorOptions;
};

export function resolveVadOptions(options: VadWorkerOptions): ResolvedVadOptions {
  if (!options || typeof options !== "object") {
    throw new ConfigError("VadWorker: pass an options object (`{}` loads the files beside bargein's bundle)", { service: "vad" });
  }
  if (options.assetsPath !== undefined && (typeof options.assetsPath !== "string" || options.assetsPath === "")) {
    throw new ConfigError(
      `VadWorker: \`assetsPath\` must be the URL folder that holds vad-worker.js, the models and the onnxruntime wasm (or leave it out), got ${JSON.stringify(options.assetsPath)}`,
      { service: "vad" },
    );
  }
  checkAssetUrls("VadWorker", options.assets);
  const model = options.model ?? DEFAULTS.vadWorker.model;
  if (!(model in MODEL_FILES)) {
    throw new ConfigError(`VadWorker: \`model\` must be "v5", "v6" or "legacy", not ${JSON.stringify(model)}`, { service: "vad" });
  }
  const merged: ResolvedVadOptions = {
    ...DEFAULT_SPEECH_OPTIONS,
    speechEndAudio: DEFAULTS.vadWorker.speechEndAudio,
    meterIntervalMs: DEFAULTS.vadWorker.meterIntervalMs,
    loadTimeoutMs: DEFAULTS.vadWorker.loadTimeoutMs,
    waitForModel: DEFAULTS.vadWorker.waitForModel,
    ...(definedOnly(options) as Omit<Partial<ResolvedVadOptions>, "onsetPause">),
    model,
    onsetPause: resolveOnsetPause(options.onsetPause),
    assetsPath: options.assetsPath,
    turnDetector: checkTurnDetectorOptions("VadWorker: `turnDetector`", options.turnDetector),
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
  if (typeof merged.waitForModel !== "boolean") {
    throw new ConfigError(`VadWorker: \`waitForModel\` must be true or false, got ${JSON.stringify(merged.waitForModel)}`, { service: "vad" });
  }
  return merged;
}

/**
 * The deprecated `modelUrl` / `wasmUrl` as per-asset URLs: they resolved
 * against assetsPath, and still do; `assets` wins over them.
 */
export function vadAssetUrls(options: ResolvedVadOptions): AssetUrls {
  const legacy = (url: string | undefined) =>
    url === undefined ? undefined : options.assetsPath === undefined ? url : new URL(url, assetsFolderUrl(options.assetsPath)).href;
  return { ...definedOnly({ model: legacy(options.modelUrl), wasm: legacy(options.wasmUrl) }), ...definedOnly(options.assets ?? {}) };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
