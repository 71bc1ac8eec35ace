// Bundled by bench/vad.bench.mjs (rollup, at bench time) into the MicVAD page's
// script: @ricky0123/vad-web's MicVAD built against the same onnxruntime-web
// (1.30) as bargein, because vad-web's own bundle.min.js embeds ORT 1.22,
// whose JS does not match the 1.30 wasm served from dist/.
export { MicVAD } from "@ricky0123/vad-web";
