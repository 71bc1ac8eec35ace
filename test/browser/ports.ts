// Where the browser tests' reference backends listen: one per Playwright worker, on TEST_PORT + its
// parallelIndex (playwright.config.ts starts them; backend-per-worker.ts points each test at its own).

/** Port of the first worker's reference backend. */
export const TEST_PORT = Number(process.env.BARGEIN_TEST_PORT ?? 8787);
/**
 * Browser test files that run at once. Most of a file's time is real-time audio (the fixtures play at
 * the wall clock's pace), not CPU, so three fit this 2-core machine; the flake finder's `--load 2` runs
 * prove they hold under load.
 */
export const WORKERS = Number(process.env.BARGEIN_TEST_WORKERS ?? 3);

/** The origin of worker `parallelIndex`'s backend. */
export function backendUrl(parallelIndex: number): string {
  return `http://127.0.0.1:${TEST_PORT + parallelIndex}`;
}
