/**
 * The demo pages as a person uses them: click Start, speak (Chromium's fake
 * microphone plays a spoken question on a loop, so the user also talks over
 * the bot's answers), and read the transcript, the interruption display and
 * the latency chart. Both pages: the ES-module one and the script-tag one.
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "./backend-per-worker";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";

// The question 5 s into a 7.2 s file: between passes the user is quiet for 5.75 s. With the plain
// fixture (1.25 s between passes, less than the VAD's redemptionMs) the turn ends only where the STT's
// flush comes back before the next pass begins, and on a loaded machine it came back later: the
// session rightly took the next pass for the user going on, and the turn never ended.
const wav = fileURLToPath(new URL("../fixtures/speech/weather-question-late.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });

// The third row: the provider picker, with two emulated hosted services (Deepgram's protocol in,
// ElevenLabs' out) in place of the reference pair.
for (const page of ["/demo/index.html", "/demo/script-tag.html", "/demo/index.html?stt=deepgram&tts=elevenlabs"]) {
  test(`${page}: start, speak, see the transcript, an interruption and the latency chart`, async ({ page: tab }) => {
    test.setTimeout(120_000);
    const violations: string[] = [];
    tab.on("console", (m) => {
      if (m.type() === "error") violations.push(m.text());
    });
    tab.on("pageerror", (e) => violations.push(`pageerror: ${e.message}`));
    await tab.goto(page);
    await tab.getByTestId("start").click();
    await expect(tab.getByTestId("state")).not.toHaveAttribute("data-state", "idle", { timeout: 30_000 });
    await expect(tab.getByTestId("stop")).toBeEnabled();
    // The question, transcribed. The fake microphone starts its file when start() opens it, while the
    // VAD is still loading, so the first pass of the looping question may be cut at its start (speech
    // before "listening" is not heard): the first whole pass is the turn to look for.
    const user = tab.locator('[data-testid="transcript"] li.user').filter({ hasText: /weather/i }).first();
    try {
      await expect(user).toContainText(/weather/i, { timeout: 45_000 });
    } catch (err) {
      console.log("events:", await tab.getByTestId("events").innerText(), violations);
      throw err;
    }
    // The bot's answer.
    await expect(tab.locator('[data-testid="transcript"] li.assistant .text').first()).not.toBeEmpty({ timeout: 30_000 });
    // The looping question talks over a later answer: heard and unheard parts are shown.
    const interrupted = tab.locator('[data-testid="transcript"] li[data-interrupted="true"]').first();
    await expect(interrupted).toBeVisible({ timeout: 60_000 });
    await expect(interrupted.getByTestId("unheard")).toBeAttached();
    // Each bot reply says, beside it, how long after the user's turn it began (or that it was cut before playing).
    await expect(tab.getByTestId("reply-latency").first()).toHaveText(/^(reply began \d+ ms after (you stopped|your turn ended)|cut before any of it played)$/);
    // The developer panel, closed at first: the latency chart has a row per finished turn.
    await expect(tab.getByTestId("dev-panel")).not.toHaveAttribute("open");
    await tab.getByTestId("dev-toggle").click();
    await expect(tab.getByTestId("timeline")).toBeVisible();
    await expect(tab.locator('[data-testid="timeline"] rect').first()).toBeAttached();
    // Each spoken turn is labelled with the gap the user felt, from the end of their voice (it includes the VAD's wait for silence).
    const label = await tab.getByTestId("turn-latency").first().textContent();
    expect(label).toMatch(/^\d+ ms voice to voice$/);
    expect(Number.parseInt(label!, 10)).toBeGreaterThan(0);
    await expect(tab.getByTestId("events")).toContainText("interruption");
    await tab.getByTestId("stop").click();
    await expect(tab.getByTestId("state")).toHaveAttribute("data-state", "idle");
    expect(violations.filter((v) => /Content Security Policy|Refused/.test(v))).toEqual([]);
  });
}
