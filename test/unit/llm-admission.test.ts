import { describe, expect, test, vi } from "vitest";
import { DeadlineExceededError, OverloadError } from "../../src/errors.js";
import { LlmAdmission } from "../../src/providers/llm-admission.js";
import { fakeLlm } from "../../src/testing/fake-providers.js";
import { isAbort } from "../../src/util/abort.js";

const drain = async (it: AsyncIterable<unknown>) => {
  let text = "";
  for await (const d of it) text += d;
  return text;
};

describe("LlmAdmission", () => {
  test("runs at most `concurrency` requests at once, in arrival order", async () => {
    const llm = fakeLlm({ reply: () => "a b c", msPerWord: 5 });
    const admission = new LlmAdmission({ concurrency: 2, maxQueue: 10 });
    const wrapped = admission.wrap(llm.provider);
    let maxRunning = 0;
    const probe = setInterval(() => (maxRunning = Math.max(maxRunning, admission.metrics.running)), 1);
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => drain(wrapped.stream([{ role: "user", content: `q${i}` }]))));
    clearInterval(probe);
    expect(replies).toEqual(Array(6).fill("a b c"));
    expect(maxRunning).toBe(2);
    expect(llm.requests.map((r) => r.messages[0].content)).toEqual(["q0", "q1", "q2", "q3", "q4", "q5"]);
    expect(admission.metrics.admitted).toBe(6);
    expect(admission.metrics.queueWaitMsP95).toBeGreaterThan(0);
    expect(admission.metrics.generationMsP95).toBeGreaterThan(0);
  });

  test("a request whose deadline passed while queued never reaches the server", async () => {
    const llm = fakeLlm({ reply: () => "slow reply here", msPerWord: 30 });
    const admission = new LlmAdmission({ concurrency: 1, deadlineMs: 40 });
    const wrapped = admission.wrap(llm.provider);
    const first = drain(wrapped.stream([{ role: "user", content: "first" }]));
    const late = drain(wrapped.stream([{ role: "user", content: "late" }]));
    await expect(late).rejects.toBeInstanceOf(DeadlineExceededError);
    await first;
    expect(llm.requests.map((r) => r.messages[0].content)).toEqual(["first"]);
    expect(admission.metrics.expired).toBe(1);
  });

  test("a request queued behind a long one is refused at its deadline, while the long one still holds the slot", async () => {
    vi.useFakeTimers();
    try {
      // The first reply takes 3 s (three words 1 s apart); the second may wait 100 ms.
      const llm = fakeLlm({ reply: () => "one two three", msPerWord: 1000 });
      const admission = new LlmAdmission({ concurrency: 1, deadlineMs: 100, now: () => Date.now() });
      const wrapped = admission.wrap(llm.provider);
      const t0 = Date.now();
      const first = drain(wrapped.stream([{ role: "user", content: "long" }]));
      let refused: { at: number; error: unknown } | undefined;
      void drain(wrapped.stream([{ role: "user", content: "queued" }])).catch((error) => (refused = { at: Date.now() - t0, error }));
      expect(admission.metrics.queued).toBe(1);

      await vi.advanceTimersByTimeAsync(99);
      expect(refused).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      // Refused at 100 ms, not at 3000 ms when the slot frees.
      expect(refused?.error).toBeInstanceOf(DeadlineExceededError);
      expect(refused?.at).toBe(100);
      expect(admission.metrics).toMatchObject({ running: 1, queued: 0, expired: 1 });
      expect(llm.requests.map((r) => ({ content: r.messages[0].content, completed: r.completed }))).toEqual([{ content: "long", completed: false }]);

      await vi.advanceTimersByTimeAsync(3000);
      expect(await first).toBe("one two three");
      expect(llm.requests.map((r) => r.messages[0].content)).toEqual(["long"]);
      // Every deadline timer was released: the expired one, and none left behind.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test("a request admitted before its deadline releases its deadline timer", async () => {
    vi.useFakeTimers();
    try {
      const llm = fakeLlm({ reply: () => "a b", msPerWord: 10 });
      const admission = new LlmAdmission({ concurrency: 1, deadlineMs: 10_000, now: () => Date.now() });
      const wrapped = admission.wrap(llm.provider);
      const both = Promise.all([drain(wrapped.stream([{ role: "user", content: "1" }])), drain(wrapped.stream([{ role: "user", content: "2" }]))]);
      await vi.advanceTimersByTimeAsync(100);
      expect(await both).toEqual(["a b", "a b"]);
      expect(admission.metrics).toMatchObject({ admitted: 2, expired: 0 });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test("a full queue refuses at once with an OverloadError", async () => {
    const llm = fakeLlm({ msPerWord: 20 });
    const wrapped = new LlmAdmission({ concurrency: 1, maxQueue: 1 }).wrap(llm.provider);
    const a = drain(wrapped.stream([{ role: "user", content: "a" }]));
    const b = drain(wrapped.stream([{ role: "user", content: "b" }]));
    await expect(drain(wrapped.stream([{ role: "user", content: "c" }]))).rejects.toBeInstanceOf(OverloadError);
    await Promise.all([a, b]);
  });

  test("aborting a queued request removes it; aborting a running one frees its slot", async () => {
    const llm = fakeLlm({ reply: () => "one two three four", msPerWord: 20 });
    const admission = new LlmAdmission({ concurrency: 1 });
    const wrapped = admission.wrap(llm.provider);
    const running = new AbortController();
    const queued = new AbortController();
    const a = drain(wrapped.stream([{ role: "user", content: "a" }], running.signal));
    const b = drain(wrapped.stream([{ role: "user", content: "b" }], queued.signal));
    queued.abort();
    await expect(b).rejects.toSatisfy(isAbort);
    running.abort();
    await expect(a).rejects.toSatisfy(isAbort);
    expect(admission.metrics).toMatchObject({ running: 0, queued: 0 });
    expect(await drain(wrapped.stream([{ role: "user", content: "c" }]))).toBe("one two three four");
    expect(llm.requests.map((r) => r.messages[0].content)).toEqual(["a", "c"]);
  });
});
