/**
 * The React demo (demo/react.html, on bargein/react's useVoiceSession) as a
 * person uses it, under the backend's strict CSP: push-to-talk on and off (a
 * new session each), mute, start, the loading bar, see it listen
 * and the mic's level move (Chromium's fake microphone loops a spoken
 * question), type a turn and get a reply, unmute and see the spoken question
 * as a user turn and a reply it talks over cut to its heard part, stop.
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "./backend-per-worker";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";
// @ts-ignore: plain ESM shared with scripts/build.mjs
import { buildReactDemo } from "../../scripts/react-pages.mjs";

const wav = fileURLToPath(new URL("../fixtures/speech/weather-question.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });

// `npm run build` makes it too; built here so that the spec runs on a dist/ built before the demo was.
test.beforeAll(() => buildReactDemo());

test("/demo/react.html: push-to-talk makes a new session; muted start shows the loading bar, listens and shows the mic level; a typed turn gets a reply; unmuted, the spoken question is a user turn, and a reply it talks over shows its heard and unheard parts", async ({ page }) => {
  test.setTimeout(40_000);
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${m.text()} ${m.location().url}`);
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto("/demo/react.html");
  const state = page.getByTestId("state");
  await expect(state).toHaveText("idle");
  await expect(page.getByTestId("stop")).toBeDisabled();
  // Push-to-talk is a session option: ticked, the page makes another session (a new key) with a Talk button.
  await page.evaluate(() => ((window as any).firstSession = (window as any).demoSession));
  await page.getByTestId("ptt-mode").check();
  await expect(page.getByTestId("talk")).toBeDisabled();
  expect(await page.evaluate(() => (window as any).demoSession !== (window as any).firstSession)).toBe(true);
  await page.getByTestId("ptt-mode").uncheck();
  await expect(page.getByTestId("talk")).toHaveCount(0);
  // The loading bar's texts while connecting and while the model loads (the hook's `loading`).
  await page.evaluate(() => {
    const texts: string[] = ((window as any).loadingTexts = []);
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="loading-text"]')?.textContent;
      if (text && texts.at(-1) !== text) texts.push(text);
    }).observe(document.getElementById("app")!, { subtree: true, childList: true, characterData: true });
  });
  // Muted before start: the session listens and stays so (the mic sends silence).
  await page.getByTestId("mute").click();
  await expect(page.getByTestId("mute")).toHaveText("Unmute");
  await page.getByTestId("start").click();
  await expect(state).toHaveText("listening", { timeout: 20_000 });
  await expect(page.getByTestId("start")).toBeDisabled();
  // The bar stays until the VAD's model is in (the session listens before, degraded).
  await expect(page.getByTestId("loading")).toHaveCount(0, { timeout: 30_000 });
  const loadingTexts: string[] = await page.evaluate(() => (window as any).loadingTexts);
  expect(loadingTexts.at(-1), loadingTexts.join(" | ")).toBe("loading the voice detector: 16.6 of 16.6 MB");
  // The mic's bar follows levels() (the mic before the mute): the looping question moves it.
  await expect.poll(async () => Number(await page.getByTestId("mic-level").getAttribute("data-db")), { timeout: 5000 }).toBeGreaterThan(-50);
  const rows = page.locator('[data-testid="transcript"] li');
  await expect(rows).toHaveCount(0);
  await expect(state).toHaveText("listening");
  // A typed turn, and the bot's reply (the heard text, once final).
  await page.getByTestId("say-text").fill("hello there");
  await page.getByTestId("say-send").click();
  await expect(rows.first()).toHaveText("hello there");
  await expect(rows.first()).toHaveAttribute("data-role", "user");
  const reply = page.locator('[data-testid="transcript"] li[data-role="assistant"]:not(.partial)').first();
  await expect(reply).not.toBeEmpty({ timeout: 15_000 });
  // Unmuted, the question is heard: a user turn of its words (the first may be the tail of a loop, unmuted mid-question).
  await page.getByTestId("mute").click();
  await expect(page.getByTestId("mute")).toHaveText("Mute");
  const spoken = page.locator('[data-testid="transcript"] li[data-role="user"]:not(.partial)').filter({ hasText: /weather/i });
  await expect(spoken.first()).toBeVisible({ timeout: 20_000 });
  // The looping question talks over a later reply: its heard and unheard parts are shown.
  const interrupted = page.locator('[data-testid="transcript"] li[data-interrupted="true"]').first();
  await expect(interrupted).toBeVisible({ timeout: 20_000 });
  await expect(interrupted.getByTestId("unheard")).toBeAttached();
  await page.getByTestId("stop").click();
  await expect(state).toHaveText("idle");
  await expect(page.getByTestId("error-banner")).toHaveCount(0);
  expect(await page.evaluate(() => (window as any).demoSession.state)).toBe("idle");
  expect(errors).toEqual([]);
});
