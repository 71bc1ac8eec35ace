/**
 * LLM admission: a bounded request queue with fixed concurrency, in front of
 * any LlmProvider. Each request has a deadline: a waiting request is refused
 * with DeadlineExceededError as soon as its deadline passes (its own timer,
 * released when it leaves the queue), and the deadline is checked again
 * before it is sent, so an expired request never reaches the server. Queue
 * wait is measured apart from generation time: a slow reply and a long queue
 * are different problems. Cancellation is the request's AbortSignal, queued
 * or running.
 *
 * Main thread (or any one thread). Allocates per queued request: its waiter,
 * one timer and the promise.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError, DeadlineExceededError, OverloadError } from "../errors.js";
import { abortable } from "../util/abort.js";
import { timeout } from "../util/timeout.js";
import type { ChatMessage, LlmProvider, LlmRequest } from "./types.js";

export interface AdmissionOptions {
  /**
   * Requests running at once.
   * @defaultValue 1
   */
  concurrency?: number;
  /**
   * Requests waiting at most; one more is refused with an OverloadError.
   * @defaultValue 8
   */
  maxQueue?: number;
  /**
   * A request not sent within this many ms of being made is refused.
   * @defaultValue 10000
   */
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
  /** Of `admitted`, the preemptive replies' requests (LlmRequest.speculative): made before the turn was certainly over. */
  speculative: number;
  /** p95 over the last 256 requests, ms from the call to the request being sent. */
  queueWaitMsP95: number;
  /** p95 over the last 256 completed requests, ms from sending to the last token. */
  generationMsP95: number;
}

interface Waiter {
  enqueuedAt: number;
  deadline: number;
  /** Takes a slot and resolves the request. */
  start: () => void;
  /** Refuses the request with DeadlineExceededError. */
  expire: () => void;
}

export class LlmAdmission {
  readonly #concurrency: number;
  readonly #maxQueue: number;
  readonly #deadlineMs: number;
  readonly #now: () => number;
  readonly #queue: Waiter[] = [];
  #running = 0;
  readonly #counts = { admitted: 0, rejectedFull: 0, expired: 0, speculative: 0 };
  readonly #waits: number[] = [];
  readonly #generations: number[] = [];

  constructor(options: AdmissionOptions = {}) {
    this.#concurrency = options.concurrency ?? DEFAULTS.llmAdmission.concurrency;
    this.#maxQueue = options.maxQueue ?? DEFAULTS.llmAdmission.maxQueue;
    this.#deadlineMs = options.deadlineMs ?? DEFAULTS.llmAdmission.deadlineMs;
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
      async *stream(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest) {
        const release = await admission.#acquire(signal);
        if (request?.speculative) admission.#counts.speculative++;
        const sentAt = admission.#now();
        let completed = false;
        try {
          yield* llm.stream(messages, signal, request);
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
    // Settled by start, expire or the caller's abort; whichever comes first
    // takes the waiter out of the queue and stops its deadline timer.
    return abortable<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        enqueuedAt,
        deadline: enqueuedAt + this.#deadlineMs,
        start: () => resolve(this.#admit(enqueuedAt)),
        expire: () => {
          this.#counts.expired++;
          reject(
            new DeadlineExceededError(
              `LLM request waited ${Math.round(this.#now() - enqueuedAt)} ms in the admission queue, past its ${this.#deadlineMs} ms deadline; it was not sent. Raise concurrency or deadlineMs if the LLM cannot keep up.`,
              { service: "llm" },
            ),
          );
        },
      };
      this.#queue.push(waiter);
      // The deadline's own timer: a request stuck behind a long reply is
      // refused when its time is up, not only once a slot frees.
      const deadline = timeout(this.#deadlineMs);
      deadline.signal.addEventListener("abort", waiter.expire, { once: true });
      return () => {
        deadline.clear();
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
      };
    }, signal);
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

  /**
   * Starts the next waiter whose deadline has not passed. The clock is asked
   * again here because a timer that is due may not have run yet when a slot
   * frees; the expired waiters are refused, not sent.
   */
  #next(): void {
    while (this.#running < this.#concurrency && this.#queue.length) {
      const waiter = this.#queue.shift()!;
      if (this.#now() > waiter.deadline) waiter.expire();
      else waiter.start();
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
