import { defineConfig } from "@playwright/test";
// @ts-ignore: a plain ESM module shared with the benchmarks
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./scripts/chromium.mjs";

/** Port of the reference backend that serves the test pages. */
export const TEST_PORT = Number(process.env.BARGEIN_TEST_PORT ?? 8787);


/**
 * Specs that measure no time and play no real-time audio they judge: they run first, two files at once
 * (this machine has 2 cores), before the rest. Everything else runs alone, one test at a time, since
 * its assertions are on audio rendered in real time and on milliseconds.
 */
const UNTIMED = ["**/security.spec.ts", "**/consumer-vite.spec.ts", "**/smoke.spec.ts", "**/audio-permissions.spec.ts"];
/** Acceptance tests of open work, which fail today (playwright.pending.config.ts), and the hosted
 * providers' full matrix (about 6 min on a quiet machine: playwright.hosted.config.ts, `npm run test:hosted`). */
const ELSEWHERE = ["**/pending/**", "**/hosted/**"];

export default defineConfig({
  testDir: "test/browser",
  testIgnore: ELSEWHERE,
  testMatch: "**/*.spec.ts",
  timeout: 60_000,
  workers: 2,
  fullyParallel: false,
  projects: [
    { name: "untimed", testMatch: UNTIMED },
    { name: "real-time", testIgnore: [...ELSEWHERE, ...UNTIMED], workers: 1, dependencies: ["untimed"] },
  ],
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
    // V8 fast API calls into Node 20's WASI crash the process under GC pressure (flite; see vitest.config.ts).
    command: "node --no-turbo-fast-api-calls demo/server/main.mjs",
    url: `http://127.0.0.1:${TEST_PORT}/dist/bargein.js`,
    // The STTs hear the speech fixtures deterministically (demo/server/known-speech.mjs); a test of
    // real recognition asks for pocketsphinx alone with the knob known_speech=0.
    env: { PORT: String(TEST_PORT), BARGEIN_KNOWN_SPEECH: "test/fixtures/speech" },
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "ignore",
    stderr: "pipe",
  },
});
