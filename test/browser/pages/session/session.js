// A VoiceSession on the real parts (worklets, VAD worker, providers) against
// the reference backend that serves this page. Known speech goes in through
// `input` in the same AudioContext, and the bot's output is recorded there too,
// so the test can look at real samples.
import { VoiceSession } from "/dist/bargein.js";
import { recordedOutput } from "./recorded-output.js";
import { referenceProvider } from "./reference-providers.js";
import { connectEchoPath } from "../echo/echo-path.js";
import { sleep, until as waitUntil } from "/test/lib/wait.mjs";
import { TEST_FLUSH_TIMEOUT_MS, TEST_UPLINK_BUDGET_MS } from "./loaded-machine.js";

/**
 * Every underrun the playback worklet reports ({ frame, generation }: the context frame where it ran
 * dry), heard on its node's port beside the Player's own handler: a test that compares what was
 * rendered with the span of the recording takes these gaps out (the worklet rendered nothing there).
 * And every flush it applied ({ frame, generation }: the quantum that applied it): nothing of the
 * flushed reply may sound after that quantum.
 */
const underruns = [];
const flushes = [];
const NativeAudioWorkletNode = window.AudioWorkletNode;
window.AudioWorkletNode = class TappedAudioWorkletNode extends NativeAudioWorkletNode {
  constructor(context, name, options) {
    super(context, name, options);
    if (name !== "bargein-playback") return;
    this.port.addEventListener("message", (e) => {
      if (e.data?.kind === "underrun") underruns.push({ frame: e.data.frame, generation: e.data.generation });
      if (e.data?.kind === "flushed") flushes.push({ frame: e.data.frame, generation: e.data.generation });
    });
  }
};

/**
 * `token`: the page's token function, when the backend was started with a token. `sampleRate`: the
 * context's rate (default: the output device's), as an engine or device with another rate would run it.
 */
export async function makeSession({ llm = "sse", input = "inject", sessionOptions = {}, echo, recordSeconds = 60, token, sampleRate } = {}) {
  const context = new AudioContext(sampleRate ? { sampleRate } : {});
  const { output, recorder } = await recordedOutput(context, { module: "/test/browser/pages/session/timeline-recorder.js", processor: "timeline-recorder", seconds: recordSeconds });
  const mic = context.createMediaStreamDestination();
  // Open speakers: the bot's output comes back into the mic through a room.
  const echoPath = echo ? connectEchoPath(context, output, mic, echo) : undefined;
  const log = { states: [], transcripts: [], errors: [], warnings: [], turns: [], interruptions: [], backchannels: [], vad: [], vadEvents: [], echoPath };
  const session = new VoiceSession({
    stt: referenceProvider("stt", "", {}, { token }),
    tts: referenceProvider("tts", "", {}, { token }),
    llm: referenceProvider(llm === "ws" ? "ws-llm" : "sse", "", {}, { token }),
    assetsPath: "/dist/",
    input: input === "inject" ? mic.stream : undefined,
    audio: { context, output },
    ...sessionOptions,
    // The specs on this page assert what Silero decides from the first frame (its timings, its echo
    // handling); listening before the model is ready, the SDK's default, has its own spec
    // (cold-start.spec.ts) and bench (`npm run bench -- coldstart`).
    vad: { waitForModel: true, ...sessionOptions.vad },
    // On a loaded machine the STT's last words can come later than the default 1.5 s flush wait, and the
    // turn then ends with what it had (a split question). These tests are about what the session does
    // with the words, so they wait longer; uplink.spec.ts tests the wait itself with its own value.
    turn: { flushTimeoutMs: TEST_FLUSH_TIMEOUT_MS, ...sessionOptions.turn },
    // Likewise a starved page hands the uplink frames older than the default 0.5 s budget, and the STT
    // stream is ended and reopened (the documented answer, with a warning): the uplink's own tests set
    // their budget; the others are not about it.
    uplink: { budgetMs: TEST_UPLINK_BUDGET_MS, ...sessionOptions.uplink },
  });
  session.on("state", (e) => log.states.push(e.state));
  session.on("transcript", (e) => e.final && log.transcripts.push(`${e.role}: ${e.text}`));
  session.on("error", (e) => log.errors.push(`${e.error.name}: ${e.error.message}`));
  session.on("warning", (e) => log.warnings.push(`${e.service}: ${e.message}`));
  session.on("turn", (e) => log.turns.push(e));
  session.on("interruption", (e) => log.interruptions.push(e));
  session.on("backchannel", (e) => log.backchannels.push(e));
  session.on("vad", (e) => {
    log.vad.push(e.kind);
    if (e.kind !== "meter") log.vadEvents.push({ kind: e.kind, direct: e.direct, contextTime: e.contextTime });
  });
  // The last load-progress report per asset, and the state it came in.
  log.progress = {};
  session.on("progress", (e) => (log.progress[e.asset] = { ...e, state: session.state }));
  const fixtures = new Map();
  /**
   * Plays a fixture (or `duration` s of it from `offset` s) into the injected mic. `fromOnset`:
   * from 20 ms before its speech onset, so the onset is now (see whenBotLoud).
   */
  async function say(name, { offset = 0, duration, fromOnset = false } = {}) {
    await preload(name);
    const { buffer, meta } = fixtures.get(name);
    if (fromOnset) offset = Math.max(0, envelopeOnsetSeconds(buffer) - 0.02);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(mic);
    // Scheduled one quantum ahead so that `startedAt` is exact, in context time.
    const startedAt = context.currentTime + 128 / context.sampleRate;
    source.start(startedAt, offset, duration);
    const onset = startedAt + Math.max(0, envelopeOnsetSeconds(source.buffer) - offset);
    return { startedAt, onset, offset, duration: duration ?? source.buffer.duration - offset, meta };
  }
  /**
   * Fetches and decodes a fixture (and its sidecar) now, so that a later say() of it starts at once:
   * on a loaded machine the fetch and decode took long enough for the bot to reach a pause meanwhile.
   */
  async function preload(name) {
    if (!fixtures.has(name)) {
      const [data, meta] = await Promise.all([fetch(`/test/fixtures/speech/${name}.wav`).then((r) => r.arrayBuffer()), fetch(`/test/fixtures/speech/${name}.json`).then((r) => r.json())]);
      fixtures.set(name, { buffer: await context.decodeAudioData(data), meta });
    }
    return fixtures.get(name);
  }
  /**
   * Waits until the last `windowS` of the output held the bot's speech (peak over `level`), so
   * that speech said now lands over the bot, not in a pause between its phrases.
   */
  async function whenBotLoud({ windowS = 0.2, level = 0.05, timeoutMs = 5000, freshS = 0.05 } = {}) {
    const end = performance.now() + timeoutMs;
    for (;;) {
      const { endFrame, samples } = await recordingTail(Math.round(windowS * context.sampleRate));
      let peak = 0;
      for (const v of samples) peak = Math.max(peak, Math.abs(v));
      // Loud up to no more than `freshS` ago: on a loaded machine the answer can come late enough for the
      // bot to have reached a pause by the time the caller speaks (the onset then lands in a gap).
      if (peak > level && context.currentTime - endFrame / context.sampleRate <= freshS) return;
      if (performance.now() > end) throw new Error(`the bot's output stayed under ${level} for ${timeoutMs} ms (or no answer came within ${freshS * 1000} ms)`);
      await sleep(peak > level ? 0 : 40);
    }
  }
  const recordingTail = (samples) => askRecorder({ kind: "tail", samples });
  const recording = () => askRecorder({ kind: "snapshot" });
  /** The recorder's answer to `message` (one request at a time). */
  function askRecorder(message) {
    return new Promise((resolve) => {
      recorder.port.onmessage = (e) => resolve(e.data);
      recorder.port.postMessage(message);
    });
  }
  underruns.length = 0;
  flushes.length = 0;
  return { session, context, log, say, preload, recording, whenBotLoud, underruns, flushes };
}

/**
 * Where speech starts, in seconds: the first 5 ms window whose RMS is within
 * -20 dB of the loudest window (the same labelling as test/fixtures/vad).
 */
export function envelopeOnsetSeconds(buffer) {
  const data = buffer.getChannelData(0);
  const window = Math.round(buffer.sampleRate * 0.005);
  const rms = [];
  for (let i = 0; i + window <= data.length; i += window) {
    let sum = 0;
    for (let j = i; j < i + window; j++) sum += data[j] * data[j];
    rms.push(Math.sqrt(sum / window));
  }
  const threshold = 0.1 * Math.max(...rms);
  return (rms.findIndex((v) => v >= threshold) * window) / buffer.sampleRate;
}

/** Waits for `cond`, checked every 20 ms; past `ms` it fails naming `what` (by default the condition's source). */
export function until(cond, ms = 30000, what = String(cond)) {
  return waitUntil(cond, ms, what, 20);
}

/** RMS of `samples` in windows of `window` samples. */
export function windowsRms(samples, window) {
  const out = [];
  for (let i = 0; i + window <= samples.length; i += window) {
    let sum = 0;
    for (let j = i; j < i + window; j++) sum += samples[j] * samples[j];
    out.push(Math.sqrt(sum / window));
  }
  return out;
}

window.sessionPage = { makeSession, until, sleep, windowsRms };
window.sessionPageReady = true;
