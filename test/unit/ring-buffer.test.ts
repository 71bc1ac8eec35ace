// RingBuffer, tested in the manner of padenot/ringbuf.js: a seeded PRNG picks
// chunk sizes, each case wraps the storage about 100 times, canary values sit
// around every destination, and a real second thread (worker_threads) reads
// while this one writes.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { buildSync } from "esbuild";
import { describe, expect, test } from "vitest";
import { RingBuffer } from "../../src/audio/ring-buffer.js";
import { prng } from "../lib/prng.mjs";


const CANARY = -12345.5;

describe("RingBuffer", () => {
  test("rounds the capacity up to a power of two and starts empty", () => {
    const ring = RingBuffer.create(1000);
    expect(ring.capacity).toBe(1024);
    expect(ring.availableRead()).toBe(0);
    expect(ring.availableWrite()).toBe(1024);
    expect(ring.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(() => new RingBuffer(new ArrayBuffer(8 + 4 * 1000))).toThrow(RangeError);
  });

  for (const [seed, capacity] of [
    [1, 64],
    [2, 128],
    [3, 1024],
    [4, 4096],
  ] as const) {
    test(`random pushes and pops keep order across ~100 wraps (seed ${seed}, capacity ${capacity})`, () => {
      const random = prng(seed);
      const ring = RingBuffer.create(capacity);
      const total = capacity * 100;
      const scratch = new Float32Array(capacity + 2);
      let written = 0;
      let read = 0;
      while (read < total) {
        const want = Math.floor(random() * (capacity + 1));
        if (random() < 0.5) {
          // Write a chunk that continues the sequence 0, 1, 2, …; only what fits goes in.
          const free = ring.availableWrite();
          const chunk = new Float32Array(want + 2);
          chunk.fill(CANARY);
          for (let i = 0; i < want; i++) chunk[i + 1] = written + i;
          const n = ring.push(chunk, 1, want);
          expect(n).toBe(Math.min(want, free));
          written += n;
        } else {
          // Read into the middle of a canary-filled buffer: nothing outside [1, 1+n) may change.
          scratch.fill(CANARY);
          const before = ring.availableRead();
          const n = ring.pop(scratch, 1, Math.min(want, capacity));
          expect(n).toBe(Math.min(want, before));
          expect(scratch[0]).toBe(CANARY);
          expect(scratch[n + 1]).toBe(CANARY);
          for (let i = 0; i < n; i++) {
            if (scratch[i + 1] !== read + i) throw new Error(`sample ${read + i} read as ${scratch[i + 1]}`);
          }
          read += n;
        }
        expect(ring.availableRead()).toBe(written - read);
      }
      expect(ring.readCounter).toBe(read >>> 0);
    });
  }

  test("peek does not consume; skip, skipTo and clear drop exactly what they say", () => {
    const ring = RingBuffer.create(16);
    const src = Float32Array.from({ length: 10 }, (_, i) => i + 1);
    ring.push(src);
    const out = new Float32Array(4);
    expect(ring.peek(out)).toBe(4);
    expect(Array.from(out)).toEqual([1, 2, 3, 4]);
    expect(ring.availableRead()).toBe(10);
    expect(ring.skip(3)).toBe(3);
    ring.pop(out, 0, 1);
    expect(out[0]).toBe(4);
    // skipTo a counter inside [read, write): drops up to it.
    expect(ring.skipTo(6)).toBe(2);
    ring.pop(out, 0, 1);
    expect(out[0]).toBe(7);
    // A counter already consumed, or beyond what was written, drops nothing.
    expect(ring.skipTo(3)).toBe(0);
    expect(ring.skipTo(20)).toBe(0);
    expect(ring.clear()).toBe(3);
    expect(ring.availableRead()).toBe(0);
  });

  test("counters wrap past 2^32 without losing the distance between them", () => {
    const buffer = new SharedArrayBuffer(RingBuffer.bytesFor(8));
    const counters = new Uint32Array(buffer, 0, 2);
    counters[0] = 0xfffffffc; // read
    counters[1] = 0xfffffffc; // write
    const ring = new RingBuffer(buffer);
    expect(ring.push(Float32Array.from([1, 2, 3, 4, 5, 6]))).toBe(6);
    expect(ring.writeCounter).toBe(2); // wrapped
    expect(ring.availableRead()).toBe(6);
    const out = new Float32Array(6);
    expect(ring.pop(out)).toBe(6);
    expect(Array.from(out)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test("works over a plain ArrayBuffer for the single-thread (MessagePort) case", () => {
    const ring = RingBuffer.create(32, false);
    expect(ring.buffer).toBeInstanceOf(ArrayBuffer);
    ring.push(Float32Array.from([0.5, -0.5]));
    const out = new Float32Array(2);
    ring.pop(out);
    expect(Array.from(out)).toEqual([0.5, -0.5]);
  });

  test("a real second thread reads, in order, everything this thread writes", async () => {
    // The worker runs the transpiled ring buffer, a real OS thread on the shared memory.
    const dir = mkdtempSync(join(tmpdir(), "ring-"));
    const module = join(dir, "ring-buffer.mjs");
    buildSync({ entryPoints: ["src/audio/ring-buffer.ts"], outfile: module, format: "esm", logLevel: "error" });
    const ring = RingBuffer.create(256);
    const total = 256 * 400;
    const worker = new Worker(new URL("./ring-buffer.worker.mjs", import.meta.url), {
      workerData: { module, buffer: ring.buffer, total, seed: 7 },
    });
    const result = new Promise<{ errors: number; received: number; sum: number }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    const random = prng(11);
    const chunk = new Float32Array(300);
    let written = 0;
    let expectedSum = 0;
    while (written < total) {
      const want = Math.min(total - written, 1 + Math.floor(random() * 300));
      for (let i = 0; i < want; i++) chunk[i] = written + i;
      const n = ring.push(chunk, 0, want);
      for (let i = 0; i < n; i++) expectedSum += written + i;
      written += n;
      if (n < want) await new Promise((r) => setImmediate(r));
    }
    const { errors, received, sum } = await result;
    await worker.terminate();
    expect(errors).toBe(0);
    expect(received).toBe(total);
    expect(sum).toBe(expectedSum);
  });
});
