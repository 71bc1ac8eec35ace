// Firefox froze as the bot's reply began to play: its AudioContext.outputLatency getter (and
// getOutputTimestamp(), which calls it) can block the main thread for ever when read while the
// graph plays (test/engines/README.md, "Firefox's freeze"). Each trial is a fresh AudioContext with
// the SDK's parts in it, and reads the latency at the moment the SDK needs it: when the Player
// reports its first sample. Gecko keeps its first non-zero answer for the page (all trials of a
// page read the same value), so only a page's first read can block: a test opens fresh pages.
//
// `read`: "player" (Player.outputLatency, what the SDK reads), "getter" (context.outputLatency
// there, what the SDK read before the fix), "timestamp" (context.getOutputTimestamp() there), or
// "none". `mic`: also capture the default microphone (a duplex stream, as a session has).
// `?dist=FOLDER` loads another build of the SDK (to show the test hangs without the fix).
const DIST = new URLSearchParams(location.search).get("dist") ?? "/dist/";
const { Microphone, Player } = await import(`${DIST}advanced.js`);

const TONE_S = 0.3;

async function trial({ read, mic }) {
  const context = new AudioContext({ latencyHint: "interactive" });
  let early = null;
  if (read === "early") {
    await context.resume();
    early = context.outputLatency;
  }
  const player = new Player({ context, assetsPath: DIST });
  const parts = [player.start()];
  let microphone;
  if (mic) {
    microphone = new Microphone({ context, assetsPath: DIST });
    parts.push(microphone.start());
  }
  await Promise.all(parts);
  const started = new Promise((resolve) => player.on("started", resolve));
  const tone = new Float32Array(Math.round(TONE_S * context.sampleRate));
  for (let i = 0; i < tone.length; i++) tone[i] = 0.2 * Math.sin((2 * Math.PI * 440 * i) / context.sampleRate);
  player.write(tone, { sampleRate: context.sampleRate, generation: 1 });
  player.end(1);
  await started;
  let latency = null;
  if (read === "player") latency = player.outputLatency;
  else if (read === "getter" || read === "early") latency = context.outputLatency;
  else if (read === "timestamp") latency = context.currentTime - context.getOutputTimestamp().contextTime;
  await new Promise((resolve) => player.on("ended", resolve));
  microphone?.stop();
  player.close();
  await context.close();
  return { early, latency, sampleRate: context.sampleRate };
}

/** Runs `trials` trials one after another; `done` counts those that came back (a frozen page stops counting). */
window.latencyProbe = { done: 0, results: [] };
window.runLatencyTrials = async (options) => {
  for (let i = 0; i < options.trials; i++) {
    window.latencyProbe.results.push(await trial(options));
    window.latencyProbe.done++;
    // On the engine's stdout too: a frozen page cannot be asked how far it got.
    console.log(`output-latency trial ${i + 1} of ${options.trials} done`);
  }
  return window.latencyProbe.results;
};
window.latencyProbeReady = true;
