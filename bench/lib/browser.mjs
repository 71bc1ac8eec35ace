// Starts the reference backend and Debian's Chromium for a benchmark, the same
// way the browser tests do (see playwright.config.ts), and makes sure both stop.
//
// A bench should use `withBench` (bench/lib/with-bench.mjs), which stops them
// in a `finally` and bounds every step. Used alone, `startServer` and
// `launchBrowser` still register what they start with bench/lib/cleanup.mjs,
// so a signal or an exit of the runner stops them too.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { chromium } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../scripts/chromium.mjs";
import { track } from "./cleanup.mjs";

/** The header in which the backend echoes BARGEIN_INSTANCE (demo/server/backend.mjs INSTANCE_HEADER). */
const INSTANCE_HEADER = "x-bargein-instance";

const HOST = "127.0.0.1";
/** The backend loads flite and pocketsphinx before it listens: 3 s idle here, 30 s seen with two benches running. */
const START_TIMEOUT_MS = 60_000;
/** How long close() waits for the child to exit after SIGTERM before SIGKILL. */
const EXIT_GRACE_MS = 5_000;
/** The end of the backend's stderr kept for error messages. */
const STDERR_TAIL_BYTES = 4096;

/**
 * The port a bench uses: `BENCH_PORT` when set (so a run can be moved off
 * ports others use), else the bench's own default.
 * @param {number} fallback
 */
export function benchPort(fallback) {
  const fromEnv = process.env.BENCH_PORT;
  if (fromEnv === undefined || fromEnv === "") return fallback;
  const port = Number(fromEnv);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`BENCH_PORT=${fromEnv} is not a port number (1–65535)`);
  return port;
}

/**
 * Resolves if nothing listens on `port` (HOST), else rejects naming it: a
 * stale backend there would answer the health check in place of ours.
 * @param {number} port
 */
export function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err) => {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      reject(
        new Error(
          code === "EADDRINUSE"
            ? `port ${port} is already in use (EADDRINUSE) on ${HOST}: a stale reference backend or another process holds it. ` +
                `Find it with \`lsof -iTCP:${port} -sTCP:LISTEN\` or \`pgrep -af demo/server/main.mjs\` and stop it, or set BENCH_PORT to a free port`
            : `cannot check port ${port} on ${HOST}: ${err.message}`,
          { cause: err },
        ),
      );
    });
    probe.listen({ port, host: HOST, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * @typedef {object} BenchServer
 * @property {string} base           http://127.0.0.1:PORT
 * @property {number} port
 * @property {number | undefined} pid
 * @property {string} instance       the nonce this child echoes in X-Bargein-Instance
 * @property {Promise<never>} died   rejects (naming the exit code and stderr tail) if the backend exits before close()
 * @property {() => { code: number | null, signal: string | null, stderrTail: string } | undefined} exited
 * @property {() => Promise<void>} close  SIGTERM, then SIGKILL after 5 s; resolves once the child has exited
 */

/**
 * Spawns demo/server/main.mjs on `port` and resolves once *that child* answers.
 * Extra environment variables configure the backend's knobs.
 *
 * The child is given a fresh nonce (BARGEIN_INSTANCE) and echoes it in the
 * X-Bargein-Instance header of every answer; only an answer carrying it counts,
 * so a stale backend that took the port (before the probe, or between the probe
 * and our listen) is never measured. Fails at once, naming the port and the
 * cause, when the port is taken or the child exits while starting (its exit
 * code and stderr tail: EADDRINUSE, a missing module…); later, `died`
 * rejects if the child exits before `close()`.
 * @param {{ port?: number, env?: Record<string, string>, probePort?: boolean }} [options]
 *   `probePort: false` skips the early check that the port is free (tests use
 *   it to reach the child's own EADDRINUSE, the race the probe cannot close).
 * @returns {Promise<BenchServer>}
 */
export async function startServer({ port = 8799, env = {}, probePort = true } = {}) {
  if (probePort) await assertPortFree(port);
  const instance = randomUUID();
  const child = spawn(process.execPath, ["--no-turbo-fast-api-calls", "demo/server/main.mjs"], {
    env: { ...process.env, PORT: String(port), ...env, BARGEIN_INSTANCE: instance, BARGEIN_EXIT_WITH_PARENT: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderrTail = "";
  child.stderr.on("data", (chunk) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString()).slice(-STDERR_TAIL_BYTES);
  });
  /** @type {{ code: number | null, signal: string | null, stderrTail: string } | undefined} */
  let exit;
  let closing = false;
  let ready = false;
  const exitedPromise = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal, stderrTail };
      resolve(exit);
    });
    // A spawn that fails (ENOENT, EMFILE) emits error and maybe no exit.
    child.once("error", (err) => {
      exit ??= { code: null, signal: null, stderrTail: `${stderrTail}\nspawn failed: ${err.message}` };
      resolve(exit);
    });
  });
  const died = exitedPromise.then((e) => {
    const how = closing ? "was closed" : ready ? "exited" : "exited while starting";
    throw new Error(`the reference backend on port ${port} (pid ${child.pid}) ${how} with ${describeExit(e)}`);
  });
  died.catch(() => {}); // observed by whoever races it; not an unhandled rejection here

  const close = async () => {
    if (exit) return;
    closing = true;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS);
    await exitedPromise;
    clearTimeout(timer);
  };
  const untrack = track({ name: `reference backend :${port} (pid ${child.pid})`, stop: close, killNow: () => child.kill("SIGKILL") });
  exitedPromise.then(untrack);

  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  /** What answered on the port that was not our child (named if we time out). */
  let foreign = "";
  try {
    for (;;) {
      if (exit) await died;
      const answer = await fetch(`${base}/dist/bargein.js`, { method: "HEAD", signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      if (answer && answer.headers.get(INSTANCE_HEADER) === instance) {
        if (answer.ok) break;
        throw new Error(`the reference backend on port ${port} answers ${answer.status} for /dist/bargein.js: dist/ is not built; run \`npm run build\``);
      }
      if (answer) foreign = `${answer.status} with ${INSTANCE_HEADER} ${JSON.stringify(answer.headers.get(INSTANCE_HEADER))}`;
      if (Date.now() > deadline) {
        throw new Error(
          `the reference backend spawned for port ${port} (pid ${child.pid}) did not answer within ${START_TIMEOUT_MS / 1000} s` +
            (foreign ? `; another server answers there (${foreign}, not this child's instance): stop it or set BENCH_PORT` : ""),
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    ready = true;
  } catch (err) {
    await close();
    throw err;
  }
  return { base, port, pid: child.pid, instance, died, exited: () => exit, close };
}

/** @param {{ code: number | null, signal: string | null, stderrTail: string }} e */
function describeExit(e) {
  const how = e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
  const tail = e.stderrTail.trim().split("\n").slice(-8).join("\n  ");
  return tail ? `${how}; its stderr ended with:\n  ${tail}` : `${how} and no stderr`;
}

/**
 * Launches Chromium with the project's flags plus `extraArgs`; registered for
 * cleanup until closed. Fails naming the path when there is no Chromium.
 * @param {string[]} [extraArgs]
 */
export async function launchBrowser(extraArgs = []) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}${process.env.CHROMIUM_PATH ? " (set by CHROMIUM_PATH)" : ""}: ` +
        "run `node scripts/ensure-system.mjs` (npm run bench does) or point CHROMIUM_PATH at a Chromium",
    );
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
  // On a hard exit Playwright kills the browsers it launched itself.
  const untrack = track({ name: "Chromium", stop: () => browser.close() });
  browser.on("disconnected", untrack);
  return browser;
}
