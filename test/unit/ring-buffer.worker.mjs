// Consumer thread for ring-buffer.test.ts: pops random-sized chunks until
// `total` samples arrived, counting any sample out of sequence.
import { parentPort, workerData } from "node:worker_threads";

const { RingBuffer } = await import(workerData.module);
const ring = new RingBuffer(workerData.buffer);
let seed = workerData.seed >>> 0;
const random = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 4294967296;
};
const scratch = new Float32Array(ring.capacity);
let received = 0;
let errors = 0;
let sum = 0;
const spin = new Int32Array(new SharedArrayBuffer(4));
while (received < workerData.total) {
  const n = ring.pop(scratch, 0, 1 + Math.floor(random() * ring.capacity));
  for (let i = 0; i < n; i++) {
    if (scratch[i] !== received + i) errors++;
    sum += scratch[i];
  }
  received += n;
  if (n === 0) Atomics.wait(spin, 0, 0, 0.05);
}
parentPort.postMessage({ errors, received, sum });
