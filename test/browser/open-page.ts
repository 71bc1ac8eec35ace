import type { Page } from "@playwright/test";

/** The session page (test/browser/pages/session/): `window.sessionPage` makes sessions on the reference backend. */
export const SESSION_PAGE = "/test/browser/pages/session/session.html";

/**
 * Opens the test page at `path` and waits until its script has set each of the `ready` flags on
 * `window` (a page sets its flag last, once its modules have loaded and its API is in place).
 */
export async function openPage(page: Page, path: string, ...ready: string[]): Promise<void> {
  await page.goto(path);
  await page.waitForFunction((flags) => flags.every((flag) => (window as any)[flag]), ready);
}

/** Opens the session page and waits until it is ready. */
export function openSessionPage(page: Page): Promise<void> {
  return openPage(page, SESSION_PAGE, "sessionPageReady");
}
