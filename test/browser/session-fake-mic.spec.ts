/**
 * The real capture path: Chromium's fake microphone plays a spoken question
 * through getUserMedia → capture worklet → VAD worker and STT uplink.
 * (The fake device loops its file and reports 44.1 kHz stereo, so timings are
 * measured elsewhere, with audio injected through `input`.)
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "./backend-per-worker";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";
import { openSessionPage } from "./open-page";

const QUESTION = "what is the weather like today".split(" ");
const wav = fileURLToPath(new URL("../fixtures/speech/weather-question-late.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });
test("getUserMedia → capture worklet → VAD worker and STT: the question is transcribed and answered", async ({ page }) => {
  await openSessionPage(page);
  const result = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ input: "microphone" });
    await t.session.start();
    await until(() => t.session.history.length >= 2 && t.log.turns.length >= 1, 45000);
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { history, log: t.log };
  });
  expect(result.log.errors).toEqual([]);
  const heard = result.history[0].text.toLowerCase().split(/\s+/);
  expect(QUESTION.filter((w) => heard.includes(w)).length, `recognised "${result.history[0].text}"`).toBeGreaterThanOrEqual(4);
  // The fake device loops the question, so it may talk over this reply at once:
  // what was generated is the heard part plus the unheard part.
  const reply = result.history[1];
  expect(reply.role).toBe("assistant");
  expect(`${reply.text} ${reply.unheardText}`.trim().length).toBeGreaterThan(10);
});
