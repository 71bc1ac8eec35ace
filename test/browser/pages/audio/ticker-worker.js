// Benchmark-only clock for worklets that have no `performance`: keeps a
// shared Float64 at this worker's performance.now(), in a tight loop, until
// terminated. It occupies one core while it runs.
self.onmessage = (e) => {
  const ms = new Float64Array(e.data.buffer);
  self.postMessage("ticking");
  for (;;) ms[0] = performance.now();
};
