// A worker-driven shared clock for the benchmarks' worklet timings, since
// AudioWorkletGlobalScope may have no `performance`. Shared by capture.js and player.js.
export async function startTicker() {
  if (!crossOriginIsolated) return { buffer: undefined, stop() {} };
  const buffer = new SharedArrayBuffer(8);
  const worker = new Worker("/test/browser/pages/audio/ticker-worker.js");
  await new Promise((resolve) => {
    worker.onmessage = resolve;
    worker.postMessage({ buffer });
  });
  return { buffer, stop: () => worker.terminate() };
}
