// Where the browser tests' reference backends listen: one per Playwright worker, on TEST_PORT + its
// parallelIndex (playwright.config.ts starts them; backend-per-worker.ts points each test at its own).

/** Port of the first worker's reference backend. */
export const TEST_PORT = Number(process.env.BARGEIN_TEST_PORT ?? 8787);
/**
 * Browser test files that run at once. Three fitted the 2-core machine of earlier sessions (five runs
 * under two burners, 640 of 640). On the machine of 2026-12-07, whose page faults and system calls
 * cost about ten times more, two keep both cores busy, and three failed 8 tests in clean-clone CI on
 * load alone.
 */
export const WORKERS = Number(process.env.BARGEIN_TEST_WORKERS ?? 2);

/** The origin of worker `parallelIndex`'s backend. */
export function backendUrl(parallelIndex: number): string {
  return `http://127.0.0.1:${TEST_PORT + parallelIndex}`;
}
