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
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const STEPS = [
  ["system", process.execPath, ["scripts/ensure-system.mjs"]],
  ["build", npm, ["run", "--silent", "build"]],
  ["size", npm, ["run", "--silent", "size"]],
  ["typecheck", npm, ["run", "--silent", "typecheck"]],
  ["docs", npm, ["run", "--silent", "docs"], [process.execPath, ["scripts/doc-drift.mjs"]]],
  ["unit", npm, ["run", "--silent", "test:unit"]],
  ["backend", npm, ["run", "--silent", "test:backend"]],
  ["browser", npm, ["run", "--silent", "test:browser"]],
];

/** @type {{ name: string, seconds: number, status: number }[]} */
const done = [];
/** @type {import("node:child_process").ChildProcess | undefined} */
let running;
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => {
    running?.kill(signal);
    process.exit(130);
  });
}

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

const total = done.reduce((s, d) => s + d.seconds, 0);
console.log("\nstep        time    result");
for (const d of done) console.log(`${d.name.padEnd(10)} ${formatTime(d.seconds).padStart(6)}    ${d.status === 0 ? "ok" : `FAILED (exit ${d.status})`}`);
console.log(`${"total".padEnd(10)} ${formatTime(total).padStart(6)}`);
if (failed) console.error(`\nnpm test: stopped at "${done[done.length - 1].name}"; the steps after it did not run.`);
process.exit(failed ? 1 : 0);

/** @param {string} command @param {string[]} args @returns {Promise<number>} */
function run(command, args) {
  return new Promise((resolve) => {
    running = spawn(command, args, { stdio: "inherit" });
    running.once("error", (err) => {
      console.error(`test: could not start ${command}: ${err.message}`);
      resolve(1);
    });
    running.once("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** @param {number} s */
function formatTime(s) {
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
}
