// VAD worker test page. Exposes `window.vadTest` for test/browser/vad.spec.ts.
// It counts, independently of the SDK, every VAD worker created and terminated
// and every message that reaches this (main) thread from one, by wrapping the
// global Worker constructor before the SDK uses it.
import { Microphone, VadWorker } from "/dist/advanced.js";
import { loadFixture } from "./fixtures.js";
import { sleep } from "/test/lib/wait.mjs";

const registry = { created: 0, terminated: 0, messages: 0 };
const NativeWorker = window.Worker;
window.Worker = class CountingWorker extends NativeWorker {
  constructor(url, options) {
    super(url, options);
    this.isVad = options?.name === "bargein-vad";
    if (!this.isVad) return;
    registry.created++;
    this.addEventListener("message", () => registry.messages++);
  }
  terminate() {
    if (this.isVad) registry.terminated++;
    super.terminate();
  }
};

function record(vad) {
  const events = [];
  for (const kind of ["speechStart", "speechRealStart", "speechQuiet", "speechResumed", "speechEnd", "turnPrediction", "misfire", "probability", "error"]) {
    vad.on(kind, (e) =>
      events.push(
        kind === "error"
          ? { kind, message: e.message }
          : {
              kind,
              sampleIndex: e.sampleIndex,
              audioLength: e.audio?.length,
              audioStartIndex: e.audioStartIndex,
              probability: e.probability,
              lastSpeechSampleIndex: e.lastSpeechSampleIndex,
              ...(kind === "turnPrediction" ? { error: e.error, inferenceMs: e.inferenceMs, audioSamples: e.audioSamples } : {}),
            },
      ),
    );
  }
  return events;
}

/**
 * Feeds a fixture from the main thread with feed(), waits with flush(); returns the events.
 * `endWhenQuiet: { atSample, quietMs }`: once the frames before `atSample` are through, asks
 * the worker to end the utterance once quiet `quietMs` (as the session does on an STT's end of turn).
 * `noticeQuiet`: ms of quiet after which the worker says `speechQuiet` (turn.preemptive), asked before the first frame.
 */
async function feedFixture(name, { endWhenQuiet, noticeQuiet, ...options } = {}) {
  const { samples, label } = await loadFixture(name);
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  const progress = [];
  vad.on("progress", (p) => progress.push(p));
  await vad.start();
  const events = record(vad);
  if (noticeQuiet !== undefined) vad.noticeQuiet(noticeQuiet);
  let asked = endWhenQuiet === undefined;
  for (let i = 0; i + 512 <= samples.length; i += 512) {
    if (!asked && i >= endWhenQuiet.atSample) {
      asked = true;
      await vad.flush();
      vad.endWhenQuiet(endWhenQuiet.quietMs);
    }
    vad.feed(samples.slice(i, i + 512), i);
  }
  await vad.flush();
  await vad.stop();
  const last = (asset) => progress.filter((p) => p.asset === asset).at(-1);
  return { label, events, loadMs: vad.loadMs, progress: { model: last("model"), wasm: last("wasm"), count: progress.length } };
}

/**
 * Streams a fixture to the VAD worker from a feeder worker through framePort(),
 * as the capture worklet will; counts messages that reach the main thread while
 * the frames flow.
 */
async function streamFixture(name, { meter = false, paceMs = 0, ...options } = {}) {
  const { samples, label } = await loadFixture(name);
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  await vad.start();
  if (meter) vad.setMeter(true);
  const events = record(vad);
  const feeder = new NativeWorker("./frame-feeder-worker.js");
  const done = new Promise((resolve) => (feeder.onmessage = (e) => resolve(e.data)));
  const messagesBefore = registry.messages;
  const port = vad.framePort();
  feeder.postMessage({ port, samples, paceMs }, [port]);
  const { frames } = await done;
  // The feeder is done posting; give the worker time to finish the last frames.
  const utterances = label.utterances.length;
  const deadline = performance.now() + 5000;
  while (events.filter((e) => e.kind === "speechEnd").length < utterances && performance.now() < deadline) {
    await sleep(20);
  }
  await sleep(300);
  const messages = registry.messages - messagesBefore;
  feeder.terminate();
  await vad.stop();
  return { label, frames, events, messages };
}

/**
 * The real capture path: the fixture plays in an AudioContext at the device's
 * rate into a MediaStream, which a Microphone (capture worklet) takes as its
 * injected input; the worklet posts 16 kHz frames straight to the VAD worker.
 * Returns the events with their sample indices mapped back to the fixture's.
 */
async function captureFixture(name) {
  const { samples, label } = await loadFixture(name);
  const context = new AudioContext();
  const vad = new VadWorker({ assetsPath: "/dist/", speechEndAudio: true });
  await vad.start();
  const events = record(vad);
  const heard = [];
  vad.on("speechEnd", (e) => heard.push({ audio: e.audio, startIndex: e.audioStartIndex }));
  const destination = context.createMediaStreamDestination();
  const mic = new Microphone({ context, assetsPath: "/dist/", input: destination.stream });
  const startedEvent = mic.once("started");
  await mic.start();
  const messagesBefore = registry.messages;
  mic.connectVad(vad.framePort());
  const started = mic.startedAt ?? (await startedEvent);
  const buffer = context.createBuffer(1, samples.length, 16000);
  buffer.copyToChannel(samples, 0);
  const source = new AudioBufferSourceNode(context, { buffer });
  source.connect(destination);
  const when = context.currentTime + 0.2;
  source.start(when);
  await new Promise((r) => (source.onended = r));
  const deadline = performance.now() + 3000;
  while (events.filter((e) => e.kind === "speechEnd").length < label.utterances.length && performance.now() < deadline) {
    await sleep(20);
  }
  const messages = registry.messages - messagesBefore;
  await mic.stop();
  await vad.stop();
  await context.close();
  // VAD-stream index of the fixture's sample 0, from the clocks: playback start
  // after capture start, plus the capture resampler's delay. The hop through
  // the MediaStream adds a latency of its own that no clock shows and that
  // varies from run to run (tens of ms here), so the index is measured instead:
  // where the utterance audio the worker returned lines up with the fixture.
  const nominalOffset = (when - started.frame / context.sampleRate + mic.vadDelaySeconds) * 16000;
  const match = heard[0] ? alignInFixture(heard[0].audio, samples, heard[0].startIndex, nominalOffset) : undefined;
  const offset = match?.offset ?? nominalOffset;
  return {
    label,
    contextRate: context.sampleRate,
    offset,
    nominalOffset,
    correlation: match?.correlation ?? 0,
    messages,
    events: events.map((e) => ({ ...e, fixtureSampleIndex: e.sampleIndex - offset })),
  };
}

/**
 * The offset (VAD-stream index minus fixture index) at which `audio`, which
 * starts at VAD-stream index `startIndex`, best matches the fixture: the peak
 * of the normalised cross-correlation of a 0.5 s stretch of its loudest part,
 * searched within ±0.3 s of the clocks' estimate.
 */
function alignInFixture(audio, fixture, startIndex, nominalOffset) {
  const WINDOW = 8000;
  const SEARCH = 4800;
  let from = 0;
  let loudest = -1;
  for (let i = 0; i + WINDOW <= audio.length; i += 800) {
    let energy = 0;
    for (let k = i; k < i + WINDOW; k++) energy += audio[k] * audio[k];
    if (energy > loudest) [loudest, from] = [energy, i];
  }
  const piece = audio.subarray(from, from + WINDOW);
  let best = { offset: nominalOffset, correlation: -1 };
  const centre = Math.round(startIndex + from - nominalOffset);
  for (let at = centre - SEARCH; at <= centre + SEARCH; at++) {
    if (at < 0 || at + WINDOW > fixture.length) continue;
    let dot = 0;
    let fixtureEnergy = 0;
    for (let k = 0; k < WINDOW; k++) {
      dot += piece[k] * fixture[at + k];
      fixtureEnergy += fixture[at + k] * fixture[at + k];
    }
    const correlation = dot / Math.sqrt(loudest * fixtureEnergy || 1);
    if (correlation > best.correlation) best = { offset: startIndex + from - at, correlation };
  }
  return best;
}

/**
 * Auto-pause: the worker posts pause/resume to a playback control port. The
 * page holds the port's other end here only to observe what the worker sends.
 */
async function autoPause(name, { armed = true, ...options } = {}) {
  const { samples } = await loadFixture(name);
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  await vad.start();
  const events = [];
  for (const kind of ["speechStart", "misfire", "speechEnd"]) {
    vad.on(kind, (e) => events.push({ kind, sampleIndex: e.sampleIndex, pausedPlayback: e.pausedPlayback, resumedPlayback: e.resumedPlayback }));
  }
  const control = new MessageChannel();
  const commands = [];
  control.port1.onmessage = (e) => commands.push(e.data);
  vad.connectPlaybackControl(control.port2);
  vad.setAutoPause(armed ? 1 : null);
  for (let i = 0; i + 512 <= samples.length; i += 512) vad.feed(samples.slice(i, i + 512), i);
  await vad.flush();
  await sleep(50);
  await vad.stop();
  control.port1.close();
  return { events, commands };
}

/**
 * pause() in the middle of an utterance, frames fed while paused, then resume()
 * and a second fixture. Returns the events in order, with a marker at each step.
 */
async function pauseResume(options = {}) {
  const first = await loadFixture("speech-slt");
  const second = await loadFixture("speech-rms");
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  await vad.start();
  const events = record(vad);
  const feedRange = (samples, from, to, base) => {
    for (let i = from; i + 512 <= to; i += 512) vad.feed(samples.slice(i, i + 512), base + i);
  };
  const pauseAt = first.label.utterances[0].onsetSample + 16000; // 1 s into speech
  feedRange(first.samples, 0, pauseAt, 0);
  await vad.flush();
  vad.pause();
  events.push({ kind: "-- paused" });
  // pause() travels on the worker's own port, frames on the feed port: two
  // ports have no order between them, so let the pause land first.
  await sleep(100);
  feedRange(first.samples, pauseAt, first.samples.length, 0);
  await vad.flush();
  vad.resume();
  events.push({ kind: "-- resumed" });
  feedRange(second.samples, 0, second.samples.length, first.samples.length);
  await vad.flush();
  await vad.stop();
  return { events: events.map((e) => e.kind), secondOnset: first.samples.length + second.label.utterances[0].onsetSample, starts: events.filter((e) => e.kind === "speechStart").map((e) => e.sampleIndex) };
}

/** Expects start() to fail; returns the error's name, url and message. */
async function startFailure(options) {
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  try {
    await vad.start();
    await vad.stop();
    return { name: "none" };
  } catch (err) {
    return { name: err.name, url: err.url, message: err.message, state: vad.state };
  }
}

function configError(options) {
  try {
    new VadWorker(options);
    return { name: "none" };
  } catch (err) {
    return { name: err.name, message: err.message };
  }
}

async function measureMemory() {
  if (typeof window.gc === "function") {
    window.gc();
    await sleep(50);
    window.gc();
  }
  if (!performance.measureUserAgentSpecificMemory) return null;
  const m = await performance.measureUserAgentSpecificMemory();
  const vadBytes = m.breakdown
    .filter((b) => b.attribution.some((a) => a.url?.includes("vad-worker.js")))
    .reduce((n, b) => n + b.bytes, 0);
  return { bytes: m.bytes, vadBytes };
}

/** start/stop `count` times, each with one frame through the model; memory after warm-up and at the end. */
async function cycles(count, warmup = 5) {
  const one = new Float32Array(512);
  let warm = null;
  let live = null;
  const loadMs = [];
  for (let i = 0; i < count; i++) {
    const vad = new VadWorker({ assetsPath: "/dist/" });
    await vad.start();
    loadMs.push(vad.loadMs);
    vad.feed(one.slice());
    await vad.flush();
    // Proves the measurement sees a live VAD worker, so a zero at the end means something.
    if (i === 0) live = await measureMemory();
    await vad.stop();
    if (i + 1 === warmup) warm = await measureMemory();
  }
  await sleep(200);
  const end = await measureMemory();
  return { registry: { ...registry }, live, warm, end, isolated: crossOriginIsolated, loadMs };
}

window.vadTest = { autoPause, pauseResume, feedFixture, streamFixture, captureFixture, startFailure, configError, cycles, registry };
window.vadReady = true;
