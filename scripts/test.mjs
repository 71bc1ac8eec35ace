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
//   engines    test/engines in Firefox ESR and WebKitGTK (the integration set on the real parts),
//              alongside the browser step: both are mostly real-time audio, not CPU, and in a row
//              they would not fit the suite's 10 minutes; its lines start "[engines]"
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
/**
 * A step's commands run in turn while each succeeds; `alongside`, another step run at the same time,
 * which must pass too.
 * @typedef {{ name: string, commands: [string, string[]][], alongside?: Step }} Step
 */
/** @type {Step[]} */
const STEPS = [
  { name: "system", commands: [[process.execPath, ["scripts/ensure-system.mjs"]]] },
  { name: "build", commands: [[npm, ["run", "--silent", "build"]]] },
  { name: "size", commands: [[npm, ["run", "--silent", "size"]]] },
  { name: "typecheck", commands: [[npm, ["run", "--silent", "typecheck"]]] },
  { name: "docs", commands: [[npm, ["run", "--silent", "docs"]], [process.execPath, ["scripts/doc-drift.mjs"]]] },
  { name: "unit", commands: [[npm, ["run", "--silent", "test:unit"]]] },
  { name: "backend", commands: [[npm, ["run", "--silent", "test:backend"]]] },
  {
    name: "browser",
    commands: [[npm, ["run", "--silent", "test:browser"]]],
    alongside: { name: "engines", commands: [[npm, ["run", "--silent", "test:engines"]]] },
  },
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

const startedAt = Date.now();
let failed = false;
for (const step of STEPS) {
  console.log(`\n── ${step.alongside ? `${step.name} + ${step.alongside.name}` : step.name} ──`);
  const results = await Promise.all([runStep(step), ...(step.alongside ? [runStep(step.alongside, `[${step.alongside.name}] `)] : [])]);
  done.push(...results);
  if (results.some((r) => r.status !== 0)) {
    failed = true;
    break;
  }
}

const total = (Date.now() - startedAt) / 1000;
console.log("\nstep        time    result");
for (const d of done) console.log(`${d.name.padEnd(10)} ${formatTime(d.seconds).padStart(6)}    ${d.status === 0 ? "ok" : `FAILED (exit ${d.status})`}`);
console.log(`${"total".padEnd(10)} ${formatTime(total).padStart(6)}    (wall time: steps run alongside each other overlap)`);
if (failed) console.error(`\nnpm test: stopped at "${done.filter((d) => d.status !== 0).map((d) => d.name).join(", ")}"; the steps after it did not run.`);
process.exit(failed ? 1 : 0);

/** @param {Step} step @param {string} [prefix] output lines start with it (a step run alongside another) */
async function runStep(step, prefix) {
  const started = Date.now();
  let status = 0;
  for (const [command, args] of step.commands) {
    status = await run(command, args, prefix);
    if (status !== 0) break;
  }
  return { name: step.name, seconds: (Date.now() - started) / 1000, status };
}

/** @param {string} command @param {string[]} args @param {string} [prefix] @returns {Promise<number>} */
function run(command, args, prefix) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: prefix ? ["inherit", "pipe", "pipe"] : "inherit" });
    running.add(child);
    if (prefix) {
      for (const [from, to] of /** @type {const} */ ([[child.stdout, process.stdout], [child.stderr, process.stderr]])) prefixLines(from, to, prefix);
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

/** Copies `from` to `to` a whole line at a time, each line prefixed. @param {import("node:stream").Readable | null} from @param {NodeJS.WritableStream} to @param {string} prefix */
function prefixLines(from, to, prefix) {
  let rest = "";
  from?.setEncoding("utf8");
  from?.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) to.write(`${prefix}${line}\n`);
  });
  from?.on("end", () => rest && to.write(`${prefix}${rest}\n`));
}

/** @param {number} s */
function formatTime(s) {
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
}
