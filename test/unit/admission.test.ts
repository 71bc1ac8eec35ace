import { describe, expect, test } from "vitest";
import { OverloadError } from "../../src/errors.js";
import { DeadlineExceededError, LlmAdmission } from "../../src/uplink/admission.js";
import { fakeLlm } from "../../src/testing/fake-providers.js";
import { isAbort } from "../../src/util/abort.js";

const drain = async (it: AsyncIterable<string>) => {
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
