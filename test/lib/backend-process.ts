// A reference backend in a process of its own, for the tests that drive a session against it in
// real time (the speech-to-speech session files, session-flux-end-of-turn). It stands in for a service on another machine, so
// it runs as the browser suite's backends do (playwright.config.ts): `nice -n -10` where the user may
// raise a priority, its own event loop, its own core when one is free. In the test's own thread, the
// emulators' synchronous work (flite synthesises a whole reply at once) blocked the session's event
// loop on a loaded machine: the microphone's frames then went out in one late burst, and the uplink
// ended the stream for falling behind its budget ("reconnecting overload"), which no page's
// microphone would do.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface BackendProcess {
  url: string;
  wsUrl: string;
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("../../demo/server/main.mjs", import.meta.url));
const READY = /bargein reference backend on (http:\/\/[^/\s]+)\//;

/** Starts demo/server/main.mjs on a free port; `token`: the key its emulators require (BARGEIN_TOKEN). */
export function startBackendProcess({ token }: { token?: string } = {}): Promise<BackendProcess> {
  const child = spawn("nice", ["-n", "-10", process.execPath, "--no-turbo-fast-api-calls", MAIN], {
    env: { ...process.env, PORT: "0", BARGEIN_EXIT_WITH_PARENT: "1", ...(token ? { BARGEIN_TOKEN: token } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let stdout = "";
    const onData = (chunk: Buffer) => {
      stdout += chunk;
      const match = READY.exec(stdout);
      if (!match) return;
      child.stdout.off("data", onData);
      child.stdout.resume();
      resolve({ url: match[1], wsUrl: match[1].replace(/^http/, "ws"), close });
    };
    child.stdout.on("data", onData);
    child.once("error", (error) => reject(new Error(`could not start the reference backend (${MAIN}): ${error.message}`)));
    child.once("exit", (code, signal) => reject(new Error(`the reference backend exited before it listened (code ${code}, signal ${signal}): ${stderr.trim() || stdout.trim()}`)));
  });
}
