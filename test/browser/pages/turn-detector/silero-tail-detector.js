// A test turn detector for the `turn.detector` contract (src/vad/turn-detector.ts),
// not an end-of-turn model: it shows that an app's module runs a real ONNX file
// on the utterance's audio with the worker's own onnxruntime. It runs Silero v5
// (served from assetsPath, like an app's Smart Turn file) over the last 512
// samples of the audio it is given and answers 1 − that speech probability: an
// utterance that ended in silence reads as over. `options`:
//   model: the .onnx URL, resolved against this module (default the dist's v5);
//   fixed: answer this probability instead (after running the model);
//   fail: "create" (createTurnDetector throws) or "predict" (predict throws).
export async function createTurnDetector({ ort, sampleRate, options, moduleUrl }) {
  if (options.fail === "create") throw new Error("test detector told to fail at create");
  if (sampleRate !== 16000) throw new Error(`expected 16 kHz audio, got ${sampleRate}`);
  const url = new URL(options.model ?? "/dist/silero_vad_v5.onnx", moduleUrl);
  const bytes = await (await fetch(url)).arrayBuffer();
  const session = await ort.InferenceSession.create(new Uint8Array(bytes));
  const frame = 512;
  const context = 64;
  return {
    async predict(audio) {
      if (options.fail === "predict") throw new Error("test detector told to fail at predict");
      const input = new Float32Array(context + frame);
      input.set(audio.subarray(Math.max(0, audio.length - input.length)), Math.max(0, input.length - audio.length));
      const out = await session.run({
        input: new ort.Tensor("float32", input, [1, input.length]),
        state: new ort.Tensor("float32", new Float32Array(256), [2, 1, 128]),
        sr: new ort.Tensor("int64", BigInt64Array.from([16000n]), [1]),
      });
      const speech = out.output.data[0];
      return options.fixed ?? 1 - speech;
    },
    async release() {
      await session.release();
    },
  };
}
