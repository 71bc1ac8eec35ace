// Scenarios for the Microphone and the capture worklet. Used by
// test/browser/audio-capture.spec.ts and bench/audio.bench.mjs.
import { Microphone } from "/dist/advanced.js";
import { startTicker } from "./ticker.js";
import { sleep } from "/test/lib/wait.mjs";


/** Collects the VAD frames the worklet posts to a port we own (standing in for the VAD worker). */
function vadSink(mic) {
  const channel = new MessageChannel();
  const frames = [];
  channel.port1.onmessage = (e) => frames.push(e.data);
  mic.connectVad(channel.port2);
  return frames;
}

/** The real capture path: Chromium's fake microphone (a beep), for ~1 s. */
async function fakeMicrophone({ ms = 1200 } = {}) {
  const context = new AudioContext();
  const mic = new Microphone({ context, assetsPath: "/dist/", uplink: { sampleRate: 16000, format: "s16", frameMs: 20 } });
  await mic.start();
  const frames = vadSink(mic);
  const uplink = [];
  mic.on("frame", (f) => uplink.push(f));
  const levels = [];
  mic.setMeter(true);
  mic.on("level", (l) => levels.push(l.rms));
  await sleep(ms);
  const tracks = mic.stream.getAudioTracks();
  const settings = tracks[0].getSettings();
  await mic.stop();
  const trackStates = tracks.map((t) => t.readyState);
  const rms = frames.map((f) => Math.sqrt(f.frame.reduce((s, x) => s + x * x, 0) / f.frame.length));
  await context.close();
  return {
    rate: context.sampleRate,
    frames: frames.length,
    kinds: [...new Set(frames.map((f) => f.kind))],
    lengths: [...new Set(frames.map((f) => f.frame.length))],
    types: [...new Set(frames.map((f) => f.frame.constructor.name))],
    // From the first frame the sink got: frames made before connectVad() found no port (on a loaded
    // machine the first one was made before the sink was connected).
    contiguous: frames.every((f, i) => f.sampleIndex === frames[0].sampleIndex + i * 512),
    loudFrames: rms.filter((x) => x > 0.01).length,
    maxRms: Math.max(...rms),
    uplinkFrames: uplink.length,
    uplinkLengths: [...new Set(uplink.map((f) => f.samples.length))],
    uplinkTypes: [...new Set(uplink.map((f) => f.samples.constructor.name))],
    levels: levels.length,
    maxLevel: Math.max(0, ...levels),
    echoCancellation: settings.echoCancellation,
    noiseSuppression: settings.noiseSuppression,
    autoGainControl: settings.autoGainControl,
    trackStates,
  };
}

/**
 * Known clicks injected through `input` (a MediaStreamAudioDestinationNode in
 * the same context). A recorder taps the capture worklet's own source node, so
 * the raw click frames are known exactly; the 16 kHz VAD stream and the 24 kHz
 * f32 uplink must put each click at (frame − capture start) × rate / contextRate
 * plus the resampler's stated delay.
 */

async function injectedClicks({ clicks = 4, profile = false, ms = 1600 } = {}) {
  const ticker = profile ? await startTicker() : undefined;
  const context = new AudioContext();
  const rate = context.sampleRate;
  // Chromium may skip a quantum while a context starts (seen at 0.10 s in CI): the capture then fills it with
  // silence, yet the clicks came out one quantum (46 samples at 16 kHz) off the recorder's frames. That is
  // start-up, not the resampler's delay under test: the mic starts once the context has run 0.3 s.
  for (let i = 0; i < 150 && context.currentTime < 0.3; i++) await sleep(20);
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const buffer = context.createBuffer(1, Math.round(rate * 1.2), rate);
  const data = buffer.getChannelData(0);
  const clickAt = [];
  for (let c = 0; c < clicks; c++) {
    const at = Math.round(rate * (0.1 + 0.25 * c)) + 37 * c; // off the quantum grid on purpose
    data[at] = 0.8;
    clickAt.push(at);
  }
  const destination = context.createMediaStreamDestination();
  destination.channelCount = 1;
  const mic = new Microphone({
    context,
    assetsPath: "/dist/",
    input: () => destination.stream,
    uplink: { sampleRate: 24000, format: "f32", frameMs: 80 },
    profile,
    profileClock: ticker?.buffer,
  });
  const started = mic.once("started");
  await mic.start();
  const frames = vadSink(mic);
  const uplink = [];
  mic.on("frame", (f) => uplink.push(f));
  const gaps = [];
  mic.on("gap", (g) => gaps.push(g));
  const tap = new AudioWorkletNode(context, "test-recorder", {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    channelCount: 1,
    channelCountMode: "explicit",
    processorOptions: { capacity: rate * 4 },
  });
  mic.source.connect(tap);
  tap.connect(context.destination);
  const capture = await started;
  const source = context.createBufferSource();
  source.buffer = buffer;
  source.connect(destination);
  const scheduledFrame = Math.round((context.currentTime + 0.1) * rate);
  source.start(scheduledFrame / rate);
  await sleep(ms);
  const raw = await new Promise((resolve) => {
    tap.port.onmessage = (e) => resolve(e.data);
    tap.port.postMessage({ kind: "snapshot" });
  });
  const profiled = profile ? await mic.profile() : undefined;
  ticker?.stop();
  await mic.stop();
  await context.close();

  const peaks = (samples, count, spacing) => {
    // The `count` largest local maxima, at least `spacing` apart, in time order.
    const found = [];
    const taken = new Uint8Array(samples.length);
    for (let c = 0; c < count; c++) {
      let best = -1;
      for (let i = 0; i < samples.length; i++) if (!taken[i] && (best < 0 || samples[i] > samples[best])) best = i;
      found.push(best);
      for (let i = Math.max(0, best - spacing); i < Math.min(samples.length, best + spacing); i++) taken[i] = 1;
    }
    return found.sort((a, b) => a - b);
  };
  // Each frame at its own sampleIndex (samples since the capture started): the VAD's port is connected
  // after start(), and a frame the worklet made before it arrived was never posted (CI under load: every
  // click one VAD frame, 512 samples, early when the frames were laid end to end from sample 0).
  const join = (list, key) => {
    const total = list.reduce((n, f) => Math.max(n, f.sampleIndex + f[key].length), 0);
    const out = new Float32Array(total);
    for (const f of list) out.set(f[key], f.sampleIndex);
    return out;
  };
  const rawPeaks = peaks(raw.samples, clicks, Math.round(rate * 0.1)).map((i) => raw.startFrame + i);
  const vadPeaks = peaks(join(frames, "frame"), clicks, 1600);
  const upPeaks = peaks(join(uplink, "samples"), clicks, 2400);
  const expected = (outRate, delaySeconds) =>
    rawPeaks.map((f) => ((f - capture.frame) * outRate) / rate + delaySeconds * outRate);
  return {
    rate,
    captureStartFrame: capture.frame,
    hopLatencyFrames: rawPeaks[0] - (scheduledFrame + clickAt[0]),
    gaps,
    recorderGaps: raw.gaps,
    vad: { peaks: vadPeaks, expected: expected(16000, mic.vadDelaySeconds), delaySeconds: mic.vadDelaySeconds },
    uplink: { peaks: upPeaks, expected: expected(24000, mic.uplinkDelaySeconds), delaySeconds: mic.uplinkDelaySeconds },
    uplinkLengths: [...new Set(uplink.map((f) => f.samples.length))],
    micros: profiled && Array.from(profiled.micros),
    meanMicrosByDate: profiled?.meanMicrosByDate,
    clock: profiled?.clock,
  };
}

/** getUserMedia refused (the spec launches Chromium without the fake permission UI). */
async function deniedMicrophone() {
  const context = new AudioContext();
  try {
    await new Microphone({ context, assetsPath: "/dist/" }).start();
    return { name: "none" };
  } catch (err) {
    return { name: err.name, reason: err.reason, message: err.message };
  } finally {
    await context.close();
  }
}

async function missingWorklet() {
  const context = new AudioContext();
  try {
    await new Microphone({ context, assetsPath: "/nowhere/" }).start();
    return { name: "none" };
  } catch (err) {
    return { name: err.name, url: err.url, message: err.message };
  } finally {
    await context.close();
  }
}

/** An AudioContext that cannot run (closed) fails with AudioContextError, not a hang. */
async function closedContext() {
  const context = new AudioContext();
  await context.close();
  try {
    await new Microphone({ context, assetsPath: "/dist/", input: () => new MediaStream() }).start();
    return { name: "none" };
  } catch (err) {
    return { name: err.name, message: err.message };
  }
}

window.audio = { fakeMicrophone, injectedClicks, deniedMicrophone, missingWorklet, closedContext };
window.audioReady = true;
