// `npm run screenshots`: the demo's pictures in docs/images/, made by a script
// so that they follow the demo. Starts the reference backend on a free port,
// drives Debian's Chromium with Playwright (its fake microphone loops a spoken
// question after 5 s of silence: test/fixtures/speech/weather-question-late.wav)
// and writes demo-idle.png, demo-listening.png, demo-bot-speaking.png and
// demo-barge-in.png. It stops the browser and the backend it started, also
// when a step fails. Run `npm run build` first (the demo loads dist/).
import { spawn } from "node:child_process";
import { mkdirSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const outDir = `${root}docs/images`;
const speech = `${root}test/fixtures/speech/weather-question-late.wav`;
const VIEWPORT = { width: 1200, height: 800 };

/** A port nobody listens on now (the OS picks it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The reference backend, as `npm run demo` runs it, with the fixtures' words known exactly (so the pictures do not depend on pocketsphinx). */
async function startBackend(port) {
  const child = spawn(process.execPath, ["--no-turbo-fast-api-calls", "demo/server/main.mjs"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", BARGEIN_KNOWN_SPEECH: "test/fixtures/speech", BARGEIN_EXIT_WITH_PARENT: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-2000)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`the reference backend exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${url}/dist/bargein.js`, { method: "HEAD" }).then((r) => r.ok, () => false);
    if (ok) return { url, child };
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGKILL");
  throw new Error(`the reference backend did not answer on ${url}: ${stderr}`);
}

/** SIGTERM (the backend closes its sockets), then SIGKILL if it lingers. */
async function stopBackend(child) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

async function shoot(page, name) {
  const path = `${outDir}/${name}`;
  await page.mouse.move(0, 0); // no hover ring on the last button clicked
  // The pill's dot pulses: stop the animation so the picture does not catch it half-way.
  await page.screenshot({ path, animations: "disabled" });
  console.log(`${name}: ${(statSync(path).size / 1024).toFixed(0)} KB`);
}

const state = (page, wanted, timeout = 30_000) =>
  page.locator(`[data-testid="state"][data-state="${wanted}"]`).waitFor({ timeout });

async function run(page, url) {
  await page.goto(`${url}/demo/index.html`);
  await shoot(page, "demo-idle.png");

  await page.getByTestId("start").click();
  // The first reply, playing: a few words in.
  const reply = page.locator('[data-testid="transcript"] li.assistant').last();
  await state(page, "bot_speaking", 60_000);
  await page.waitForFunction(() => (document.querySelector("#transcript li.assistant:last-child .text")?.textContent?.length ?? 0) > 40, undefined, { timeout: 20_000 });
  await shoot(page, "demo-bot-speaking.png");

  // The loop's next question talks over that reply: cut to what was heard, the rest struck.
  await page.locator('[data-testid="transcript"] li[data-interrupted="true"]').first().waitFor({ timeout: 30_000 });
  await page.locator('[data-testid="partial"]').filter({ hasText: /\w/ }).waitFor({ timeout: 10_000 }).catch(() => {});
  await shoot(page, "demo-barge-in.png");

  // Muted once that question is answered, the reply plays to its end and the session listens again.
  await state(page, "bot_thinking");
  await page.getByTestId("mute").click();
  await reply.locator('[data-testid="reply-latency"]').waitFor({ timeout: 30_000 });
  await state(page, "listening");
  await page.getByTestId("mute").click();
  // The loop is silent 5 s of its 7.2 s: catch a moment when the session still only listens.
  for (let tries = 0; ; tries++) {
    await page.waitForTimeout(200);
    const listening = await page.getByTestId("state").getAttribute("data-state");
    if (listening === "listening") {
      await shoot(page, "demo-listening.png");
      if ((await page.getByTestId("state").getAttribute("data-state")) === "listening") break;
    }
    if (tries > 40) throw new Error("the session never sat listening for a picture");
    await state(page, "listening", 30_000);
  }
  await page.getByTestId("stop").click();
  await state(page, "idle");
}

let backend;
let browser;
const stopAll = async () => {
  await browser?.close().catch(() => {});
  await stopBackend(backend?.child);
};
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

try {
  mkdirSync(outDir, { recursive: true });
  backend = await startBackend(await freePort());
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, `--use-file-for-fake-audio-capture=${speech}`] });
  const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  await run(page, backend.url);
} catch (err) {
  console.error(`screenshots: ${err?.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
