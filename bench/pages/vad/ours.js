// bargein's VadWorker on the bench program, fed by the SDK's real capture
// worklet (through Microphone, with the program's MediaStream as its input):
// frames go worklet → worker over a port; this page only receives speech events.
import { Microphone, VadWorker } from "/dist/advanced.js";
import { buildProgram, createPlayer, onsetLatencies, playPhase } from "./program.js";

window.bench = {
  /** Phase 1: load, ready to play. */
  async prepare(config) {
    const program = await buildProgram(config);
    const player = createPlayer(program.samples);
    const vad = new VadWorker({ assetsPath: "/dist/" });
    const loadStart = performance.now();
    await vad.start();
    const loadMs = performance.now() - loadStart;
    // No uplink: the main thread gets no per-frame message at all.
    const mic = new Microphone({ context: player.context, assetsPath: "/dist/", input: player.stream });
    await mic.start();
    mic.connectVad(vad.framePort());
    const starts = [];
    const decided = [];
    vad.on("speechStart", (e) => {
      starts.push(performance.now());
      // The worker's decision time on this page's clock (both are epoch-based).
      decided.push(e.workerTime - performance.timeOrigin);
    });
    window.state = { program, player, vad, mic, starts, decided, loadMs };
    return { loadMs, workerLoadMs: vad.loadMs, onsets: program.onsets.length, durationS: program.samples.length / 16000 };
  },
  /** Phase 2: play in real time; resolves when the audio has ended (+ 0.5 s). */
  play: playPhase,
  /** Phase 3: latencies, then per-frame inference times from a fast replay with the meter on. */
  async finish() {
    const { program, vad, mic, starts, decided, run, player } = window.state;
    const latencies = onsetLatencies(program.onsets, run.perfOfSample, starts);
    const workerLatencies = onsetLatencies(program.onsets, run.perfOfSample, decided);
    await mic.stop();
    await vad.stop();
    await player.context.close();
    // Inference timing: a fresh worker, the program fed as fast as the worker takes it.
    const timed = new VadWorker({ assetsPath: "/dist/", meterIntervalMs: 0 });
    await timed.start();
    timed.setMeter(true);
    const inferenceMs = [];
    timed.on("probability", (p) => inferenceMs.push(p.inferenceMs));
    for (let i = 0; i + 512 <= program.samples.length; i += 512) timed.feed(program.samples.slice(i, i + 512), i);
    await timed.flush();
    await timed.stop();
    return { latencies, workerLatencies, speechStarts: starts.length, inferenceMs };
  },
};
window.benchReady = true;
