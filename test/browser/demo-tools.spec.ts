/**
 * The demo shows a tool call in its transcript: a typed "what time is it"
 * makes the reference LLM call the page's get_time, whose row shows the call
 * and its result, above the reply that reads it out. Chromium's default fake
 * microphone (a tone, no speech) stays unheard by the VAD.
 */
import { expect, test } from "./backend-per-worker";

test("/demo/index.html: a tool call and its result are a row of the transcript, and the reply says the result", async ({ page }) => {
  test.setTimeout(60_000);
  await page.goto("/demo/index.html");
  await page.getByTestId("start").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 30_000 });
  await page.evaluate(() => (window as any).demoSession.sendText("what time is it"));
  const tool = page.locator('[data-testid="transcript"] li.tool');
  await expect(tool).toContainText(/^get_time → \d{1,2}:\d{2} [AP]M \(\d+ ms\)$/, { timeout: 20_000 });
  const time = /→ (\S+ [AP]M)/.exec(await tool.innerText())![1];
  await expect(page.locator('[data-testid="transcript"] li.assistant .text').last()).toHaveText(`It is ${time}.`, { timeout: 20_000 });
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "idle");
});
