// The benchmarks' harness (bench/lib/with-bench.mjs) stops what it starts and
// fails fast, naming the cause: a taken port, a missing Chromium, a backend
// that dies mid-step, a step that hangs, a runner stopped by SIGTERM. Each case
// starts the real reference backend on its own port (8812–8817) and checks the
// processes and the port afterwards, not only the error. The cases of
// startServer's own checks (a stale server answering on its port, its child's
// death mid-step with no browser) use ports 9120–9122; the benches' own
// start-up paths with no Chromium use 9130–9139.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { withBench } from "../../bench/lib/with-bench.mjs";
import { startServer } from "../../bench/lib/browser.mjs";
import { tracked } from "../../bench/lib/cleanup.mjs";
import { sleep } from "../lib/wait.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Pids of reference backends (demo/server/main.mjs) started with PORT=`port`. */
function backendsOnPort(port: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes("demo/server/main.mjs")) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (environ.includes(`PORT=${port}`)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, host: "127.0.0.1" }, () => probe.close(() => resolve(true)));
  });
}

/** Runs an ESM snippet in a fresh node (so env read at import time, like CHROMIUM_PATH, applies). */
function runNode(code: string, env: Record<string, string>) {
  return runProcess(["--input-type=module", "-e", code], env);
}

function runProcess(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, stdout: () => stdout };
}

/** A bench runner whose body waits for ever, once its reference backend (on `port`) is up: the runner and the backend's pid. */
async function benchRunnerWithBackend(port: number) {
  const run = runNode(
    `import { withBench } from "./bench/lib/with-bench.mjs";
     await withBench({ port: ${port}, browser: false }, async ({ server }) => {
       console.log("READY " + server.pid);
       await new Promise(() => {});
     });`,
    {},
  );
  const deadline = Date.now() + 60_000;
  while (!/READY \d+/.test(run.stdout()) && Date.now() < deadline) await sleep(50);
  const pid = Number(/READY (\d+)/.exec(run.stdout())?.[1]);
  expect(existsSync(`/proc/${pid}`)).toBe(true);
  return { run, pid };
}

let squatter: Pick<Server, "close"> | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (squatter ? squatter.close(() => resolve()) : resolve()));
  squatter = undefined;
});

// A backend takes 3–15 s to start on this busy 2-core machine.
const CASE_MS = 90_000;

describe("withBench", () => {
  test("with another process on the bench's port, it fails within seconds naming EADDRINUSE and the port, and starts nothing", async () => {
    const port = 8812;
    const held = createServer();
    squatter = held;
    await new Promise<void>((resolve) => held.listen({ port, host: "127.0.0.1" }, resolve));
    let bodyRan = false;
    const started = Date.now();
    const failure = await withBench({ port, browser: false }, async () => {
      bodyRan = true;
    }).catch((err: Error) => err);
    const ms = Date.now() - started;
    expect(String(failure)).toMatch(/port 8812 is already in use \(EADDRINUSE\)/);
    expect(bodyRan).toBe(false);
    expect(ms).toBeLessThan(5000);
    expect(backendsOnPort(port)).toEqual([]);
  }, CASE_MS);

  test("with CHROMIUM_PATH at a missing file, it fails naming the path and the backend it started is stopped", async () => {
    const port = 8813;
    const run = runNode(
      `import { withBench } from "./bench/lib/with-bench.mjs";
       await withBench({ port: ${port} }, async () => console.log("BODY RAN")).catch((err) => console.log("FAILED " + err.message));`,
      { CHROMIUM_PATH: "/nonexistent/chromium" },
    );
    const r = await run.done;
    expect(r.stdout).not.toContain("BODY RAN");
    expect(r.stdout).toMatch(/FAILED could not launch Chromium: no Chromium at \/nonexistent\/chromium \(set by CHROMIUM_PATH\)/);
    // The message names the backend it had started; that process is gone, and the port is free.
    const pid = Number(/pid (\d+)\) is stopped/.exec(r.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(backendsOnPort(port)).toEqual([]);
    expect(await isPortFree(port)).toBe(true);
  }, CASE_MS);

  test("npm run bench with CHROMIUM_PATH at a missing file stops at the system check and starts no backend", async () => {
    const run = runProcess(["bench/run.mjs", "turn"], { CHROMIUM_PATH: "/nonexistent/chromium", BENCH_PORT: "8816" });
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("CHROMIUM_PATH points at /nonexistent/chromium, which does not exist");
    expect(r.stderr).toContain("the system check (node scripts/ensure-system.mjs --bench) failed; nothing was run");
    expect(backendsOnPort(8816)).toEqual([]);
  }, CASE_MS);

  test("killing the backend mid-step fails that step at once, naming the step and how the backend ended", async () => {
    const port = 8814;
    let pid: number | undefined;
    const started = Date.now();
    let killedAt = 0;
    const failure = await withBench({ port }, async ({ server, browser, step }) => {
      pid = server.pid;
      const page = await browser.newPage();
      await step("open the backend's page", () => page.goto(`${server.base}/dist/bargein.js`));
      setTimeout(() => {
        killedAt = Date.now();
        process.kill(server.pid!, "SIGKILL");
      }, 300);
      // Waits for ever; only the backend's death can end it before the 60 s bound.
      await step("wait in the page for ever", () => page.evaluate(() => new Promise(() => {})), { timeoutMs: 60_000 });
    }).catch((err: Error) => err);
    expect(String(failure)).toMatch(new RegExp(`bench step "wait in the page for ever" failed: the reference backend on port ${port} \\(pid ${pid}\\) exited with signal SIGKILL`));
    // Failed when the backend died, far inside the step's 60 s bound.
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect(Date.now() - started).toBeLessThan(40_000);
    expect(backendsOnPort(port)).toEqual([]);
    expect(tracked()).toEqual([]);
  }, CASE_MS);

  test("a step that outlives its timeout fails naming the step and the bound, and the backend is stopped", async () => {
    const port = 8815;
    let pid: number | undefined;
    const failure = await withBench({ port, browser: false }, async ({ server, step }) => {
      pid = server.pid;
      await step("a step that never ends", () => new Promise(() => {}), { timeoutMs: 300 });
    }).catch((err: Error) => err);
    expect(String(failure)).toContain('bench step "a step that never ends" timed out after 300 ms');
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(await isPortFree(port)).toBe(true);
  }, CASE_MS);

  test("SIGTERM to a bench runner stops the backend it started and exits 143", async () => {
    const port = 8815;
    const { run, pid } = await benchRunnerWithBackend(port);
    run.child.kill("SIGTERM");
    const r = await run.done;
    expect(r.code).toBe(143);
    expect(r.stderr).toContain(`SIGTERM: stopping reference backend :${port} (pid ${pid})`);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(backendsOnPort(port)).toEqual([]);
  }, CASE_MS);

  test("SIGKILL to a bench runner (no finally runs): the backend it started notices its parent is gone and exits by itself, freeing the port", async () => {
    const port = 8817;
    const { run, pid } = await benchRunnerWithBackend(port);
    run.child.kill("SIGKILL");
    const killedAt = Date.now();
    await run.done;
    // It checks once a second; how soon it is gone after that is the machine's load, not a behaviour
    // (a loaded CI machine once took over 3 s). The wait is a sanity bound.
    while (existsSync(`/proc/${pid}`) && Date.now() - killedAt < 20_000) await sleep(50);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(backendsOnPort(port)).toEqual([]);
    expect(await isPortFree(port)).toBe(true);
  }, CASE_MS);
});

describe("startServer measures its own backend", () => {
  test("a stale server that answers 200 on the port is not taken for ours: startServer rejects naming the port, EADDRINUSE and the exit code, and its child is gone", async () => {
    const port = 9120;
    // A stale "backend": answers every request, as an old reference backend would, but without our nonce.
    let answered = 0;
    const stale = createHttpServer((_req, res) => {
      answered++;
      res.writeHead(200, { "Content-Type": "text/javascript" });
      res.end();
    });
    squatter = stale;
    await new Promise<void>((resolve) => stale.listen(port, "127.0.0.1", resolve));
    // probePort: false reaches the case the early probe cannot close: the port taken after the probe.
    const failure = await startServer({ port, probePort: false }).catch((err: Error) => err);
    const message = String(failure);
    expect(message).toMatch(new RegExp(`the reference backend on port ${port} \\(pid \\d+\\) exited while starting with exit code 1`));
    expect(message).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    // The stale server did answer (the old check would have accepted it), and was not believed.
    expect(answered).toBeGreaterThan(0);
    const pid = Number(/\(pid (\d+)\)/.exec(message)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(backendsOnPort(port)).toEqual([]);
    expect(tracked()).toEqual([]);
  }, CASE_MS);

  test("the backend it starts answers with its own instance nonce; killed mid-step (no browser), the step fails within seconds naming the step and SIGKILL", async () => {
    const port = 9121;
    let pid: number | undefined;
    let killedAt = 0;
    const failure = await withBench({ port, browser: false }, async ({ server, step }) => {
      pid = server.pid;
      const answer = await step("read the backend's health", () => fetch(`${server.base}/api/health`));
      expect(answer.headers.get("x-bargein-instance")).toBe(server.instance);
      expect(server.instance).toMatch(/^[0-9a-f-]{36}$/);
      setTimeout(() => {
        killedAt = Date.now();
        process.kill(server.pid!, "SIGKILL");
      }, 200);
      await step("wait for ever", () => new Promise(() => {}), { timeoutMs: 60_000 });
    }).catch((err: Error) => err);
    expect(String(failure)).toMatch(new RegExp(`bench step "wait for ever" failed: the reference backend on port ${port} \\(pid ${pid}\\) exited with signal SIGKILL`));
    expect(killedAt).toBeGreaterThan(0);
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(await isPortFree(port)).toBe(true);
    expect(tracked()).toEqual([]);
  }, CASE_MS);
});

/** Pids of processes whose environment holds `marker` (set on a runner, so inherited by all it spawns). */
function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(marker)) pids.push(Number(entry));
    } catch {
      // Ended while we looked, or not ours to read.
    }
  }
  return pids;
}

describe("the benches' own start-up paths, with Chromium missing", () => {
  // The benches whose start-up is withBench alone (controls only writes its mic file first; echo, bargein and vad bundle or prepare
  // audio first, which costs CPU and proves nothing more about cleanup).
  const BENCHES = ["audio", "controls", "providers", "reliability", "turn", "uplink", "vad-models"];

  test(`${BENCHES.join(", ")}: each fails naming the missing Chromium, and neither a backend nor any other child of the runner is left`, async () => {
    const marker = `BARGEIN_HYGIENE_RUN=${process.pid}-${Date.now()}`;
    const [markerName, markerValue] = marker.split("=");
    const run = runNode(
      `import { tracked } from "./bench/lib/cleanup.mjs";
       const benches = ${JSON.stringify(BENCHES)};
       for (const [i, name] of benches.entries()) {
         process.env.BENCH_PORT = String(9130 + i);
         const mod = await import("./bench/" + name + ".bench.mjs");
         const outcome = await mod.default().then(() => "RESOLVED", (err) => err.message.split("\\n")[0]);
         console.log("BENCH " + JSON.stringify({ name, port: 9130 + i, outcome, left: tracked() }));
       }`,
      { CHROMIUM_PATH: "/nonexistent/chromium", [markerName]: markerValue },
    );
    const r = await run.done;
    const lines = r.stdout.split("\n").filter((l) => l.startsWith("BENCH ")).map((l) => JSON.parse(l.slice(6)) as { name: string; port: number; outcome: string; left: string[] });
    expect(lines.map((l) => l.name)).toEqual(BENCHES);
    for (const l of lines) {
      expect(l.outcome, l.name).toMatch(/could not launch Chromium: no Chromium at \/nonexistent\/chromium .*the reference backend started for this bench \(port \d+, pid \d+\) is stopped/);
      expect(l.left, l.name).toEqual([]);
      expect(backendsOnPort(l.port), l.name).toEqual([]);
      expect(await isPortFree(l.port), l.name).toBe(true);
    }
    expect(r.code).toBe(0);
    // Nothing the runner started outlived it: no process still carries its marker.
    expect(processesWithMarker(marker)).toEqual([]);
  }, 180_000);
});
