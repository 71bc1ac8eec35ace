// Where Debian's Chromium is, and the launch flags that work with it here
// (see TOOLCHAIN.md). CHROMIUM_ARGS are shared by the benchmarks and the
// browser tests; the tests launch with testChromiumArgs().
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--autoplay-policy=no-user-gesture-required",
  "--use-fake-ui-for-media-stream",
  "--use-fake-device-for-media-stream",
];

/**
 * The browser tests' launch flags: CHROMIUM_ARGS, with V8 held to its baseline wasm compiler
 * (Liftoff). By default V8 also recompiles onnxruntime's hot wasm with TurboFan on a background
 * thread after every VAD start, and on a 2-core machine that compile competes with the real-time
 * audio of the tests running beside it; Silero's frames run as fast on Liftoff's code at a test's
 * length. The tests assert what happened, not how fast, and the benches keep Chromium's defaults
 * (CHROMIUM_ARGS), so what a user's browser does is measured there.
 * `args`: more switches. `jsFlags`: more V8 flags (kept in this one --js-flags switch, since
 * Chromium reads only the last of several).
 */
export function testChromiumArgs({ args = [], jsFlags = [] } = {}) {
  return [...CHROMIUM_ARGS, `--js-flags=${["--liftoff-only", ...jsFlags].join(" ")}`, ...args];
}
