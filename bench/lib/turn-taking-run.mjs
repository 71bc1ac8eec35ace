// One run of the turn corpus on bench/pages/session/turn-taking.html under one session's options,
// on its own page (the turn bench's policies, the fallback bench's cases).
import { PAGE_OP_MS } from "./with-bench.mjs";

/**
 * @param {{ server: { base: string }, browser: import("@playwright/test").Browser, step: Function }} context withBench's
 * @param {{ name: string, sessionOptions: object, utterances: object[], holdModel?: boolean, problems: string[] }} o
 *   holdModel: the VAD's model request is never answered on this page (the session stays on its level fallback)
 * @returns {Promise<{ results: object[] }>} the page's results; its errors and CSP reports go to `problems`
 */
export async function runTurnTaking({ server, browser, step }, { name, sessionOptions, utterances, holdModel = false, problems }) {
  const page = await step("open turn-taking.html", async () => {
    const p = await browser.newPage();
    p.on("pageerror", (e) => problems.push(`turn-taking ${name}: pageerror ${e.message}`));
    // Never answered: the page closes with the request still open.
    if (holdModel) await p.route("**/silero_vad*.onnx", () => {});
    await p.goto(`${server.base}/bench/pages/session/turn-taking.html`);
    await p.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
    return p;
  });
  const tt = await step(`say ${utterances.length} utterances with pauses (${name})`, () => page.evaluate((o) => window.bench.run(o), { sessionOptions, items: utterances }), { timeoutMs: 40_000 * utterances.length });
  await step("close turn-taking.html", () => page.close(), { timeoutMs: PAGE_OP_MS });
  problems.push(...tt.errors.map((e) => `turn-taking ${name}: ${e}`), ...tt.csp.map((e) => `turn-taking ${name}: csp ${e}`));
  return tt;
}
