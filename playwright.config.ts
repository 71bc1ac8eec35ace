import { defineConfig } from "@playwright/test";
// @ts-ignore: a plain ESM module shared with the benchmarks
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./scripts/chromium.mjs";

/** Port of the reference backend that serves the test pages. */
export const TEST_PORT = Number(process.env.BARGEIN_TEST_PORT ?? 8787);


export default defineConfig({
  testDir: "test/browser",
  // Acceptance tests of open work, which fail today: playwright.pending.config.ts runs them. The hosted
  // providers' full matrix (about 6 min on a quiet machine): playwright.hosted.config.ts, `npm run test:hosted`.
  testIgnore: ["**/pending/**", "**/hosted/**"],
  testMatch: "**/*.spec.ts",
  timeout: 60_000,
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${TEST_PORT}`,
    launchOptions: {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    },
  },
  webServer: {
    command: "node demo/server/main.mjs",
    url: `http://127.0.0.1:${TEST_PORT}/dist/bargein.js`,
    env: { PORT: String(TEST_PORT) },
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "ignore",
    stderr: "pipe",
  },
});
