/**
 * A single-producer, single-consumer ring of float32 samples over a
 * SharedArrayBuffer (or a plain ArrayBuffer when both ends live on one thread).
 *
 * Contract:
 * - Exactly one thread writes (`push`), exactly one thread reads (`peek`, `pop`,
 *   `skip`, `skipTo`, `clear`). Either may call the `available*` and counter
 *   getters. The producer owns the write counter, the consumer the read counter;
 *   each is published with `Atomics.store` after the data it covers is written
 *   (producer) or no longer needed (consumer), so the other side never sees a
 *   counter ahead of the data.
 * - The counters run freely over 32 bits and wrap; the capacity is a power of
 *   two so `counter & mask` indexes the storage across the wrap.
 * - No DOM and no imports, so a worklet, a worker, Node and the page can all use it.
 * - Only the constructor and `RingBuffer.create` allocate; every other method
 *   allocates nothing (they take offsets and lengths instead of subarrays).
 */
const READ = 0;
const WRITE = 1;
const HEADER_BYTES = 8;

export class RingBuffer {
  /** Number of samples the ring can hold (a power of two). */
  readonly capacity: number;
  /** The memory shared by both ends: hand it to the other thread. */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  readonly #counters: Uint32Array;
  readonly #data: Float32Array;
  readonly #mask: number;

  /** Bytes needed for a ring of at least `capacity` samples. */
  static bytesFor(capacity: number): number {
    return HEADER_BYTES + nextPowerOfTwo(capacity) * Float32Array.BYTES_PER_ELEMENT;
  }

  /**
   * Allocates a ring of at least `capacity` samples, shared when
   * SharedArrayBuffer is available and `shared` is not false. Allocates.
   */
  static create(capacity: number, shared = typeof SharedArrayBuffer === "function"): RingBuffer {
    const bytes = RingBuffer.bytesFor(capacity);
    return new RingBuffer(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  }

  /** Wraps memory made by `create` or `bytesFor` (on either thread). Allocates views. */
  constructor(buffer: SharedArrayBuffer | ArrayBuffer) {
    const capacity = (buffer.byteLength - HEADER_BYTES) / Float32Array.BYTES_PER_ELEMENT;
    if (!Number.isInteger(capacity) || capacity < 1 || nextPowerOfTwo(capacity) !== capacity) {
      throw new RangeError(`RingBuffer: ${buffer.byteLength} bytes is not 8 + 4 × a power of two`);
    }
    this.buffer = buffer;
    this.capacity = capacity;
    this.#mask = capacity - 1;
    this.#counters = new Uint32Array(buffer, 0, 2);
    this.#data = new Float32Array(buffer, HEADER_BYTES, capacity);
  }

  /** Samples ready to read. Either thread; no allocation. */
  availableRead(): number {
    return (Atomics.load(this.#counters, WRITE) - Atomics.load(this.#counters, READ)) >>> 0;
  }

  /** Samples that can be written now. Either thread; no allocation. */
  availableWrite(): number {
    return this.capacity - this.availableRead();
  }

  /** Total samples ever written, modulo 2^32. Either thread; no allocation. */
  get writeCounter(): number {
    return Atomics.load(this.#counters, WRITE);
  }

  /** Total samples ever consumed, modulo 2^32. Either thread; no allocation. */
  get readCounter(): number {
    return Atomics.load(this.#counters, READ);
  }

  /**
   * Producer: copies up to `length` samples of `source` from `offset` into the
   * ring; returns how many fit. No allocation.
   */
  push(source: Float32Array, offset = 0, length = source.length - offset): number {
    const write = Atomics.load(this.#counters, WRITE);
    const free = this.capacity - ((write - Atomics.load(this.#counters, READ)) >>> 0);
    const n = Math.min(length, free);
    const data = this.#data;
    let index = write & this.#mask;
    for (let i = 0; i < n; i++) {
      data[index] = source[offset + i];
      index = (index + 1) & this.#mask;
    }
    Atomics.store(this.#counters, WRITE, (write + n) >>> 0);
    return n;
  }

  /**
   * Consumer: copies up to `length` samples into `target` at `offset` without
   * consuming them; returns how many. No allocation.
   */
  peek(target: Float32Array, offset = 0, length = target.length - offset): number {
    const read = Atomics.load(this.#counters, READ);
    const n = Math.min(length, (Atomics.load(this.#counters, WRITE) - read) >>> 0);
    const data = this.#data;
    let index = read & this.#mask;
    for (let i = 0; i < n; i++) {
      target[offset + i] = data[index];
      index = (index + 1) & this.#mask;
    }
    return n;
  }

  /** Consumer: `peek` then `skip` the same samples. No allocation. */
  pop(target: Float32Array, offset = 0, length = target.length - offset): number {
    const n = this.peek(target, offset, length);
    this.skip(n);
    return n;
  }

  /** Consumer: drops up to `count` samples; returns how many. No allocation. */
  skip(count: number): number {
    const read = Atomics.load(this.#counters, READ);
    const n = Math.min(count, (Atomics.load(this.#counters, WRITE) - read) >>> 0);
    Atomics.store(this.#counters, READ, (read + n) >>> 0);
    return n;
  }

  /**
   * Consumer: drops everything written before the producer's `writeCounter`
   * was `counter`, if it still lies between the read and write counters
   * (otherwise it was already consumed, and nothing happens). Returns the
   * number of samples dropped. No allocation.
   */
  skipTo(counter: number): number {
    const read = Atomics.load(this.#counters, READ);
    const ahead = (counter - read) >>> 0;
    const available = (Atomics.load(this.#counters, WRITE) - read) >>> 0;
    if (ahead === 0 || ahead > available) return 0;
    Atomics.store(this.#counters, READ, counter >>> 0);
    return ahead;
  }

  /** Consumer: drops everything written so far; returns how many. No allocation. */
  clear(): number {
    return this.skip(this.capacity);
  }
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
