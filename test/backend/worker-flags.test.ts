// The backend suite's workers run with V8's fast API calls off. With them on,
// flite's calls into Node 20's WASI segfaulted a vitest worker under GC
// pressure ("Worker exited unexpectedly"; docs/post-mortems.md), and
// scripts/test-backend.mjs no longer re-runs the suite on a worker death: so
// this flag must reach the very process the backend tests run in.
import { Worker } from "node:worker_threads";
import { describe, expect, test } from "vitest";

describe("the backend suite's worker process", () => {
  test("runs with --no-turbo-fast-api-calls (vitest.config.ts execArgv)", () => {
    expect(process.execArgv).toContain("--no-turbo-fast-api-calls");
  });

  test("passes it on to worker threads (the decoders' threads inherit the process's flags)", async () => {
    const worker = new Worker(`require("node:worker_threads").parentPort.postMessage(process.execArgv)`, { eval: true });
    const argv = await new Promise<string[]>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    expect(argv).toContain("--no-turbo-fast-api-calls");
  });
});
