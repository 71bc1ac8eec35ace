/**
 * Where each runtime file loads from: `assets.<name>` over `assetsPath` over
 * the file beside the bundle, and errors that name the option to set.
 */
import { describe, expect, it } from "vitest";
import { assetHint, checkAssetUrls, resolveAssetUrl } from "../../src/assets/asset-urls.js";
import { ConfigError } from "../../src/errors.js";
import { vadAssetUrls, resolveVadOptions } from "../../src/vad/vad-options.js";

// No document here: relative URLs resolve against this base (a page's location).
(globalThis as any).location = { href: "https://app.example/voice/index.html" };

describe("resolveAssetUrl", () => {
  it("takes a per-asset URL over assetsPath, resolved against the page", () => {
    const where = { assetsPath: "/bargein/", assets: { playbackWorklet: "/assets/playback-worklet-3f2a9c1d.js" } };
    expect(resolveAssetUrl("playbackWorklet", where)).toBe("https://app.example/assets/playback-worklet-3f2a9c1d.js");
    expect(resolveAssetUrl("captureWorklet", where)).toBe("https://app.example/bargein/capture-worklet.js");
    expect(resolveAssetUrl("model", { assets: { model: new URL("https://cdn.example/m.onnx") } })).toBe("https://cdn.example/m.onnx");
  });

  it("puts each file inside assetsPath, with or without the trailing slash, relative to the page", () => {
    expect(resolveAssetUrl("vadWorker", { assetsPath: "static/bargein" })).toBe("https://app.example/voice/static/bargein/vad-worker.js");
    expect(resolveAssetUrl("wasm", { assetsPath: "https://cdn.example/b/" })).toBe("https://cdn.example/b/ort-wasm-simd-threaded.wasm");
    expect(resolveAssetUrl("model", { assetsPath: "/b/" }, "v6")).toBe("https://app.example/b/silero_vad_v6.onnx");
    expect(resolveAssetUrl("model", { assetsPath: "/b/" }, "legacy")).toBe("https://app.example/b/silero_vad_legacy.onnx");
  });

  it("refuses a default that a bundler left pointing at the build machine's disk", () => {
    // Unbundled in Node, the default resolves beside this source file: a file: URL the page could not load.
    expect(() => resolveAssetUrl("captureWorklet", {})).toThrow(ConfigError);
    expect(() => resolveAssetUrl("captureWorklet", {})).toThrow(/assets\.captureWorklet.*assetsPath/);
  });

  it("says which option to set, with the Vite import that gives the URL", () => {
    expect(assetHint("vadWorker")).toContain('`assets.vadWorker`');
    expect(assetHint("vadWorker")).toContain('import url from "bargein/vad-worker?url"');
    expect(assetHint("model", "v6")).toContain("bargein/silero_vad_v6.onnx?url");
    expect(assetHint("wasm")).toContain("`assetsPath`");
  });
});

describe("checkAssetUrls", () => {
  it.each([
    [{ captureWorkletUrl: "/x.js" }, "assets.captureWorkletUrl"],
    [{ model: 42 }, "assets.model"],
    ["/dist/", "`assets` must be an object"],
  ])("rejects %j with a ConfigError naming %s", (assets, text) => {
    expect(() => checkAssetUrls("Player", assets as never)).toThrow(ConfigError);
    expect(() => checkAssetUrls("Player", assets as never)).toThrow(text);
  });

  it("accepts strings, URLs and gaps", () => {
    expect(() => checkAssetUrls("Player", { model: new URL("https://x/m.onnx"), wasm: undefined, vadWorker: "/w.js" })).not.toThrow();
  });
});

describe("the VAD's deprecated modelUrl and wasmUrl", () => {
  it("still resolve against assetsPath, and lose to assets", () => {
    const o = resolveVadOptions({ assetsPath: "/dist/", modelUrl: "silero_vad_v9.onnx", wasmUrl: "w.wasm", assets: { wasm: "/x.wasm" } });
    expect(vadAssetUrls(o)).toEqual({ model: "https://app.example/dist/silero_vad_v9.onnx", wasm: "/x.wasm" });
  });
});

describe("the bundled defaults", () => {
  it("name exactly the files the build puts beside dist/bargein.js", async () => {
    const { readFileSync } = await import("node:fs");
    const source = readFileSync(new URL("../../src/assets/bundled-assets.ts", import.meta.url), "utf8");
    const literal = [...source.matchAll(/new URL\("\.\/([\w.-]+)", import\.meta\.url\)/g)].map((m) => m[1]).sort();
    // @ts-ignore: a plain ESM module shared with rollup.config.js
    const { ASSETS } = await import("../../scripts/assets.mjs");
    const rollupConfig = readFileSync(new URL("../../rollup.config.js", import.meta.url), "utf8");
    const entries = [...rollupConfig.matchAll(/"dist\/([\w-]+\.js)"/g)].map((m) => m[1]);
    const built = new Set([...entries, ...ASSETS.map(([, to]: [string, string]) => to)]);
    expect(literal).toEqual(["capture-worklet.js", "ort-wasm-simd-threaded.wasm", "playback-worklet.js", "silero_vad_legacy.onnx", "silero_vad_v5.onnx", "silero_vad_v6.onnx", "vad-worker.js"]);
    for (const file of literal) expect(built.has(file), `${file} is built into dist/`).toBe(true);
  });
});
