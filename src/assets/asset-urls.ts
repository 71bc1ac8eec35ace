/**
 * Where bargein's five runtime files come from: the capture and playback
 * worklets, the VAD worker, the Silero model and onnxruntime's wasm. Pure (no
 * DOM beyond reading `location` and `document.baseURI`); main thread.
 *
 * Each URL is resolved in this order:
 * 1. `assets.<name>`, when given (a bundler's `?url` import, a CDN URL, …),
 *    resolved against the page;
 * 2. the file's name inside `assetsPath`, when given (one folder that serves
 *    bargein's dist/);
 * 3. the file beside bargein's own bundle (see bundled-assets.ts), which Vite
 *    and webpack 5 copy into the app's build.
 */
import { ConfigError } from "../errors.js";
import type { VadModel } from "../protocol/vad-messages.js";
import { bundledAssetUrl } from "./bundled-assets.js";

/**
 * One URL per runtime file, each overriding `assetsPath` for that file alone.
 * A relative URL resolves against the page, as the URLs a bundler's `?url`
 * import gives ("/assets/capture-worklet-3f2a.js") do.
 */
export interface AssetUrls {
  /** The microphone's AudioWorklet module (bargein's dist/capture-worklet.js, export "bargein/capture-worklet"). */
  captureWorklet?: string | URL;
  /** The player's AudioWorklet module (dist/playback-worklet.js, export "bargein/playback-worklet"). */
  playbackWorklet?: string | URL;
  /** The VAD's module worker (dist/vad-worker.js, export "bargein/vad-worker"). Self-contained: copy it, don't re-bundle it. */
  vadWorker?: string | URL;
  /**
   * The Silero model file (.onnx). Default: the shipped file of `vad.model`
   * ("bargein/silero_vad_v5.onnx", "…_v6.onnx", "…_legacy.onnx"). When you set
   * it, set `vad.model` to the version of that file: v5/v6 and legacy take
   * different inputs.
   */
  model?: string | URL;
  /** onnxruntime-web's wasm binary (dist/ort-wasm-simd-threaded.wasm, export "bargein/ort-wasm-simd-threaded.wasm"). No .mjs glue is needed: the VAD worker embeds it. */
  wasm?: string | URL;
}

export type AssetName = keyof AssetUrls;

/** Where a component looks for its files: per-asset URLs, else one folder, else beside the bundle. */
export interface AssetLocation {
  /** Per-file URLs; each overrides `assetsPath` for its file. */
  assets?: AssetUrls;
  /** URL folder holding bargein's dist/ files, for the files `assets` does not name. */
  assetsPath?: string;
}

export const ASSET_NAMES: readonly AssetName[] = ["captureWorklet", "playbackWorklet", "vadWorker", "model", "wasm"];

export const MODEL_FILES: Readonly<Record<VadModel, string>> = {
  v5: "silero_vad_v5.onnx",
  v6: "silero_vad_v6.onnx",
  legacy: "silero_vad_legacy.onnx",
};

/** File names in dist/ (and the package's export subpaths, for the hint in errors). */
const FILES: Readonly<Record<Exclude<AssetName, "model">, string>> = {
  captureWorklet: "capture-worklet.js",
  playbackWorklet: "playback-worklet.js",
  vadWorker: "vad-worker.js",
  wasm: "ort-wasm-simd-threaded.wasm",
};
const EXPORTS: Readonly<Record<Exclude<AssetName, "model">, string>> = {
  captureWorklet: "bargein/capture-worklet",
  playbackWorklet: "bargein/playback-worklet",
  vadWorker: "bargein/vad-worker",
  wasm: "bargein/ort-wasm-simd-threaded.wasm",
};

/** What each asset is, in words, for error messages. */
export const ASSET_LABELS: Readonly<Record<AssetName, string>> = {
  captureWorklet: "capture worklet",
  playbackWorklet: "playback worklet",
  vadWorker: "VAD worker",
  model: "Silero VAD model",
  wasm: "onnxruntime wasm",
};

export function assetFile(name: AssetName, model: VadModel = "v5"): string {
  return name === "model" ? MODEL_FILES[model] : FILES[name];
}

/**
 * What to set when `name` failed to load, for the end of an error message:
 * the per-asset option (with the Vite import that gives its URL) or the folder.
 */
export function assetHint(name: AssetName, model: VadModel = "v5"): string {
  const subpath = name === "model" ? `bargein/${MODEL_FILES[model]}` : EXPORTS[name];
  return (
    `set \`assets.${name}\` to the URL of ${assetFile(name, model)} (with Vite: \`import url from "${subpath}?url"\`), ` +
    "or `assetsPath` to a URL folder that serves bargein's dist/ files (see \"Bundlers\" in bargein's README)"
  );
}

/** Throws a ConfigError for anything in `assets` that is not one of the five names or not a URL. */
export function checkAssetUrls(owner: string, assets: AssetUrls | undefined): void {
  if (assets === undefined) return;
  if (assets === null || typeof assets !== "object") {
    throw new ConfigError(`${owner}: \`assets\` must be an object of URLs (${ASSET_NAMES.join(", ")}), got ${String(assets)}`);
  }
  for (const [key, value] of Object.entries(assets)) {
    if (!(ASSET_NAMES as readonly string[]).includes(key)) {
      throw new ConfigError(`${owner}: \`assets.${key}\` is not an asset; the assets are ${ASSET_NAMES.join(", ")}`);
    }
    if (value !== undefined && typeof value !== "string" && !(value instanceof URL)) {
      throw new ConfigError(`${owner}: \`assets.${key}\` must be a URL (a string or URL), got ${typeof value}`);
    }
  }
}

/** The absolute URL `name` loads from (see the order in this file's header). */
export function resolveAssetUrl(name: AssetName, where: AssetLocation, model: VadModel = "v5"): string {
  const base = pageBase();
  const explicit = where.assets?.[name];
  if (explicit !== undefined && explicit !== "") {
    try {
      return new URL(String(explicit), base).href;
    } catch (cause) {
      throw new ConfigError(`\`assets.${name}\` is not a URL: ${JSON.stringify(String(explicit))}`, { cause });
    }
  }
  if (where.assetsPath !== undefined) {
    return new URL(assetFile(name, model), assetsFolderUrl(where.assetsPath, base)).href;
  }
  const url = bundledAssetUrl(name, model);
  // A bundler that turned bargein's `import.meta.url` into the build machine's
  // path (or a page opened from disk with bargein elsewhere) leaves a file: URL
  // the page cannot load: say so now rather than as a failed fetch later.
  if (url.startsWith("file:") && !base.startsWith("file:")) {
    throw new ConfigError(
      `the ${ASSET_LABELS[name]} would load from ${url}, a file on the build machine (the bundler did not copy bargein's assets): ${assetHint(name, model)}`,
    );
  }
  return url;
}

/** The folder URL, absolute and ending in "/", so file names resolve inside it. */
export function assetsFolderUrl(assetsPath: string, base: string = pageBase()): string {
  if (typeof assetsPath !== "string" || assetsPath === "") {
    throw new ConfigError(`\`assetsPath\` must be a non-empty URL folder (e.g. "/bargein/"), got ${JSON.stringify(assetsPath)}`);
  }
  const folder = assetsPath.endsWith("/") ? assetsPath : `${assetsPath}/`;
  try {
    return new URL(folder, base).href;
  } catch (cause) {
    throw new ConfigError(`\`assetsPath\` is not a URL: ${JSON.stringify(assetsPath)}`, { cause });
  }
}

/** What relative URLs resolve against: the document's base, else the worker's location. */
export function pageBase(): string {
  return globalThis.document?.baseURI ?? globalThis.location?.href ?? "http://localhost/";
}
