// Firefox ESR (Debian's firefox-esr), driven over WebDriver BiDi by puppeteer-core, with audio
// through the runner's PulseAudio. The page's console reaches us two ways: BiDi's log events
// (page.on("console"), "pageerror") and, for what BiDi misses (a worklet's errors), the browser's
// stdout (devtools.console.stdout.content). Both are collected; the runner fails on any error.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import puppeteer from "puppeteer-core";
import { track } from "../../bench/lib/cleanup.mjs";

export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";

const PREFS = {
  "media.navigator.permission.disabled": true,
  "media.autoplay.default": 0,
  "media.autoplay.blocking_policy": 0,
  "media.autoplay.block-webaudio": false,
  "devtools.console.stdout.content": true,
};

/**
 * @param {{ env: Record<string, string>, prefs?: Record<string, unknown> }} options
 * @returns {Promise<import("./engine.mjs").Engine>}
 */
export async function launchFirefox({ env, prefs = {} }) {
  if (!existsSync(FIREFOX_PATH)) throw new Error(`no Firefox at ${FIREFOX_PATH}: apt-get install -y firefox-esr (see /work/shared/TOOLCHAIN.md), or set FIREFOX_PATH`);
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX_PATH,
    headless: true,
    extraPrefsFirefox: { ...PREFS, ...prefs },
    env: { ...process.env, ...env },
    protocolTimeout: 120_000,
  });
  const proc = browser.process();
  const pid = proc?.pid;
  /** @type {string[]} */
  const consoleErrors = [];
  /** @type {string[]} */
  const stdoutLines = [];
  let partial = "";
  proc?.stdout?.on("data", (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      stdoutLines.push(line);
      // An error in one of our pages, workers or worklets, which BiDi's log events can miss.
      // (The browser's own scripts print console.error lines there too: "RSLoader: …".)
      if (/^(console\.error:|JavaScript error:)/.test(line) && line.includes("127.0.0.1")) consoleErrors.push(`stdout: ${line}`);
    }
  });
  // A page frozen in the engine does not answer close(): the whole process group goes.
  const killNow = () => {
    if (pid) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
  };
  const close = async () => {
    untrack();
    await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
    killNow();
  };
  const untrack = track({ name: `Firefox (pid ${pid})`, stop: close, killNow });
  const version = await browser.version();
  return {
    name: "firefox",
    version,
    pid,
    /**
     * For a page that stopped answering: the browser's audio threads and what they wait in (Linux's
     * /proc). The freeze of test/engines/README.md shows as "AudioIPC Server RPC" in
     * rt_mutex_schedule (PulseAudio's mainloop lock); a stuck page with idle audio threads is another bug.
     */
    diagnose() {
      if (!pid) return "";
      try {
        return readdirSync(`/proc/${pid}/task`)
          .map((tid) => {
            const read = (f) => readFileSync(`/proc/${pid}/task/${tid}/${f}`, "utf8").trim();
            return `${read("comm")} in ${read("wchan")}`;
          })
          .filter((line) => /AudioIP|threaded-ml|rt_mutex/.test(line))
          .join("; ");
      } catch (err) {
        return `(no /proc for pid ${pid}: ${err.message})`;
      }
    },
    async open(url) {
      const page = await browser.newPage();
      page.on("console", (m) => m.type() === "error" && consoleErrors.push(`console: ${m.text()}`));
      page.on("pageerror", (e) => consoleErrors.push(`pageerror: ${e.message ?? e}`));
      await page.goto(url, { waitUntil: "load" });
      return {
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        close: () => page.close().catch(() => {}),
      };
    },
    consoleErrors,
    stdoutLines,
    close,
  };
}
