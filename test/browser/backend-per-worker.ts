// Each Playwright worker talks to its own reference backend (playwright.config.ts starts one per
// worker, on TEST_PORT + the worker's parallelIndex). Tests read the backend's counters before and
// after (`/__stats`) and expect exact differences; a backend shared by two workers running at once
// would mix their counts. Every spec imports `test` and `expect` from here.
//
// A test's `page` is a new page in one browser context per worker, not in a context of its own: a
// fresh context per test cost about a third of the browser suite's CPU on the 2-core machine (its
// storage, network context and renderer start anew). Pages share that context's HTTP cache and
// nothing a test asserts on. A test that needs an empty cache (a first visit's downloads) asks for
// `test.use({ freshContext: true })`.
import { test as base, type BrowserContext, type Page } from "@playwright/test";
import { backendUrl } from "./ports";

interface TestOptions {
  /** A context of the test's own, with an empty HTTP cache, instead of the worker's shared one. */
  freshContext: boolean;
}
interface WorkerFixtures {
  sharedContext: BrowserContext;
}

export const test = base.extend<TestOptions, WorkerFixtures>({
  baseURL: async ({}, use, testInfo) => {
    await use(backendUrl(testInfo.parallelIndex));
  },
  freshContext: [false, { option: true }],
  sharedContext: [
    async ({ browser }, use, workerInfo) => {
      const context = await browser.newContext({ baseURL: backendUrl(workerInfo.parallelIndex) });
      await use(context);
      await context.close();
    },
    { scope: "worker" },
  ],
  page: async ({ browser, baseURL, freshContext, sharedContext }, use) => {
    const context = freshContext ? await browser.newContext({ baseURL }) : sharedContext;
    const page: Page = await context.newPage();
    try {
      await use(page);
    } finally {
      await page.close();
      if (freshContext) await context.close();
    }
  },
});
export { expect } from "@playwright/test";
export type { Browser, Page } from "@playwright/test";
