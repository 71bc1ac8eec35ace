/**
 * The demo's controls as a person uses them, in Chromium against the
 * reference backend: the loading bar while connecting, a typed turn and a
 * typed turn over the bot, mute, the device pickers, push-to-talk, and the
 * error banner. Chromium's default fake microphone (a tone, no speech) stays
 * unheard by the VAD, so every turn here is the one the test makes.
 */
import { expect, test, type Page } from "./backend-per-worker";

const transcript = (page: Page, role: string) => page.locator(`[data-testid="transcript"] li.${role}`);

/** Records whether the loading bar was ever shown, and its last value and max, before Start is clicked. */
async function watchLoading(page: Page): Promise<void> {
  await page.evaluate(() => {
    const el = document.querySelector('[data-testid="loading"]')!;
    const seen = ((window as any).loadingSeen = { shown: false, texts: [] as string[] });
    new MutationObserver(() => {
      if (!(el as HTMLElement).hidden) seen.shown = true;
      const text = el.querySelector('[data-testid="loading-text"]')!.textContent!;
      if (text && seen.texts.at(-1) !== text) seen.texts.push(text);
    }).observe(el, { attributes: true, subtree: true, childList: true, characterData: true });
  });
}

test("loading bar, typed turns (also over the bot), mute and the device pickers", async ({ page }) => {
  test.setTimeout(90_000);
  await page.goto("/demo/index.html");
  await watchLoading(page);
  await page.getByTestId("start").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 30_000 });
  // The bar came up while connecting, counted both assets to the end, and is gone once the VAD's
  // model is ready (the session listens before that, degraded).
  await expect(page.getByTestId("loading")).toBeHidden({ timeout: 30_000 });
  const seen = await page.evaluate(() => (window as any).loadingSeen);
  expect(seen.shown).toBe(true);
  expect(seen.texts.at(-1)).toBe("loading the voice detector: 16.6 of 16.6 MB");
  const bar = await page.getByTestId("loading-bar").evaluate((el: HTMLProgressElement) => ({ value: el.value, max: el.max }));
  expect(bar).toEqual({ value: 2327524 + 14239897, max: 2327524 + 14239897 });

  // A typed turn, answered.
  await page.getByTestId("say-text").fill("I feel happy");
  await page.getByTestId("say-text").press("Enter");
  await expect(transcript(page, "user").last()).toHaveText("I feel happy");
  await expect(page.getByTestId("say-text")).toHaveValue("");
  await expect(transcript(page, "assistant").last().locator(".text")).not.toBeEmpty({ timeout: 20_000 });
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 30_000 });

  // Typed over the bot: its reply is cut to what was heard, and the new turn is answered.
  await page.getByTestId("say-text").fill("tell me about my mother and my father");
  await page.getByTestId("say-send").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "bot_speaking", { timeout: 20_000 });
  // The bot meter (getLevels() once a frame) moves with the reply's audio.
  const outputWidth = () => page.getByTestId("output-level").evaluate((el: HTMLElement) => Number.parseFloat(el.style.width || "0"));
  await expect.poll(outputWidth, { timeout: 3000, intervals: [50] }).toBeGreaterThan(20);
  await page.getByTestId("say-text").fill("stop please");
  await page.getByTestId("say-text").press("Enter");
  const cut = transcript(page, "assistant").and(page.locator('[data-interrupted="true"]'));
  await expect(cut).toHaveCount(1, { timeout: 10_000 });
  await expect(transcript(page, "user").last()).toHaveText("stop please");
  // In the history: the cut reply, with what was heard, right before the typed turn that cut it.
  const before = await page.evaluate(() => {
    const h = (window as any).demoSession.history;
    return h[h.findLastIndex((m: any) => m.role === "user") - 1];
  });
  expect(before).toMatchObject({ role: "assistant", interrupted: true });
  expect(before.text.length + before.unheardText.length).toBeGreaterThan(0);
  await expect(cut.getByTestId("heard")).toHaveText(before.text);

  // Mute: the label and the session's own metrics follow the button.
  await page.getByTestId("mute").click();
  await expect(page.getByTestId("mute")).toHaveText("Unmute");
  await expect(page.getByTestId("mute")).toHaveAttribute("aria-pressed", "true");
  expect(await page.evaluate(() => (window as any).demoSession.metrics.mic.muted)).toBe(true);
  await page.getByTestId("mute").click();
  await expect(page.getByTestId("mute")).toHaveText("Mute");
  expect(await page.evaluate(() => (window as any).demoSession.metrics.mic.muted)).toBe(false);

  // The developer panel's events say what the pickers did.
  await page.getByTestId("dev-toggle").click();
  // The input picker lists Chromium's fake inputs; picking one moves the capture without a restart.
  const inputs = await page.getByTestId("input-device").locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(inputs.length).toBeGreaterThanOrEqual(2);
  await page.getByTestId("input-device").selectOption(inputs.at(-1)!);
  await expect(page.getByTestId("events")).toContainText(`input device ${inputs.at(-1)} (app)`, { timeout: 10_000 });
  expect(await page.evaluate(() => (window as any).demoSession.metrics.devices.inputSwaps)).toBe(1);
  // The output picker is on where the browser has AudioContext.setSinkId (Chromium does).
  await expect(page.getByTestId("output-device")).toBeEnabled();
  await page.getByTestId("output-device").selectOption("");
  await page.getByTestId("output-device").dispatchEvent("change");
  await expect(page.getByTestId("events")).toContainText("output device default", { timeout: 10_000 });
  await expect(page.getByTestId("error-banner")).toBeHidden();
  // The reply to "stop please" plays out; the session is still whole after the swaps.
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 30_000 });

  await page.getByTestId("stop").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "idle");
  await expect(page.getByTestId("mute")).toBeDisabled();
  await expect(page.getByTestId("say-text")).toBeDisabled();
});

test("push-to-talk: the button opens the user's turn and its release closes it", async ({ page }) => {
  test.setTimeout(60_000);
  await page.goto("/demo/index.html");
  await page.getByTestId("ptt-mode").check();
  await page.getByTestId("start").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 30_000 });
  await expect(page.getByTestId("ptt-mode")).toBeDisabled();
  const talk = page.getByTestId("talk");
  await expect(talk).toBeEnabled();
  await talk.hover();
  await page.mouse.down();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "user_speaking");
  await expect(talk).toHaveClass(/held/);
  // The mic sends audio only while the button is held (MicMute): here it is.
  expect(await page.evaluate(() => (window as any).demoSession.metrics.mic.muted)).toBe(false);
  await page.waitForTimeout(500);
  await page.mouse.up();
  // A tone says no words: the turn ends with nothing to answer, and the floor is free again.
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "listening", { timeout: 10_000 });
  await expect(talk).not.toHaveClass(/held/);
  expect(await page.evaluate(() => (window as any).demoSession.history.length)).toBe(0);
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "idle");
  await expect(talk).toBeDisabled();
  await expect(page.getByTestId("ptt-mode")).toBeEnabled();
});

test("the error banner names what failed: a full STT refuses start(), and Start can be tried again", async ({ page }) => {
  test.setTimeout(60_000);
  await page.goto("/demo/index.html?stt_query=capacity%3D0");
  await page.getByTestId("start").click();
  const banner = page.getByTestId("error-banner");
  await expect(banner).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("error-text")).toContainText("AtCapacityError");
  await expect(page.getByTestId("state")).toHaveAttribute("data-state", "idle");
  await expect(page.getByTestId("start")).toBeEnabled();
  await page.getByTestId("error-dismiss").click();
  await expect(banner).toBeHidden();
});
