/**
 * The README's quick start, as a new user would follow it: its `index.html` and `main.ts` blocks
 * (marked `<!-- quickstart-html -->` and `<!-- quickstart -->`) become a fresh Vite app with strict
 * TypeScript and bargein installed from the packed tarball (packed-app.ts), built in production mode,
 * served by the reference backend under its strict CSP, and driven in Chromium by its own buttons,
 * with a spoken question from the fake microphone. The one change to the README's code: the backend's
 * address, which the quick start gives as `npm run demo`'s, is this worker's.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { expect, test } from "./backend-per-worker";
import { REPO, installPacked, packBargein, typecheckAndBuild } from "./packed-app";
import { backendUrl } from "./ports";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";

const wav = fileURLToPath(new URL("../fixtures/speech/weather-question.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });

/** Inside test/, which the reference backend serves; git-ignored. */
const OUT = join(REPO, "test/consumer/quickstart/dist");
const BASE = "/test/consumer/quickstart/dist/";
const ADDRESS_LINE = 'const backend = "127.0.0.1:8080";';

/** The code block right after `<!-- marker -->` in the README. */
function readmeBlock(marker: string): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(readme);
  if (!match) throw new Error(`README.md has no code block marked <!-- ${marker} -->`);
  return match[1]!;
}

let removeTemp = () => {};

test.beforeAll(({}, testInfo) => {
  const main = readmeBlock("quickstart");
  if (main.split(ADDRESS_LINE).length !== 2) throw new Error(`the quick start's main.ts must set the backend's address once, as \`${ADDRESS_LINE}\``);
  // This worker's backend, which serves the built app (backend-per-worker.ts): the page's CSP allows its own origin only.
  const host = new URL(backendUrl(testInfo.parallelIndex)).host;
  const { temp, packed, remove } = packBargein();
  removeTemp = remove;
  const app = join(temp, "quickstart");
  mkdirSync(app);
  writeFileSync(join(app, "index.html"), readmeBlock("quickstart-html"));
  writeFileSync(join(app, "main.ts"), main.replace(ADDRESS_LINE, `const backend = ${JSON.stringify(host)};`));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-voice-app", private: true, type: "module" }));
  // A new project's strict tsconfig and a config that sets only where the test serves the build.
  const fixture = join(REPO, "test/consumer/vite-app");
  cpSync(join(fixture, "vite.config.mjs"), join(app, "vite.config.mjs"));
  const tsconfig = JSON.parse(readFileSync(join(fixture, "tsconfig.json"), "utf8"));
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ ...tsconfig, include: ["main.ts"] }));
  installPacked(app, temp, packed);
  typecheckAndBuild(app, BASE, OUT);
});

test.afterAll(() => removeTemp());

test("the README's quick start, built as written, completes a spoken turn against the reference backend", async ({ page }) => {
  test.setTimeout(60_000);
  const violations: string[] = [];
  page.on("console", (m) => m.type() === "error" && violations.push(m.text()));
  await page.goto(BASE);
  await expect(page.locator("#state")).toHaveText("idle");
  await page.locator("#start").click();
  const transcript = page.locator("#transcript");
  // Waits for a row of the app's transcript matching `pattern`; a failure says what the app shows then.
  const rowAppears = async (pattern: RegExp, what: string) => {
    const rows = () => transcript.locator("p").allTextContents();
    await expect
      .poll(async () => (await rows()).some((t) => pattern.test(t)), { timeout: 30_000, message: what })
      .toBe(true)
      .catch(async (e: Error) => {
        const state = await page.locator("#state").textContent();
        const error = await page.locator("#error").textContent();
        throw new Error(`${e.message}\nnow: state ${state}, error "${error}", rows ${JSON.stringify(await rows())}`);
      });
  };
  // The fake microphone asks the question (from wherever its loop is when the mic opens); the app's own
  // rows show the user's turn, then the reply.
  await rowAppears(/^user: .*\b(weather|today)\b/, "a user row with the question's words");
  await rowAppears(/^assistant: \S+ \S+ \S+/, "an assistant row of at least three words");
  await expect(page.locator("#error")).toHaveText("");
  await page.locator("#stop").click();
  await expect(page.locator("#state")).toHaveText("idle", { timeout: 15_000 });
  expect(violations.filter((v) => /Content Security Policy/.test(v))).toEqual([]);
});
