// `npm test`: every test, cheapest first, stopping at the first step that fails, then each step's
// wall time. A step's output goes straight through.
//
//   system     the Debian packages the tests need (installed when run as root)
//   build      the bundles, worklets, worker and assets
//   size       the bundles' sizes against scripts/size-budget.json
//   typecheck  the library, worklets, worker, tests and a consumer's strict TypeScript
//   docs       the API reference from the types (docs/reference/), and the doc-drift check: every
//              public option documented, its @defaultValue the one in src/defaults.ts, and every
//              option path in README.md and docs/ one the types have (scripts/doc-drift.mjs)
//   unit       test/unit in vitest (decisions on the fakes and the fake clock), and the unit tests of
//              the bench code (test/bench) and of the reference backend's pure cores (test/demo-server)
//   backend    test/backend (the emulators' wire protocols against real clients)
//   browser    test/browser in Chromium (the real worklets, worker, sockets and builds)
//
// backend and browser run at the same time, once the cheap steps have passed: both spend most of
// their time waiting on real-time audio and sockets, not on the CPU. The browser's output goes
// straight through; the backend's is held and printed whole when it ends, so the two do not
// interleave. Either failing stops the other.
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const STEPS = [
  ["system", process.execPath, ["scripts/ensure-system.mjs"]],
  ["build", npm, ["run", "--silent", "build"]],
  ["size", npm, ["run", "--silent", "size"]],
  ["typecheck", npm, ["run", "--silent", "typecheck"]],
  ["docs", npm, ["run", "--silent", "docs"], [process.execPath, ["scripts/doc-drift.mjs"]]],
  ["unit", npm, ["run", "--silent", "test:unit"]],
];
/** A step stopped because the one running beside it failed. */
const STOPPED = -1;
/** Run together, after STEPS: the first one's output is held until it ends. */
const TOGETHER = [
  ["backend", npm, ["run", "--silent", "test:backend"]],
  ["browser", npm, ["run", "--silent", "test:browser"]],
];

/** @type {{ name: string, seconds: number, status: number }[]} */
const done = [];
/** @type {Set<import("node:child_process").ChildProcess>} */
const running = new Set();
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => {
    for (const child of running) child.kill(signal);
    process.exit(130);
  });
}

const suiteStarted = Date.now();
let failed = false;
for (const [name, command, args, ...then] of STEPS) {
  const started = Date.now();
  console.log(`\n── ${name} ──`);
  // A step may be several commands, run in turn while each succeeds.
  let status = 0;
  for (const [cmd, cmdArgs] of [[command, args], ...then]) {
    status = await run(cmd, cmdArgs);
    if (status !== 0) break;
  }
  done.push({ name, seconds: (Date.now() - started) / 1000, status });
  if (status !== 0) {
    failed = true;
    break;
  }
}

if (!failed) {
  const started = Date.now();
  const [held, live] = TOGETHER;
  console.log(`\n── ${held[0]} + ${live[0]} (${held[0]}'s output when it ends) ──`);
  /** @type {string[]} */
  const heldOutput = [];
  const results = await Promise.all(
    TOGETHER.map(async ([name, command, args], i) => {
      const status = await run(command, args, i === 0 ? (chunk) => heldOutput.push(chunk) : undefined);
      const result = { name, seconds: (Date.now() - started) / 1000, status: status !== 0 && failed ? STOPPED : status };
      if (i === 0) console.log(`\n── ${name} (ended after ${formatTime(result.seconds)}) ──\n${heldOutput.join("")}`);
      if (status !== 0 && !failed) {
        failed = true;
        // Fail fast: the other one stops too.
        for (const child of running) child.kill("SIGTERM");
      }
      return result;
    }),
  );
  done.push(...results);
}

const total = (Date.now() - suiteStarted) / 1000;
console.log("\nstep        time    result");
const verdict = (status) => (status === 0 ? "ok" : status === STOPPED ? "stopped (the other step failed)" : `FAILED (exit ${status})`);
for (const d of done) console.log(`${d.name.padEnd(10)} ${formatTime(d.seconds).padStart(6)}    ${verdict(d.status)}`);
console.log(`${"total".padEnd(10)} ${formatTime(total).padStart(6)}`);
const failedNames = done.filter((d) => d.status !== 0 && d.status !== STOPPED).map((d) => d.name);
if (failed) console.error(`\nnpm test: failed at ${failedNames.map((n) => `"${n}"`).join(" and ")}; the steps after it did not run.`);
process.exit(failed ? 1 : 0);

/**
 * @param {string} command @param {string[]} args
 * @param {(chunk: string) => void} [hold] given: the output is passed to it instead of printed
 * @returns {Promise<number>}
 */
function run(command, args, hold) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: hold ? ["inherit", "pipe", "pipe"] : "inherit" });
    running.add(child);
    if (hold) {
      child.stdout?.setEncoding("utf8").on("data", hold);
      child.stderr?.setEncoding("utf8").on("data", hold);
    }
    child.once("error", (err) => {
      console.error(`test: could not start ${command}: ${err.message}`);
      running.delete(child);
      resolve(1);
    });
    child.once("close", (code, signal) => {
      running.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** @param {number} s */
function formatTime(s) {
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
}
