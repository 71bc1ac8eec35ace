// withBench: the one place a benchmark's resources are started, bounded and
// stopped, so that no bench has to write its own cleanup.
//
//   export default () =>
//     withBench({ port: 8851 }, async ({ server, browser, step }) => {
//       const page = await browser.newPage();
//       await step("open the bench page", () => page.goto(`${server.base}/bench/pages/x.html`));
//       return step("run the trials", () => page.evaluate(() => window.bench.run()), { timeoutMs: 600_000 });
//     });
//
// - The backend starts first (on a free port, or it fails naming the port),
//   then Chromium; whatever started is stopped in a `finally`, browser first,
//   even when the other failed to start or the body threw.
// - `step(name, fn)` bounds `fn` by a timeout and by the backend's life: a
//   step fails with an error naming the step, after `timeoutMs`, or at once
//   when the backend exits (its exit code and the end of its stderr). The
//   body's pending work is then cut off by closing the browser.
// - `run(cmd, args)` runs a child process the same way (tracked, killed on
//   cleanup and on SIGINT/SIGTERM) and resolves with its output.
import { spawn } from "node:child_process";
import { benchPort, launchBrowser, startServer } from "./browser.mjs";
import { track } from "./cleanup.mjs";

/** A page step with no `timeoutMs` of its own: generous for a page load or one scenario. */
const DEFAULT_STEP_MS = 120_000;
/** The bound of opening or closing a page or context: a bound, not a measurement. */
export const PAGE_OP_MS = 30_000;

/**
 * @typedef {object} BenchContext
 * @property {import("./browser.mjs").BenchServer} server   (undefined with `port: null`)
 * @property {import("@playwright/test").Browser} browser   (undefined with `browser: false`)
 * @property {<T>(name: string, fn: () => Promise<T> | T, options?: { timeoutMs?: number }) => Promise<T>} step
 * @property {(cmd: string, args: string[], options?: { env?: Record<string, string>, timeoutMs?: number, name?: string }) => Promise<{ status: number | null, signal: string | null, stdout: string, stderr: string }>} run
 */

/**
 * Runs `body` with a reference backend and a Chromium, and stops both however it ends.
 * @template T
 * @param {{ port?: number | null, env?: Record<string, string>, browser?: boolean, browserArgs?: string[], stepTimeoutMs?: number }} options
 *   `port`: the backend's default port (BENCH_PORT overrides it); null: no backend.
 *   `browser`: false for no Chromium. `stepTimeoutMs`: the default bound of a step.
 * @param {(context: BenchContext) => Promise<T>} body
 * @returns {Promise<T>}
 */
export async function withBench(options, body) {
  const { port = 8799, env = {}, browser: wantBrowser = true, browserArgs = [], stepTimeoutMs = DEFAULT_STEP_MS } = options;
  /** @type {import("./browser.mjs").BenchServer | undefined} */
  let server;
  /** @type {import("@playwright/test").Browser | undefined} */
  let browser;
  /** @type {Set<import("node:child_process").ChildProcess>} */
  const children = new Set();
  try {
    if (port !== null) server = await startServer({ port: benchPort(port), env });
    if (wantBrowser) {
      try {
        browser = await launchBrowser(browserArgs);
      } catch (err) {
        const stopped = server ? `; the reference backend started for this bench (port ${server.port}, pid ${server.pid}) is stopped` : "";
        throw new Error(`could not launch Chromium: ${err.message}${stopped}`, { cause: err });
      }
    }
    const step = (name, fn, { timeoutMs = stepTimeoutMs } = {}) => bounded(name, fn, timeoutMs, server);
    const run = (cmd, args, runOptions = {}) => runChild(cmd, args, runOptions, children);
    const result = await body(/** @type {BenchContext} */ ({ server, browser, step, run }));
    // A backend that died outside any step still spoils the figures the body measured.
    if (server?.exited()) await bounded("the bench's last step", () => server.died, 1000, undefined);
    return result;
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await browser?.close().catch((err) => console.error(`bench: closing Chromium failed: ${err.message}`));
    await server?.close();
  }
}

/**
 * `fn()` bounded by `timeoutMs` and by the backend's life.
 * @template T
 * @param {string} name
 * @param {() => Promise<T> | T} fn
 * @param {number} timeoutMs
 * @param {import("./browser.mjs").BenchServer | undefined} server
 * @returns {Promise<T>}
 */
export async function bounded(name, fn, timeoutMs, server) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench step "${name}" timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  const died = server ? server.died.catch((err) => Promise.reject(new Error(`bench step "${name}" failed: ${err.message}`, { cause: err }))) : new Promise(() => {});
  const work = Promise.resolve().then(fn);
  // If the step lost the race, its own failure (the browser closing under it) is expected: not unhandled.
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout, died]);
  } catch (err) {
    if (err instanceof Error && !err.message.includes(`"${name}"`)) throw new Error(`bench step "${name}" failed: ${err.message}`, { cause: err });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a child to its end and resolves with its exit status and output; it
 * is killed on timeout, on cleanup, and on SIGINT/SIGTERM of the runner.
 */
function runChild(cmd, args, { env = {}, timeoutMs = 30 * 60_000, name = `${cmd} ${args.join(" ")}` } = {}, children) {
  /** @type {import("node:child_process").ChildProcess | undefined} */
  let child;
  const finished = new Promise((resolve, reject) => {
    child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const self = child;
    children.add(self);
    const untrack = track({ name, stop: () => void self.kill("SIGTERM"), killNow: () => self.kill("SIGKILL") });
    let stdout = "";
    let stderr = "";
    self.stdout?.on("data", (c) => (stdout += c));
    self.stderr?.on("data", (c) => (stderr += c));
    self.once("error", (err) => {
      children.delete(self);
      untrack();
      reject(new Error(`could not run ${name}: ${err.message}`, { cause: err }));
    });
    self.once("close", (status, signal) => {
      children.delete(self);
      untrack();
      resolve({ status, signal, stdout, stderr });
    });
  });
  // A child step does not depend on the backend, so only its own timeout bounds it.
  return bounded(name, () => finished, timeoutMs, undefined).catch((err) => {
    child?.kill("SIGTERM");
    throw err;
  });
}
