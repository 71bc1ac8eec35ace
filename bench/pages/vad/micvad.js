// @ricky0123/vad-web's MicVAD on the bench program, in the same kind of 16 kHz
// context: its worklet posts frames to this main thread, which runs Silero.
// ./vendor/ is written by the benchmark for its run: micvad.js is MicVAD built
// against onnxruntime-web 1.30 (see micvad-entry.js), plus vad-web's worklet and model.
import { MicVAD } from "./vendor/micvad.js";
import { buildProgram, createPlayer, onsetLatencies, playPhase } from "./program.js";

window.bench = {
  async prepare(config) {
    const program = await buildProgram(config);
    const player = createPlayer(program.samples);
    const starts = [];
    const loadStart = performance.now();
    const vad = await MicVAD.new({
      model: "v5",
      baseAssetPath: "/bench/pages/vad/vendor/",
      onnxWASMBasePath: "/dist/",
      audioContext: player.context,
      getStream: async () => player.stream,
      pauseStream: async () => {},
      resumeStream: async () => player.stream,
      ortConfig: (ort) => {
        ort.env.logLevel = "error";
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.proxy = false;
      },
      onSpeechStart: () => starts.push(performance.now()),
      startOnLoad: true,
    });
    const loadMs = performance.now() - loadStart;
    window.state = { program, player, vad, starts };
    return { loadMs, onsets: program.onsets.length, durationS: program.samples.length / 16000 };
  },
  play: playPhase,
  async finish() {
    const { program, vad, starts, run } = window.state;
    const latencies = onsetLatencies(program.onsets, run.perfOfSample, starts);
    await vad.destroy();
    return { latencies, speechStarts: starts.length };
  },
};
window.benchReady = true;
