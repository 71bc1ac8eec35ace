// Starts the reference backend and Debian's Chromium for a benchmark, the same
// way the browser tests do (see playwright.config.ts).
import { spawn } from "node:child_process";
import { chromium } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../scripts/chromium.mjs";

/**
 * Spawns demo/server/main.mjs on `port` and resolves once it answers.
 * Extra environment variables configure the backend's knobs.
 */
export async function startServer({ port = 8799, env = {} } = {}) {
  const child = spawn(process.execPath, ["demo/server/main.mjs"], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${base}/dist/bargein.js`, { method: "HEAD" });
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`reference backend did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, close: () => child.kill() };
}

/** Launches Chromium with the project's flags plus `extraArgs`. */
export function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
}
