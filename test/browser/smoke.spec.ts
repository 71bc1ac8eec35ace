import { readFileSync } from "node:fs";
import { expect, test } from "./backend-per-worker";

const { version } = JSON.parse(readFileSync("package.json", "utf8"));

test("the UMD bundle works from a plain script tag under a strict CSP", async ({ page }) => {
  const response = await page.goto("/test/browser/pages/smoke-umd.html");
  const csp = response!.headers()["content-security-policy"];
  expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(csp).not.toContain("'unsafe-eval'");
  expect(csp).not.toContain("blob:");
  const result = await page.evaluate(() => (window as any).smoke);
  expect(result.version).toBe(version);
  // Replacing a same-name quest closes the old one before the new one inits.
  expect(result.log).toEqual(["a:init", "a:close", "b:init", "b:close"]);
  expect(result.evalBlocked).toBe(true);
  expect(result.isolated).toBe(true);
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual(["script-src eval"]);
});

test("the ESM bundle, both worklets and the VAD worker load under a strict CSP", async ({ page }) => {
  await page.goto("/test/browser/pages/smoke-esm.html");
  const result = await page.evaluate(() => (window as any).smoke);
  expect(result).toEqual({ version, liveBefore: ["llm"], liveAfter: [], pong: "pong", processorErrors: [] });
  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});
