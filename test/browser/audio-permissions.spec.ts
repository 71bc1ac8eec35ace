// A refused microphone. This file launches Chromium without
// --use-fake-ui-for-media-stream, so the permission prompt has no one to
// accept it and getUserMedia rejects with NotAllowedError.
import { expect, test } from "./backend-per-worker";
// @ts-ignore: a plain ESM module shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";
import { openPage } from "./open-page";

test.use({
  launchOptions: {
    executablePath: CHROMIUM_PATH,
    args: (testChromiumArgs() as string[]).filter((a) => a !== "--use-fake-ui-for-media-stream"),
  },
});

test("a refused microphone rejects with MicrophoneError reason 'denied' and says what to do", async ({ page }) => {
  await openPage(page, "/test/browser/pages/audio/capture.html", "audioReady");
  const r = await page.evaluate(() => (window as any).audio.deniedMicrophone());
  expect(r.name).toBe("MicrophoneError");
  expect(r.reason).toBe("denied");
  expect(r.message).toMatch(/denied.*allow/i);
});
