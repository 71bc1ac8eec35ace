/**
 * The default URL of each runtime file: beside bargein's own bundle in dist/.
 *
 * Every URL is written as `new URL("./<file>", import.meta.url)` with a
 * literal file name, because that exact form is what bundlers recognise as an
 * asset reference: Vite (8) and webpack (5) copy the file into the app's build,
 * under a hashed name, and rewrite the URL, even from inside node_modules. A
 * computed name or a folder (`new URL("./", import.meta.url)`) is left as is
 * and points at nothing in a production build. Unbundled (a page importing
 * dist/bargein.js, the UMD build), the URLs resolve beside the loaded file.
 *
 * The names are relative to dist/bargein.js (and dist/testing.js), not to
 * this source file. A bundler copies all three models, since any may be
 * chosen at run time; only the chosen one is fetched.
 */
import type { VadModel } from "../protocol/vad-messages.js";

/** The runtime files (asset-urls.ts's AssetName; spelled out here so this module imports nothing of it). */
type BundledAsset = "captureWorklet" | "playbackWorklet" | "vadWorker" | "wasm" | "model";

export function bundledAssetUrl(name: BundledAsset, model: VadModel): string {
  switch (name) {
    case "captureWorklet":
      return new URL("./capture-worklet.js", import.meta.url).href;
    case "playbackWorklet":
      return new URL("./playback-worklet.js", import.meta.url).href;
    case "vadWorker":
      return new URL("./vad-worker.js", import.meta.url).href;
    case "wasm":
      return new URL("./ort-wasm-simd-threaded.wasm", import.meta.url).href;
    case "model":
      if (model === "v6") return new URL("./silero_vad_v6.onnx", import.meta.url).href;
      if (model === "legacy") return new URL("./silero_vad_legacy.onnx", import.meta.url).href;
      return new URL("./silero_vad_v5.onnx", import.meta.url).href;
  }
}
