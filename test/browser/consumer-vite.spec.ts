/**
 * bargein as a new user gets it: `npm pack`, the tarball installed into a
 * fresh Vite app (test/consumer/vite-app, strict TypeScript, no assetsPath, no
 * files copied to public/), `vite build` in production mode (minified,
 * hashed asset names), the built app served by the reference backend under
 * its strict CSP, and a real turn in Chromium.
 *
 * Offline (packed-app.ts): the tarball is extracted into the app's
 * node_modules and the repo's own vite and tsc run on it. It tests dist/ as
 * built: `npm test` builds before the browser suite.
 */
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test, type Page } from "./backend-per-worker";
import { REPO, installPacked, packBargein, typecheckAndBuild, type Packed } from "./packed-app";

const FIXTURE = join(REPO, "test/consumer/vite-app");
/** Inside test/, which the reference backend serves; git-ignored. */
const OUT = join(FIXTURE, "dist");
const BASE = "/test/consumer/vite-app/dist/";

let temp = "";
let packed: Packed;
let removeTemp = () => {};
let buildLog = "";

test.beforeAll(() => {
  ({ temp, packed, remove: removeTemp } = packBargein());
  const app = join(temp, "app");
  cpSync(FIXTURE, app, { recursive: true, filter: (src) => !src.startsWith(OUT) && !src.includes("node_modules") });
  installPacked(app, temp, packed);
  buildLog = typecheckAndBuild(app, BASE, OUT);
});

test.afterAll(() => removeTemp());

test("the tarball holds only what a user loads: dist's bundles, assets and types, README, LICENSE, CHANGELOG", () => {
  const paths = packed.files.map((f) => f.path);
  expect(paths.filter((p) => !p.startsWith("dist/")).sort()).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]);
  expect(paths.filter((p) => p.startsWith("dist/") && !p.startsWith("dist/types/") && !p.endsWith(".map")).sort()).toEqual([
    "dist/advanced.js",
    "dist/bargein.js",
    "dist/bargein.umd.js",
    "dist/capture-worklet.js",
    "dist/ort-wasm-simd-threaded.wasm",
    "dist/playback-worklet.js",
    "dist/react.js",
    "dist/silero_vad_legacy.onnx",
    "dist/silero_vad_v5.onnx",
    "dist/silero_vad_v6.onnx",
    "dist/testing.js",
    "dist/vad-worker.js",
  ]);
  expect(paths.filter((p) => p.startsWith("dist/types/") && !p.endsWith(".d.ts"))).toEqual([]);
  const pkg = JSON.parse(readFileSync(join(temp, "app/node_modules/bargein/package.json"), "utf8"));
  expect(pkg.dependencies ?? {}).toEqual({});
});

test("vite build copies every asset under a hashed name and minifies the app", () => {
  expect(buildLog).not.toMatch(/doesn't exist at build time/);
  const assets = readdirSync(join(OUT, "assets")).sort();
  for (const name of ["capture-worklet", "playback-worklet", "vad-worker", "ort-wasm-simd-threaded", "silero_vad_v5"]) {
    expect(assets.some((file) => new RegExp(`^${name}-[\\w-]{8}\\.(js|wasm|onnx)$`).test(file)), `${name} in ${assets.join(", ")}`).toBe(true);
  }
  const entry = readFileSync(join(OUT, "assets", assets.find((f) => /^index-.*\.js$/.test(f))!), "utf8");
  // Minified: the error classes lost their names, so only the literal `name`s can tell them apart.
  // The package's `new URL("./<file>", import.meta.url)` became the hashed copy's URL.
  for (const name of ["capture-worklet", "playback-worklet", "vad-worker", "ort-wasm-simd-threaded", "silero_vad_v5"]) {
    const file = assets.find((f) => f.startsWith(`${name}-`));
    expect(entry.includes(`${BASE}assets/${file}`), `${file} referenced by the app`).toBe(true);
  }
  expect(entry.includes("class AtCapacityError"), "class names kept").toBe(false);
  expect(/name=[`"']AtCapacityError[`"']/.test(entry), "the literal name is in the bundle").toBe(true);
});

/** Opens the built app and records every request and CSP violation. */
async function openApp(page: Page) {
  const requests: { url: string; status: number }[] = [];
  page.on("response", (r) => requests.push({ url: new URL(r.url()).pathname, status: r.status() }));
  await page.addInitScript(() => {
    (window as any).cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) => (window as any).cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(BASE);
  await expect(page.locator("#status")).toHaveText("ready");
  return requests;
}

test("the built app reaches listening and completes a spoken turn, loading only its hashed assets", async ({ page }) => {
  const requests = await openApp(page);
  const result = await page.evaluate(() => (window as any).consumer.turn());
  expect(result.errors).toEqual([]);
  expect(result.afterStart).toBe("listening");
  // The app keeps the default uplink budget (0.5 s): on a starved page the SDK ends the STT stream and
  // reopens it, as documented. That is the uplink's own tests' business; any other reconnect fails here.
  expect(result.reconnects.filter((reason: string) => reason !== "overload")).toEqual([]);
  const turnStates = result.states.filter((s: string) => s !== "reconnecting").filter((s: string, i: number, all: string[]) => s !== all[i - 1]);
  expect(turnStates.slice(0, 6)).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening"]);
  expect(result.history[0].role).toBe("user");
  // pocketsphinx's words vary with where the 80 ms frames fall (see session.spec.ts): most come through.
  const heard: string[] = result.history[0].text.toLowerCase().split(/\s+/);
  const hits = "what is the weather like today".split(" ").filter((w) => heard.includes(w)).length;
  expect(hits, `recognised "${heard.join(" ")}"`).toBeGreaterThanOrEqual(4);
  expect(heard).toContain("weather");
  expect(result.history[1].role).toBe("assistant");
  expect(result.history[1].text.split(" ").length).toBeGreaterThan(3);
  const loaded = requests.filter((r) => r.url.startsWith(`${BASE}assets/`));
  expect(requests.filter((r) => r.status >= 400)).toEqual([]);
  // Worklet modules are fetched outside the page's network events; that they
  // loaded shows in the states above (capture feeds the VAD, playback ends the reply).
  for (const name of ["vad-worker", "ort-wasm-simd-threaded", "silero_vad_v5"]) {
    expect(loaded.some((r) => r.url.includes(`/${name}-`)), `${name} loaded`).toBe(true);
  }
  // Nothing from the package's own folder or a CDN; one model, not three.
  expect(requests.filter((r) => r.url.includes("/dist/") && !r.url.startsWith(BASE))).toEqual([]);
  expect(loaded.filter((r) => r.url.includes("silero_vad_")).length).toBe(1);
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});

test("per-asset URLs from Vite's ?url imports work in place of the defaults", async ({ page }) => {
  await openApp(page);
  const explicit: Record<string, string> = await page.evaluate(() => (window as any).consumer.explicitAssets);
  expect(Object.keys(explicit).sort()).toEqual(["captureWorklet", "model", "playbackWorklet", "vadWorker", "wasm"]);
  for (const url of Object.values(explicit)) expect(url).toMatch(new RegExp(`^${BASE}assets/[\\w.-]+-[\\w-]{8}\\.(js|wasm|onnx)$`));
  const result = await page.evaluate(() => (window as any).consumer.turn({ explicit: true, speech: "" }));
  expect(result.errors).toEqual([]);
  expect(result.afterStart).toBe("listening");
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});

test("errors keep their names in the minified bundle: err.name === \"AtCapacityError\"", async ({ page }) => {
  await openApp(page);
  const e = await page.evaluate(() => (window as any).consumer.capacity());
  expect(e).toMatchObject({ name: "AtCapacityError", code: "at_capacity", isAtCapacity: true, instanceOf: true });
  expect(e.constructorName, "the minifier renamed the class (else this test proves nothing)").not.toBe("AtCapacityError");
  expect(e.message).toContain("at capacity");
});

test("a wrong asset URL is an AssetLoadError that names the asset, the answer and the option: start() rejects for a worklet; for the model, which loads after `listening`, it is a non-fatal error and the session listens degraded", async ({ page }) => {
  await openApp(page);
  // An SPA host answers a missing file with its index.html: here, the app's own page.
  const html = await page.evaluate((base) => (window as any).consumer.badAsset({ playbackWorklet: base }), BASE);
  expect(html).toMatchObject({ name: "AssetLoadError", code: "asset_load" });
  expect(html.message).toContain("playback worklet");
  expect(html.message).toContain("HTML page");
  expect(html.message).toContain("`assets.playbackWorklet`");
  const missing = await page.evaluate(() => (window as any).consumer.badAsset({ model: "/nowhere/silero_vad_v5.onnx" }));
  expect(missing).toMatchObject({ started: true, degraded: true, fatal: false, name: "AssetLoadError", url: expect.stringMatching(/\/nowhere\/silero_vad_v5\.onnx$/) });
  expect(missing.message).toContain("HTTP 404");
  expect(missing.message).toContain("`assets.model`");
});
