/**
 * LLM admission: a bounded request queue with fixed concurrency, in front of
 * any LlmProvider. Each request has a deadline that is checked before it is
 * sent, so an expired request never reaches the server. Queue wait is measured
 * apart from generation time: a slow reply and a long queue are different
 * problems. Cancellation is the request's AbortSignal, queued or running.
 */
import { BargeinError, ConfigError, OverloadError } from "../errors.js";
import type { ChatMessage, LlmProvider } from "../providers/types.js";

export interface AdmissionOptions {
  /** Requests running at once. Default 1. */
  concurrency?: number;
  /** Requests waiting at most; one more is refused with an OverloadError. Default 8. */
  maxQueue?: number;
  /** A request not sent within this many ms of being made is refused. Default 10000. */
  deadlineMs?: number;
  /** The clock, in ms. Default performance.now. */
  now?: () => number;
}

export interface AdmissionMetrics {
  running: number;
  queued: number;
  admitted: number;
  rejectedFull: number;
  expired: number;
  /** p95 over the last 256 requests, ms from the call to the request being sent. */
  queueWaitMsP95: number;
  /** p95 over the last 256 completed requests, ms from sending to the last token. */
  generationMsP95: number;
}

/** The request was still queued when its deadline passed; it was never sent. */
export class DeadlineExceededError extends BargeinError {}

interface Waiter {
  enqueuedAt: number;
  deadline: number;
  start: () => void;
  fail: (e: unknown) => void;
}

export class LlmAdmission {
  readonly #concurrency: number;
  readonly #maxQueue: number;
  readonly #deadlineMs: number;
  readonly #now: () => number;
  readonly #queue: Waiter[] = [];
  #running = 0;
  readonly #counts = { admitted: 0, rejectedFull: 0, expired: 0 };
  readonly #waits: number[] = [];
  readonly #generations: number[] = [];

  constructor(options: AdmissionOptions = {}) {
    this.#concurrency = options.concurrency ?? 1;
    this.#maxQueue = options.maxQueue ?? 8;
    this.#deadlineMs = options.deadlineMs ?? 10_000;
    if (!(this.#concurrency >= 1)) throw new ConfigError("LlmAdmission: `concurrency` must be ≥ 1");
    if (!(this.#maxQueue >= 0)) throw new ConfigError("LlmAdmission: `maxQueue` must be ≥ 0");
    if (!(this.#deadlineMs > 0)) throw new ConfigError("LlmAdmission: `deadlineMs` must be > 0");
    this.#now = options.now ?? (() => performance.now());
  }

  /** Wraps `llm` so every `stream()` call goes through this queue. */
  wrap(llm: LlmProvider): LlmProvider {
    const admission = this;
    return {
      name: llm.name,
      on: llm.on?.bind(llm),
      async *stream(messages: readonly ChatMessage[], signal?: AbortSignal) {
        const release = await admission.#acquire(signal);
        const sentAt = admission.#now();
        let completed = false;
        try {
          yield* llm.stream(messages, signal);
          completed = true;
        } finally {
          if (completed) record(admission.#generations, admission.#now() - sentAt);
          release();
        }
      },
    };
  }

  get metrics(): AdmissionMetrics {
    return {
      running: this.#running,
      queued: this.#queue.length,
      ...this.#counts,
      queueWaitMsP95: p95(this.#waits),
      generationMsP95: p95(this.#generations),
    };
  }

  /** Resolves with a release function once a slot is ours. */
  #acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const enqueuedAt = this.#now();
    if (this.#running < this.#concurrency && this.#queue.length === 0) return Promise.resolve(this.#admit(enqueuedAt));
    if (this.#queue.length >= this.#maxQueue) {
      this.#counts.rejectedFull++;
      return Promise.reject(
        new OverloadError(`LLM admission queue is full (${this.#maxQueue} waiting, ${this.#running} running); try again later or raise maxQueue`, { service: "llm" }),
      );
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        enqueuedAt,
        deadline: enqueuedAt + this.#deadlineMs,
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#admit(enqueuedAt));
        },
        fail: (e) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #admit(enqueuedAt: number): () => void {
    this.#running++;
    this.#counts.admitted++;
    record(this.#waits, this.#now() - enqueuedAt);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#next();
    };
  }

  /** Starts the next waiter whose deadline has not passed; refuses the expired ones. */
  #next(): void {
    while (this.#running < this.#concurrency && this.#queue.length) {
      const waiter = this.#queue.shift()!;
      const now = this.#now();
      if (now > waiter.deadline) {
        this.#counts.expired++;
        waiter.fail(
          new DeadlineExceededError(`LLM request waited ${Math.round(now - waiter.enqueuedAt)} ms, past its ${this.#deadlineMs} ms deadline; it was not sent`, { service: "llm" }),
        );
        continue;
      }
      waiter.start();
    }
  }
}

function record(window: number[], value: number): void {
  window.push(value);
  if (window.length > 256) window.shift();
}

function p95(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}
