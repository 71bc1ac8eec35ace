// WebKitGTK (Safari's engine): Debian's MiniBrowser driven through WebKitWebDriver by
// selenium-webdriver, under an Xvfb display of its own, with audio through the runner's PulseAudio.
// WebKitGTK has SharedArrayBuffer on an isolated page only with JSC_useSharedArrayBuffer=1, which
// Safari has: `shared` sets it, so both playback transports are tested. Console messages go to the
// browser's stdout (--enable-write-console-messages-to-stdout), which we read for errors.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { Builder } from "selenium-webdriver";
import { track } from "../../bench/lib/cleanup.mjs";

export const MINIBROWSER_PATH = process.env.MINIBROWSER_PATH ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
const DRIVER = "WebKitWebDriver";
/** The X display and the driver's port: free ones are picked from here up. */
const DISPLAY_FROM = Number(process.env.ENGINES_DISPLAY ?? 99);

/**
 * @param {{ env: Record<string, string>, shared?: boolean }} options
 * @returns {Promise<import("./engine.mjs").Engine>}
 */
export async function launchWebkit({ env, shared = true }) {
  if (!existsSync(MINIBROWSER_PATH)) throw new Error(`no MiniBrowser at ${MINIBROWSER_PATH}: apt-get install -y webkit2gtk-driver (see /work/shared/TOOLCHAIN.md), or set MINIBROWSER_PATH`);
  /** @type {import("node:child_process").ChildProcess[]} */
  const children = [];
  const killNow = () => {
    for (const c of children.reverse()) {
      try {
        process.kill(-(/** @type {number} */ (c.pid)), "SIGKILL");
      } catch {}
    }
  };
  let untrack = () => false;
  /** @type {import("selenium-webdriver").WebDriver | undefined} */
  let driver;
  const close = async () => {
    untrack();
    if (driver) await Promise.race([driver.quit().catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
    killNow();
  };
  untrack = track({ name: "WebKitGTK (Xvfb, WebKitWebDriver, MiniBrowser)", stop: close, killNow });
  /** @type {string[]} */
  const consoleErrors = [];
  /** @type {string[]} */
  const stdoutLines = [];
  try {
    const display = await freeDisplay(DISPLAY_FROM);
    const xvfb = spawn("Xvfb", [`:${display}`, "-screen", "0", "1280x800x24", "-nolisten", "tcp"], { stdio: "ignore", detached: true });
    children.push(xvfb);
    await waitFor(() => existsSync(`/tmp/.X11-unix/X${display}`), 10_000, "Xvfb to start");
    const port = await freePort();
    const browserEnv = { ...process.env, ...env, DISPLAY: `:${display}`, ...(shared ? { JSC_useSharedArrayBuffer: "1" } : {}) };
    const wd = spawn(DRIVER, [`--port=${port}`], { env: browserEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    children.push(wd);
    let partial = "";
    const onData = (/** @type {Buffer} */ chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        stdoutLines.push(line);
        // WebCore prints "URL:LINE:COL: CONSOLE <source> <level> <message>" (JS, SECURITY, NETWORK…).
        if (/CONSOLE \w+ ERROR/.test(line)) consoleErrors.push(`stdout: ${line}`);
      }
    };
    wd.stdout?.on("data", onData);
    wd.stderr?.on("data", onData);
    await waitFor(() => fetch(`http://127.0.0.1:${port}/status`).then((r) => r.ok, () => false), 10_000, "WebKitWebDriver to answer");
    driver = await new Builder()
      .usingServer(`http://127.0.0.1:${port}`)
      .withCapabilities({
        browserName: "MiniBrowser",
        "webkitgtk:browserOptions": {
          binary: MINIBROWSER_PATH,
          args: ["--automation", "--enable-media-stream=true", "--enable-mock-capture-devices=false", "--autoplay-policy=allow", "--enable-write-console-messages-to-stdout=true"],
        },
      })
      .build();
    await driver.manage().setTimeouts({ script: 300_000, pageLoad: 60_000 });
  } catch (err) {
    await close();
    throw err;
  }
  const caps = await driver.getCapabilities();
  const version = `WebKitGTK ${caps.get("browserVersion") ?? "?"}${shared ? " (JSC_useSharedArrayBuffer=1)" : ""}`;
  const d = driver;
  return {
    name: "webkit",
    version,
    pid: undefined,
    async open(url) {
      // One window: a test's page replaces the last one.
      await d.get(url);
      return {
        async evaluate(fn, arg) {
          const r = await d.executeAsyncScript(
            `const done = arguments[arguments.length - 1];
             Promise.resolve().then(() => (${fn.toString()})(arguments[0])).then(
               (value) => done({ value: value === undefined ? null : JSON.parse(JSON.stringify(value)) }),
               (e) => done({ error: String(e && e.stack || e) }));`,
            arg ?? null,
          );
          if (r?.error) throw new Error(`in the page: ${r.error}`);
          return r?.value;
        },
        close: async () => {},
      };
    },
    consoleErrors,
    stdoutLines,
    close,
  };
}

async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function freeDisplay(from) {
  for (let d = from; d < from + 50; d++) if (!existsSync(`/tmp/.X11-unix/X${d}`) && !existsSync(`/tmp/.X${d}-lock`)) return d;
  throw new Error(`no free X display from :${from}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}
