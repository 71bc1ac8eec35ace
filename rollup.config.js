// Builds bargein for npm (ESM: the root entry, bargein/advanced, bargein/testing,
// bargein/react), for a <script> tag (UMD, global `Bargein`), and each worklet
// and the VAD worker as a self-contained entry under dist/.
// TypeScript is transpiled by esbuild; types come from `tsc` (see scripts/build.mjs),
// because @rollup/plugin-typescript does not work with TypeScript 7.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import commonjs from "@rollup/plugin-commonjs";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import esbuild from "rollup-plugin-esbuild";
import { ASSETS } from "./scripts/assets.mjs";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));

const plugins = (target = "es2022") => [
  nodeResolve({ browser: true }),
  commonjs(),
  esbuild({ target, sourceMap: true }),
  replaceVersion(),
];

/** Swaps the version placeholder in src/version.ts for the package's version. */
function replaceVersion() {
  return {
    name: "bargein-version",
    transform(code, id) {
      if (!id.endsWith("version.ts") && !id.endsWith("version.js")) return null;
      return { code: code.replace("__BARGEIN_VERSION__", pkg.version), map: null };
    },
  };
}

/** Copies the model and wasm files so dist/ can be served as `assetsPath`. */
function copyAssets() {
  return {
    name: "bargein-assets",
    writeBundle() {
      mkdirSync("dist", { recursive: true });
      for (const [from, to] of ASSETS) copyFileSync(from, `dist/${basename(to)}`);
    },
  };
}

/**
 * bargein/advanced, bargein/testing and bargein/react reach the SDK through its
 * public entries (src/index.ts, src/advanced.ts). In dist/ such an import is
 * that entry's own bundle (`./bargein.js`, `./advanced.js`), not a copy bundled
 * in: an app then has one VoiceSession class and one error family, so
 * `instanceof` agrees between the entry points. src/errors.ts is all public
 * (the root entry re-exports each of its values), so the internal helpers
 * bundled into the other entries throw the main bundle's errors too.
 * `entries` maps a source file to the bundle that stands for it.
 */
function sdkFromBundles(entries) {
  const byPath = new Map(Object.entries(entries).map(([src, bundle]) => [fileURLToPath(new URL(src, import.meta.url)), bundle]));
  return {
    name: "bargein-sdk-from-bundles",
    async resolveId(source, importer, options) {
      if (!importer) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      const bundle = resolved && byPath.get(resolved.id);
      return bundle && resolved.id !== importer ? { id: bundle, external: true } : null;
    },
  };
}

const ROOT_BUNDLE = { "./src/index.ts": "./bargein.js", "./src/errors.ts": "./bargein.js" };
const PUBLIC_BUNDLES = { ...ROOT_BUNDLE, "./src/advanced.ts": "./advanced.js" };

const selfContained = (input, file, extra = {}) => ({
  input,
  output: { file, format: "es", sourcemap: true, inlineDynamicImports: true },
  plugins: plugins(),
  ...extra,
});

export default [
  { input: "src/index.ts", output: { file: "dist/bargein.js", format: "es", sourcemap: true }, plugins: [...plugins(), copyAssets()] },
  // The <script> tag's global `Bargein`: the root entry's names, and bargein/advanced's as `Bargein.advanced` (one bundle, no second copy).
  { input: "src/umd.ts", output: { file: "dist/bargein.umd.js", format: "umd", name: "Bargein", sourcemap: true }, plugins: plugins() },
  { ...selfContained("src/advanced.ts", "dist/advanced.js"), plugins: [sdkFromBundles(ROOT_BUNDLE), ...plugins()] },
  { ...selfContained("src/testing/index.ts", "dist/testing.js"), plugins: [sdkFromBundles(PUBLIC_BUNDLES), ...plugins()] },
  // bargein/react: the app's React (a peer dependency) stays an import, never bundled.
  { ...selfContained("src/react/index.ts", "dist/react.js"), plugins: [sdkFromBundles(PUBLIC_BUNDLES), ...plugins()], external: ["react"] },
  selfContained("worklets/capture-worklet.ts", "dist/capture-worklet.js"),
  selfContained("worklets/playback-worklet.ts", "dist/playback-worklet.js"),
  selfContained("src/vad/worker/vad-worker.ts", "dist/vad-worker.js"),
];
