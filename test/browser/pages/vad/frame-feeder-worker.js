// Stands in for the capture worklet in tests: posts 512-sample 16 kHz frames
// (VadFrameMessage, transferred) to the VAD worker's frame port from its own
// thread, so the page's main thread carries no per-frame audio.
// Message in: { port, samples: Float32Array, paceMs } ; out: { kind: "done", frames }.
self.onmessage = async ({ data }) => {
  const { port, samples, paceMs } = data;
  const FRAME = 512;
  const frames = Math.floor(samples.length / FRAME);
  const started = performance.now();
  for (let i = 0; i < frames; i++) {
    const frame = samples.slice(i * FRAME, (i + 1) * FRAME);
    port.postMessage({ kind: "vad-frame", frame, sampleIndex: i * FRAME, contextTime: (i * FRAME) / 16000 }, [frame.buffer]);
    if (paceMs > 0) {
      const due = started + (i + 1) * paceMs;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    }
  }
  self.postMessage({ kind: "done", frames });
};
