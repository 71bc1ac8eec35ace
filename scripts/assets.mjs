// Files copied verbatim into dist/ so that dist/ is a complete `assetsPath`:
// the Silero models from @ricky0123/vad-web and onnxruntime-web's wasm runtime.
// Each entry: [source path relative to the repo, file name in dist/].
// bargein's VAD worker needs only the .wasm (it bundles ORT's glue and hands
// ORT the fetched bytes); the .mjs glue is copied for tools here that run
// onnxruntime-web with `wasmPaths` pointed at dist/ (the MicVAD benchmark) and
// is left out of the published package (package.json `files`).
// The names must match the literal URLs in src/assets/bundled-assets.ts.
export const ASSETS = [
  ["node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx", "silero_vad_v5.onnx"],
  ["node_modules/@ricky0123/vad-web/dist/silero_vad_v6.onnx", "silero_vad_v6.onnx"],
  ["node_modules/@ricky0123/vad-web/dist/silero_vad_legacy.onnx", "silero_vad_legacy.onnx"],
  ["node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm", "ort-wasm-simd-threaded.wasm"],
  ["node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.mjs"],
];
