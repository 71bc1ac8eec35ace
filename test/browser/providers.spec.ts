/**
 * The providers in Chromium, where they will run: the browser's own WebSocket
 * and fetch, under the page's strict CSP, against the reference backend.
 * Run alone: npx playwright test test/browser/providers.spec.ts
 */
import { expect, test } from "./backend-per-worker";

test("the four providers work in Chromium against the reference backend, under the strict CSP", async ({ page }) => {
  await page.goto("/test/browser/pages/providers/providers.html");
  const result = await page.evaluate(() => (window as any).providers);

  // flite speech through kyutaiTts, transcribed back by pocketsphinx through kyutaiStt.
  expect(result.roundTrip.seconds).toBeGreaterThan(1);
  expect(result.roundTrip.fullFrames).toBe(true);
  const expected = "what is the weather like today".split(" ");
  const hits = expected.filter((w, i) => result.roundTrip.words[i] === w).length;
  expect(hits, `heard "${result.roundTrip.words.join(" ")}"`).toBeGreaterThanOrEqual(5);

  // The scripted LLM gives the same reply over both transports; aborts reach the server.
  expect(result.llm.sse.length).toBeGreaterThan(3);
  expect(result.llm.sse.join("")).toBe(result.llm.socket.join(""));
  expect(result.llm.aborted).toEqual(["AbortError", "AbortError"]);
  expect(result.llm.abortedOnServer).toBe(2);

  // Typed failures, as a page sees them.
  expect(result.failures.capacity).toBe("AtCapacityError");
  expect(result.failures.slowStartup).toBe("ServiceTimeoutError");
  expect(result.failures.noSuchPath).toBe("ConnectionClosedError");
  expect(result.failures.handshakeMs).toBeLessThan(400); // a refused handshake fails fast, not by timeout
  expect(result.failures.malformed).toBe("ProtocolError");

  expect(await page.evaluate(() => (window as any).cspViolations)).toEqual([]);
});
