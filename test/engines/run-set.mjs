// Runs the integration set in one engine: a fresh page per test, bounded by a timeout (a page
// frozen in the engine fails its test, and the engine is relaunched for the next one). A test
// also fails on any console error the engine saw while it ran.
import { launchEngine } from "./engine.mjs";

/** A test that hangs fails after this; the slowest (a barge-in) takes about 20 s on a quiet machine. */
export const TEST_TIMEOUT_MS = 120_000;

/**
 * @param {string} name  the engine
 * @param {import("./integration.mjs").EngineTest[]} tests
 * @param {{ base: string, env: Record<string, string>, log: (line: string) => void, knownIssues?: boolean }} options
 *   `knownIssues`: run the tests with a known issue in this engine too (left out by default)
 * @returns {Promise<{ engine: string, version: string, results: { name: string, ok: boolean, ms: number, error?: string, notApplicable?: string, knownIssue?: string }[] }>}
 */
export async function runSet(name, tests, { base, env, log, knownIssues = false }) {
  let engine = await launchEngine(name, { env });
  const version = engine.version;
  log(`${name}: ${version}`);
  const shared = await hasSharedMemory(engine, base);
  /** @type {{ name: string, ok: boolean, ms: number, error?: string, notApplicable?: string, knownIssue?: string }[]} */
  const results = [];
  try {
    for (const test of tests) {
      if (test.engines && !test.engines.includes(name)) continue;
      const issue = test.knownIssue?.[name];
      if (issue && !knownIssues) {
        results.push({ name: test.name, ok: true, ms: 0, knownIssue: issue });
        log(`  left out (known issue): ${test.name}: ${issue}`);
        continue;
      }
      if (test.needsShared && !shared) {
        results.push({ name: test.name, ok: true, ms: 0, notApplicable: "no SharedArrayBuffer on an isolated page in this engine" });
        log(`  n/a  ${test.name} (no SharedArrayBuffer on an isolated page)`);
        continue;
      }
      const started = Date.now();
      const main = engine;
      // A test of a machine with no audio gets an engine that reaches no audio server.
      if (test.noAudio) engine = await launchEngine(name, { env: { ...env, PULSE_SERVER: "unix:/nonexistent/bargein-no-audio" } });
      const seen = engine.consoleErrors; // this engine's, even if it is relaunched below
      const errorsBefore = seen.length;
      /** @type {import("./engine.mjs").EnginePageHandle[]} */
      const pages = [];
      const open = async (path, ready) => {
        const page = await engine.open(`${base}${path}`);
        pages.push(page);
        if (ready) await page.evaluate(waitForFlag, ready);
        return page;
      };
      let timer;
      const bound = test.timeoutMs ?? TEST_TIMEOUT_MS;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${bound / 1000} s (the page may be frozen)`)), bound);
      });
      let error;
      try {
        await Promise.race([test.run({ engine, open, shared }), timeout]);
      } catch (err) {
        error = err;
      } finally {
        clearTimeout(timer);
      }
      if (error?.message?.startsWith("timed out")) {
        const threads = engine.diagnose?.();
        if (threads) error.message += `; audio threads: ${threads}`;
        // A frozen page does not close: the engine goes, and a fresh one runs the next test.
        await engine.close();
        engine = await launchEngine(name, { env });
      } else {
        for (const page of pages) await page.close();
      }
      if (test.noAudio) {
        await engine.close();
        engine = main;
      }
      const consoleErrors = seen.slice(errorsBefore).filter((e) => !test.allowedErrors?.some((re) => re.test(e)));
      if (!error && consoleErrors.length) error = new Error(`console errors:\n      ${consoleErrors.join("\n      ")}`);
      const ms = Date.now() - started;
      results.push({ name: test.name, ok: !error, ms, error: error && (error.stack ?? String(error)) });
      log(`  ${error ? "FAIL" : "ok  "} ${test.name} (${(ms / 1000).toFixed(1)} s)${error ? `\n      ${String(error.message ?? error).split("\n").join("\n      ")}` : ""}`);
    }
  } finally {
    await engine.close();
  }
  return { engine: name, version, results };
}

/** Runs in the page: resolves once the page's script has set `window[flag]`. */
function waitForFlag(flag) {
  return new Promise((resolve) => {
    const check = () => (window[flag] ? resolve(undefined) : setTimeout(check, 20));
    check();
  });
}

/** Whether an isolated page of this engine has SharedArrayBuffer (the Player's shared transport). */
async function hasSharedMemory(engine, base) {
  const page = await engine.open(`${base}/test/browser/pages/smoke-umd.html`);
  try {
    return await page.evaluate(() => crossOriginIsolated && typeof SharedArrayBuffer === "function");
  } finally {
    await page.close();
  }
}
