/**
 * The uplink's overload is visible to the person using the demo: with a slow
 * STT uplink (`?stt_query=rate_bps%3D2000`, passed on to the reference
 * backend), the uplink meter shows its rejects and the events log the
 * overload. Real capture: Chromium's fake microphone loops a spoken question
 * at real time, so this takes as long as the loopback socket takes to fill
 * (the kernel absorbs about 4–5 MB first, about 40 s of Kyutai audio).
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "./backend-per-worker";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";

const wav = fileURLToPath(new URL("../fixtures/speech/weather-question.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });

test("a slow STT uplink shows in the demo: the meter shows rejects and the events log the overload", async ({ page }) => {
  test.setTimeout(150_000);
  await page.goto(`/demo/index.html?stt_query=${encodeURIComponent("rate_bps=2000")}`);
  // Every text the uplink meter shows, however briefly (it is refreshed every 250 ms).
  await page.evaluate(() => {
    const seen: string[] = ((window as any).uplinkTexts = []);
    const el = document.querySelector('[data-testid="uplink-text"]')!;
    new MutationObserver(() => seen.push(el.textContent ?? "")).observe(el, { childList: true, characterData: true, subtree: true });
  });
  await page.getByTestId("start").click();
  await expect(page.getByTestId("state")).not.toHaveAttribute("data-state", "idle", { timeout: 30_000 });
  // The meter and the events are in the developer panel.
  await page.getByTestId("dev-toggle").click();
  const events = page.getByTestId("events");
  await expect(events).toContainText(/uplink overload \(bytes\): policy end, \d+ of 60000 bytes pending/, { timeout: 110_000 });
  // The meter is refreshed every 250 ms; the ended uplink stays on it while the STT reconnects.
  const meterTexts = () => page.evaluate(() => (window as any).uplinkTexts as string[]);
  await expect
    .poll(async () => (await meterTexts()).filter((t) => /rejects [1-9]/.test(t)).length, { timeout: 5_000 })
    .toBeGreaterThan(0);
  const withRejects = (await meterTexts()).filter((t) => /rejects [1-9]/.test(t));
  expect(withRejects[0]).toMatch(/^\d+ \/ 60000 B, rejects [1-9]/);
  // The session says what it did about it, and keeps going.
  await expect(events).toContainText(/fell behind its latency budget/);
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "idle", { timeout: 15_000 });
});
