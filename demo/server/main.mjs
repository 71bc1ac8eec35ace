// `npm run demo`: the reference backend on 127.0.0.1 (PORT, default 8080).
// Env: HOST, PORT, BARGEIN_TOKEN (require auth_id / Bearer), BARGEIN_INSTANCE (echoed in
// the X-Bargein-Instance header: a bench checks that the backend answering is the one it spawned),
// BARGEIN_EXIT_WITH_PARENT=1 (exit once the spawning process is gone: see the end of this file),
// BARGEIN_KNOWN_SPEECH=DIR (read by backend.mjs: the STTs give a known test fixture's words exactly),
// BARGEIN_PRECOMPRESSED=0 (send every file as it is, never its .br or .gz copy).
// See demo/README.md.
// If pocketsphinx is missing it is installed when we are root (apt-get); otherwise
// the command is printed and the STT answers with an Error (the demo page then
// offers typed input).
import { forgetRecogniserCheck, recogniserAvailable } from "./pocketsphinx.mjs";
import { installCommand, tryInstallSpeechPackages } from "./speech-deps.mjs";
import { startReferenceBackend } from "./backend.mjs";

if (!(await recogniserAvailable())) {
  if (tryInstallSpeechPackages()) forgetRecogniserCheck();
  if (!(await recogniserAvailable())) {
    console.log(`speech recognition is off (pocketsphinx not found). To enable it run:\n  ${installCommand()}`);
    console.log("meanwhile the demo runs with typed input in place of speech (see demo/README.md).");
  }
}

const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? "127.0.0.1";
const backend = await startReferenceBackend({
  port,
  host,
  token: process.env.BARGEIN_TOKEN,
  instance: process.env.BARGEIN_INSTANCE || undefined,
  precompressed: process.env.BARGEIN_PRECOMPRESSED !== "0",
}).catch((err) => {
  // One line that names the cause (EADDRINUSE: a stale backend holds the port), not a stack:
  // whoever spawned us (a bench, the browser tests) shows the end of our stderr.
  const code = err?.code ? ` (${err.code})` : "";
  console.error(`reference backend: cannot listen on ${host}:${port}${code}: ${err?.message ?? err}` + (err?.code === "EADDRINUSE" ? `; stop what holds the port (lsof -iTCP:${port} -sTCP:LISTEN) or set PORT` : ""));
  process.exit(1);
});
console.log(`bargein reference backend on ${backend.url}/`);

for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => backend.close().then(() => process.exit(0)));
}

// BARGEIN_EXIT_WITH_PARENT=1 (set by the benches' startServer): exit when the process that spawned us is
// gone. A bench killed by a signal (a SIGSEGV in flite's WASI, a SIGKILL) never runs its `finally`, and
// its backend stayed behind holding the port. Checked once a second: an orphan is re-parented.
if (process.env.BARGEIN_EXIT_WITH_PARENT === "1") {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) {
      console.error(`reference backend: the process that started it (pid ${parent}) is gone; stopping`);
      void backend.close().finally(() => process.exit(0));
    }
  }, 1000).unref();
}
