// The reference STT's decoders run on koffi's worker threads (model loads and
// decoding) beside calls on the event loop. sphinxbase keeps its log target in
// one global FILE; decoders configured with their own log file (`-logfn`) swapped
// it under other threads' writes, which now and then crashed or hung whatever
// process hosted a backend (seen as lost vitest and Playwright workers in CI).
import { spawnSync } from "node:child_process";
import { expect, test } from "vitest";
import { DecoderPool, sphinxLogTarget } from "../../demo/server/pocketsphinx.mjs";

test("creating and using decoders leaves sphinxbase's global log target alone (off)", async () => {
  const pool = new DecoderPool();
  const before = await sphinxLogTarget();
  const decoders = await Promise.all([pool.acquire(), pool.acquire()]);
  const after = await sphinxLogTarget();
  decoders.forEach((d) => d?.free());
  expect(before).toBeNull();
  expect(after).toBeNull();
});

test("3 streams and 3 churners at a time for 8 s, each creating, using and freeing decoders of its own: no crash, no hang, every utterance transcribed right", () => {
  const child = spawnSync(process.execPath, [new URL("./decoder-threads.mjs", import.meta.url).pathname], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, SECONDS: "8", WORKERS: "3" },
  });
  // With `-logfn` back in the decoder config, 2 of 5 such runs died (SIGSEGV)
  // or hung until the timeout (SIGTERM); the test above catches it every time.
  expect({ signal: child.signal, status: child.status, stderr: child.stderr }).toEqual({ signal: null, status: 0, stderr: "" });
  const result = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}");
  expect(result.wrong).toEqual([]);
  // Every stream and churner finished at least one round (how many more depends on the machine's load).
  expect(result.utterances).toBeGreaterThanOrEqual(3);
  expect(result.churned).toBeGreaterThanOrEqual(3);
}, 70_000);
