// `npm run test:engines [-- ENGINE… --repeat N --grep TEXT --known-issues]`: the integration set
// (test/engines/integration.mjs) in each engine other than Chromium (default: all of them), on the
// real parts: PulseAudio with a null sink and a remapped microphone (test/engines/pulse.mjs), and
// the reference backend with the deterministic recogniser, as the browser tests start it.
// A missing browser fails, as any test does. A test with a known issue in an engine (its `knownIssue`)
// is left out there unless --known-issues is given. Prints a tally; exits 1 on any failure.
// BARGEIN_TEST_PORT moves the backend (default 8791). Heavy: run it alone (see docs/test-suite.md).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startServer } from "../bench/lib/browser.mjs";
import { stopAll } from "../bench/lib/cleanup.mjs";
import { ENGINES } from "../test/engines/engine.mjs";
import { INTEGRATION } from "../test/engines/integration.mjs";
import { startPulse } from "../test/engines/pulse.mjs";
import { runSet } from "../test/engines/run-set.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { repeat: { type: "string", default: "1" }, grep: { type: "string" }, "known-issues": { type: "boolean", default: false } },
});
const engines = positionals.length ? positionals : Object.keys(ENGINES);
const repeat = Number(values.repeat);
const tests = values.grep ? INTEGRATION.filter((t) => t.name.includes(/** @type {string} */ (values.grep))) : INTEGRATION;
const port = Number(process.env.BARGEIN_TEST_PORT ?? 8791);
const log = (/** @type {string} */ line) => console.log(line);

// Its Debian packages first (installed when run as root; else the command to run, and exit 1).
try {
  execFileSync(process.execPath, [fileURLToPath(new URL("./ensure-system.mjs", import.meta.url)), "--engines"], { stdio: "inherit" });
} catch {
  process.exit(1);
}

const t0 = Date.now();
/** @type {{ engine: string, run: number, name: string, ok: boolean, notApplicable?: string, knownIssue?: string }[]} */
const tally = [];
/** @type {Record<string, number[]>} */
const wall = {};
let failedToRun = 0;
try {
  const pulse = await startPulse();
  const server = await startServer({ port, env: { BARGEIN_KNOWN_SPEECH: "test/fixtures/speech" } });
  for (let run = 1; run <= repeat; run++) {
    for (const engine of engines) {
      if (repeat > 1) log(`— run ${run} of ${repeat}`);
      const started = Date.now();
      try {
        const set = await runSet(engine, tests, { base: server.base, env: pulse.env, log, knownIssues: values["known-issues"] });
        for (const r of set.results) tally.push({ engine, run, name: r.name, ok: r.ok, notApplicable: r.notApplicable, knownIssue: r.knownIssue });
      } catch (err) {
        failedToRun++;
        tally.push({ engine, run, name: "(the engine did not run)", ok: false });
        log(`  FAIL ${engine} did not run: ${err?.message ?? err}`);
      }
      (wall[engine] ??= []).push((Date.now() - started) / 1000);
    }
  }
} finally {
  await stopAll();
}
const failed = tally.filter((r) => !r.ok);
const applicable = tally.filter((r) => !r.notApplicable && !r.knownIssue);
log("");
for (const engine of engines) {
  const mine = applicable.filter((r) => r.engine === engine);
  const na = tally.filter((r) => r.engine === engine && r.notApplicable).length;
  const known = tally.filter((r) => r.engine === engine && r.knownIssue).length;
  const times = (wall[engine] ?? []).map((s) => `${s.toFixed(0)} s`).join(", ");
  log(`${engine}: ${mine.filter((r) => r.ok).length} of ${mine.length} passed${na ? `, ${na} not applicable` : ""}${known ? `, ${known} left out for a known issue (--known-issues runs them)` : ""} over ${repeat} run(s); wall ${times}`);
}
for (const r of failed) log(`  failed: ${r.engine} run ${r.run}: ${r.name}`);
log(`total ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failed.length ? `${failed.length} failed` : "all passed"}`);
process.exit(failed.length || failedToRun ? 1 : 0);
