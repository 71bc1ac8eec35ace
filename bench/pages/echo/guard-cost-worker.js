// The echo guard's cost per render quantum, in a worker of the same Chromium:
// the capture side of the guard (worklets/capture-echo.ts: both resamplers
// and the EchoGuard) runs here on a recorded mic and reference, quantum by
// quantum as the capture worklet runs it, timed with performance.now()
// (5 µs resolution in a cross-origin-isolated page). bench/echo.bench.mjs
// bundles this file with esbuild into build/ (the render thread itself has no
// clock finer than Date.now()).
import { CaptureEcho } from "../../../worklets/capture-echo.ts";
import { echoTap, writeTap } from "../../../worklets/echo-tap.ts";

const QUANTUM = 128;

self.onmessage = (e) => {
  const { mic, ref, rate } = e.data;
  const tapName = "guard-cost";
  const echo = new CaptureEcho(rate, { tap: tapName });
  const tap = echoTap(tapName);
  const quanta = Math.floor(mic.length / QUANTUM);
  const costUs = new Float64Array(quanta);
  const micQuantum = new Float32Array(QUANTUM);
  const erle = [];
  for (let q = 0; q < quanta; q++) {
    const frame = q * QUANTUM;
    // Playback renders quantum q; the capture side reads the quantum before its own (echo-tap.ts).
    writeTap(tap, frame, ref.subarray(frame, frame + QUANTUM));
    micQuantum.set(mic.subarray(frame, frame + QUANTUM));
    const start = performance.now();
    echo.process(micQuantum, frame);
    costUs[q] = (performance.now() - start) * 1000;
    if (q % 375 === 0) erle.push({ atS: frame / rate, erleDb: echo.state.erleDb, converged: echo.state.converged, delayMs: echo.state.delayMs });
  }
  self.postMessage({ quanta, costUs: Array.from(costUs), trace: erle, resolutionHint: self.crossOriginIsolated ? "5 µs (cross-origin isolated)" : "100 µs (not isolated)" });
};
