// Runs the reference backend's tests (test/backend, and the contract suites of test/contract), several files at a time: each file has its own
// reference backend in its own worker process, and most of the suite's time is real-time pacing
// (the speech-to-speech sessions stream their audio at the wall clock's pace), not CPU. The slowest
// files are split in two (realtime-session*, gemini-session*) so that no one file holds the run up.
//
//   node scripts/test-backend.mjs              one run (npm run test:backend)
//   node scripts/test-backend.mjs --repeat N   N runs in a row; stops at the first failure and
//                                              says which run and whether a worker died
//   node scripts/test-backend.mjs --repeat N --keep-going
//                                              all N runs whatever fails; then a tally: runs
//                                              passed, worker deaths, and each failed test's count
//   node scripts/test-backend.mjs [--repeat N] test/backend/tts.test.ts …   those files only
//
// No re-run guard any more: the native worker deaths it papered over ("Worker
// exited unexpectedly", no failed assertion) had two causes, both fixed and
// written up in docs/post-mortems.md: pocketsphinx's global log FILE, and V8's
// fast API calls into Node 20's WASI (flite), which vitest.config.ts now turns
// off in every worker (`execArgv: --no-turbo-fast-api-calls`;
// test/backend/worker-flags.test.ts fails if a worker runs without it). A worker
// death now fails the run, named as such, so a third cause would be seen.
//
// vitest runs in its own process group, so SIGINT/SIGTERM of this script stop
// it and its workers (each hosting a reference backend), not only the parent.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CRASH = "Worker exited unexpectedly";
/** Files at once: mostly waiting on real-time pacing, not on the CPU (see the header). */
const WORKERS = Number(process.env.BARGEIN_BACKEND_WORKERS ?? 4);
const VITEST = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));

const args = process.argv.slice(2);
const repeatAt = args.indexOf("--repeat");
const repeat = repeatAt < 0 ? 1 : Number(args[repeatAt + 1]);
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error(`test-backend: --repeat takes a whole number of runs (got ${args[repeatAt + 1]})`);
  process.exit(2);
}
const keepGoing = args.includes("--keep-going");
const files = args.filter((a, i) => a !== "--keep-going" && (repeatAt < 0 || (i !== repeatAt && i !== repeatAt + 1)));
// test/contract: the services' documented sequences against the emulators (a few seconds).
const filters = files.length ? files : ["test/backend", "test/contract"];

/** @type {import("node:child_process").ChildProcess | undefined} */
let running;
for (const [signal, code] of /** @type {const} */ ([["SIGINT", 130], ["SIGTERM", 143]])) {
  process.once(signal, () => {
    console.error(`\ntest-backend: ${signal}: stopping vitest${running?.pid ? ` (process group ${running.pid})` : ""}`);
    stopGroup(running, "SIGTERM");
    const timer = setTimeout(() => {
      stopGroup(running, "SIGKILL");
      process.exit(code);
    }, 5000);
    running?.once("close", () => {
      clearTimeout(timer);
      process.exit(code);
    });
    if (!running) process.exit(code);
  });
}
// Any other exit of this script (an uncaught error) still takes the group down.
process.once("exit", () => stopGroup(running, "SIGKILL"));

/** @param {import("node:child_process").ChildProcess | undefined} child @param {NodeJS.Signals} signal */
function stopGroup(child, signal) {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** The names vitest gives its failed tests ("FAIL  file > suite > test"), colours taken out. @param {string} output */
function failedTests(output) {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  return [...new Set(plain.split("\n").filter((l) => /^\s*FAIL\s/.test(l) && l.includes(" > ")).map((l) => l.replace(/^\s*FAIL\s+/, "").trim()))];
}

/** One run of test/backend; resolves with its exit status, whether a worker died, and the tests that failed. */
function run() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [VITEST, "run", ...filters, `--maxWorkers=${WORKERS}`], {
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    running = child;
    let output = "";
    child.stdout.on("data", (c) => {
      process.stdout.write(c);
      output += c;
    });
    child.stderr.on("data", (c) => {
      process.stderr.write(c);
      output += c;
    });
    child.once("error", (err) => {
      console.error(`test-backend: could not start vitest (${VITEST}): ${err.message}`);
      resolve({ status: 1, workerDied: false, failed: [] });
    });
    child.once("close", (code, signal) => {
      running = undefined;
      resolve({ status: code ?? (signal ? 1 : 0), workerDied: output.includes(CRASH), failed: failedTests(output) });
    });
  });
}

/** @type {Map<string, number>} */
const failures = new Map();
let deaths = 0;
let passed = 0;
let lastStatus = 0;
for (let i = 1; i <= repeat; i++) {
  if (repeat > 1) console.log(`\n=== test/backend run ${i} of ${repeat} ===`);
  const { status, workerDied, failed } = await run();
  if (workerDied) {
    deaths++;
    console.error(
      `\n*** test/backend: a vitest worker process died ("${CRASH}")${repeat > 1 ? ` in run ${i} of ${repeat}` : ""}. ` +
        "Not re-run: see docs/post-mortems.md for the two causes found so far, and report this one with the output above. ***\n",
    );
  }
  if (status === 0) {
    passed++;
    continue;
  }
  lastStatus = status;
  for (const name of failed) failures.set(name, (failures.get(name) ?? 0) + 1);
  if (!keepGoing) {
    if (repeat > 1) console.error(`test-backend: run ${i} of ${repeat} failed (exit ${status}); ${i - 1} passed before it`);
    process.exit(status);
  }
  console.error(`test-backend: run ${i} of ${repeat} failed (exit ${status}); going on (--keep-going)`);
}
if (repeat > 1) {
  console.log(`test-backend: ${passed} of ${repeat} runs passed; worker deaths: ${deaths}`);
  for (const [name, count] of failures) console.log(`  failed in ${count} run${count === 1 ? "" : "s"}: ${name}`);
}
process.exit(passed === repeat ? 0 : lastStatus || 1);
