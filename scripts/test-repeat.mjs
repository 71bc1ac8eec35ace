// The flake finder: runs the suite, or a part of it, N times in a row and prints a tally per test.
//
//   npm run test:repeat -- N [--load K] [files…]
//
//   N          runs (each run is every chosen tier once)
//   --load K   K processes that burn a CPU each run alongside, for as long as the runs take
//   files…     test files: test/unit/…, test/bench/…, test/demo-server/… and test/backend/… run in
//              vitest, test/browser/….spec.ts in Playwright; none: the whole suite (unit, backend, browser). A folder counts too.
//
// A test that fails in any run is listed with its count, and the exit status is 1. Use it before
// every submission that touches tests or timing: a test that fails under load without a bug is a
// defect in the test (fix its design; do not widen its bound).
//
// Each runner writes a JSON report to a temporary folder; the burners and runners are stopped on
// any exit of this script, SIGINT and SIGTERM included.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = (name) => join(ROOT, "node_modules", ".bin", name);

const args = process.argv.slice(2);
const runs = Number(args.shift());
if (!Number.isInteger(runs) || runs < 1) usage(`N must be a whole number of runs (got ${JSON.stringify(runs)})`);
let load = 0;
/** @type {string[]} */
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--load") {
    load = Number(args[++i]);
    if (!Number.isInteger(load) || load < 0) usage(`--load takes a whole number of processes (got ${JSON.stringify(args[i])})`);
  } else files.push(args[i]);
}

/** @param {string} why */
function usage(why) {
  console.error(`test:repeat: ${why}\nusage: npm run test:repeat -- N [--load K] [files…]`);
  process.exit(2);
}

const isBrowser = (/** @type {string} */ f) => f.startsWith("test/browser") || f.endsWith(".spec.ts");
const tiers = files.length
  ? [
      ...(files.some((f) => !isBrowser(f)) ? [{ name: "vitest", files: files.filter((f) => !isBrowser(f)) }] : []),
      ...(files.some(isBrowser) ? [{ name: "browser", files: files.filter(isBrowser) }] : []),
    ]
  : [
      { name: "vitest", files: ["test/unit", "test/bench", "test/demo-server", "test/backend", "test/contract"] },
      { name: "browser", files: [] },
    ];

/** @type {Set<import("node:child_process").ChildProcess>} */
const children = new Set();
/** @param {NodeJS.Signals} signal */
function signalAll(signal) {
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }
}
process.once("exit", () => signalAll("SIGKILL"));
/** A signal came: no further run starts. */
let stopping = false;
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, async () => {
    // Playwright starts each webServer (a reference backend) in a process group of its own, and stops
    // them only when it shuts down on a SIGINT: a SIGKILL of its group left them holding the test ports.
    stopping = true;
    signalAll("SIGINT");
    const deadline = Date.now() + 10_000;
    while (children.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    process.exit(130);
  });
}

/** @param {string} command @param {string[]} argv @param {NodeJS.ProcessEnv} [env] @param {boolean} [quiet] */
function start(command, argv, env = process.env, quiet = false) {
  const child = spawn(command, argv, { cwd: ROOT, env, stdio: ["ignore", quiet ? "ignore" : "inherit", quiet ? "ignore" : "inherit"], detached: true });
  children.add(child);
  child.once("close", () => children.delete(child));
  return child;
}

/** @param {import("node:child_process").ChildProcess} child @returns {Promise<number>} */
const exited = (child) => new Promise((resolve) => child.once("close", (code) => resolve(code ?? 1)));

for (let i = 0; i < load; i++) start(process.execPath, ["-e", "for (;;) Math.sqrt(Math.random());"], process.env, true);

const scratch = mkdtempSync(join(tmpdir(), "bargein-repeat-"));
/** @type {Map<string, { passed: number, failed: number }>} */
const tally = new Map();
/** @param {string} name @param {boolean} ok */
function count(name, ok) {
  const row = tally.get(name) ?? { passed: 0, failed: 0 };
  if (ok) row.passed++;
  else row.failed++;
  tally.set(name, row);
}

/** Runs one tier once and counts its tests; a runner that reports nothing counts as one failure. */
async function runTier(/** @type {{ name: string, files: string[] }} */ tier, /** @type {number} */ run) {
  const report = join(scratch, `${tier.name}-${run}.json`);
  if (tier.name === "vitest") {
    const ownBackend = (/** @type {string} */ f) => f.startsWith("test/backend") || f.startsWith("test/contract");
    const unit = tier.files.filter((f) => !ownBackend(f));
    const backend = tier.files.filter(ownBackend);
    // Unit files as `npm run test:unit` runs them (sharing processes: --no-isolate); backend and contract
    // files as `npm run test:backend` does, each in its own.
    let status = 0;
    for (const [part, filters, extra] of /** @type {const} */ ([["unit", unit, ["--maxWorkers=4", "--no-isolate"]], ["backend", backend, ["--maxWorkers=4"]]])) {
      if (filters.length === 0) continue;
      const out = `${report}.${part}`;
      const code = await exited(start(BIN("vitest"), ["run", ...filters, ...extra, "--reporter=dot", "--reporter=json", `--outputFile.json=${out}`]));
      status ||= code;
      readVitest(out, `${tier.name}/${part}`);
    }
    return status;
  }
  const env = { ...process.env, PLAYWRIGHT_JSON_OUTPUT_NAME: report };
  const code = await exited(start(BIN("playwright"), ["test", ...tier.files, "--reporter=dot,json"], env));
  readPlaywright(report);
  return code;
}

/** @param {string} path @param {string} label */
function readVitest(path, label) {
  let json;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return count(`${label}: (no report: the runner died)`, false);
  }
  for (const file of json.testResults ?? []) {
    const rel = file.name.replace(ROOT, "");
    if ((file.assertionResults ?? []).length === 0 && file.status === "failed") count(`${rel} (the file failed to load or run)`, false);
    for (const t of file.assertionResults ?? []) {
      if (t.status === "skipped" || t.status === "pending" || t.status === "todo") continue;
      count(`${rel} › ${t.fullName}`, t.status === "passed");
    }
  }
}

/** @param {string} path */
function readPlaywright(path) {
  let json;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return count("browser: (no report: the runner died)", false);
  }
  /** @param {any} suite @param {string[]} titles */
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        const name = `${spec.file} › ${[...titles, spec.title].join(" › ")}${t.projectName ? ` [${t.projectName}]` : ""}`;
        count(name, t.status === "expected" || t.status === "flaky" ? t.status === "expected" : false);
      }
    }
    for (const child of suite.suites ?? []) walk(child, child.title && !child.title.endsWith(".ts") ? [...titles, child.title] : titles);
  };
  for (const suite of json.suites ?? []) walk(suite, []);
  for (const error of json.errors ?? []) count(`browser: ${String(error.message ?? error).split("\n")[0]}`, false);
}

// The browser tests load dist/: build it once, as `npm test` does, before any run.
if (tiers.some((t) => t.name === "browser")) {
  const built = await exited(start("npm", ["run", "--silent", "build"]));
  if (built !== 0) {
    console.error("test:repeat: npm run build failed; nothing was run");
    process.exit(1);
  }
}

const started = Date.now();
let failedRuns = 0;
try {
  for (let run = 1; run <= runs && !stopping; run++) {
    console.log(`\n=== test:repeat run ${run} of ${runs}${load ? `, ${load} CPU burner${load === 1 ? "" : "s"} alongside` : ""} ===`);
    const runStarted = Date.now();
    let status = 0;
    for (const tier of tiers) if (!stopping) status ||= await runTier(tier, run);
    if (status !== 0) failedRuns++;
    console.log(`=== test:repeat run ${run} of ${runs}: ${status === 0 ? "passed" : "FAILED"} in ${((Date.now() - runStarted) / 60000).toFixed(1)} min ===`);
  }
} finally {
  signalAll("SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
}

const rows = [...tally.entries()];
const flaky = rows.filter(([, r]) => r.failed > 0).sort((a, b) => b[1].failed - a[1].failed);
console.log(`\ntest:repeat: ${runs} run${runs === 1 ? "" : "s"}${load ? ` with ${load} CPU burner${load === 1 ? "" : "s"}` : ""} in ${((Date.now() - started) / 60000).toFixed(1)} min; ${rows.length} tests; ${runs - failedRuns} of ${runs} runs passed`);
if (flaky.length === 0) console.log(`every test passed in every run (${rows.reduce((n, [, r]) => n + r.passed, 0)} test runs)`);
for (const [name, r] of flaky) console.log(`  ${String(r.failed).padStart(3)} failed / ${r.passed} passed  ${name}`);
console.log(`${rows.reduce((n, [, r]) => n + r.passed, 0)} passed, ${rows.reduce((n, [, r]) => n + r.failed, 0)} failed`);
process.exit(flaky.length === 0 && failedRuns === 0 ? 0 : 1);
