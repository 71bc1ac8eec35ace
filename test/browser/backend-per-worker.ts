// Each Playwright worker talks to its own reference backend (playwright.config.ts starts one per
// worker, on TEST_PORT + the worker's parallelIndex). Tests read the backend's counters before and
// after (`/__stats`) and expect exact differences; a backend shared by two workers running at once
// would mix their counts. Every spec imports `test` and `expect` from here.
import { test as base } from "@playwright/test";
import { backendUrl } from "./ports";

export const test = base.extend({
  baseURL: async ({}, use, testInfo) => {
    await use(backendUrl(testInfo.parallelIndex));
  },
});
export { expect } from "@playwright/test";
export type { Browser, Page } from "@playwright/test";
