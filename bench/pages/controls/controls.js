// `npm run bench -- controls`, the page side: the session's controls on the
// real parts (capture and playback worklets, the Silero VAD worker, the
// reference backend), with Chromium's fake microphone (a looping file given by
// the bench) as the input. The session is the test page's
// (test/browser/pages/session/session.js, `input: "microphone"`).
//
// - unmute(): main-thread time from the call to the first `vad` meter event
//   whose level is not silent, and, from the same trials, to the capture
//   worklet's first non-silent `level` message (seen on its port, below).
// - setInputDevice(): the `inputDevice` event's gapMs, swapping between two
//   fake inputs.
// - start(): from the call to the `listening` state (one per page load).
// - getLevels({ bins: true }) from requestAnimationFrame, and nothing read.
import { makeSession, until } from "/test/browser/pages/session/session.js";

// The capture worklet's node, to see its own `level` messages (with their
// context time) beside the SDK's listener: a subclass recording the nodes made
// as "bargein-capture". Only observes; the SDK's node is otherwise untouched.
const captureNodes = [];
const NativeWorkletNode = window.AudioWorkletNode;
window.AudioWorkletNode = class extends NativeWorkletNode {
  constructor(context, name, options) {
    super(context, name, options);
    if (name === "bargein-capture") captureNodes.push(this);
  }
};

// Where start()'s time goes, by observe-only wrappers around the browser APIs
// it calls (the SDK is not touched): getUserMedia, each worklet module, the VAD
// worker until its "ready" message (and the load time it reports), and each
// WebSocket until it opens and until its first message (the STT's handshake).
/** Phases since the last `phases.length = 0`: { what, startMs, endMs } in performance.now() time. */
const phases = [];
const since = (what, startMs, extra = {}) => phases.push({ what, startMs, endMs: performance.now(), ...extra });
const nativeGetUserMedia = MediaDevices.prototype.getUserMedia;
MediaDevices.prototype.getUserMedia = async function (...args) {
  const startMs = performance.now();
  try {
    return await nativeGetUserMedia.apply(this, args);
  } finally {
    since("getUserMedia", startMs);
  }
};
const nativeAddModule = AudioWorklet.prototype.addModule;
AudioWorklet.prototype.addModule = async function (url, ...rest) {
  const startMs = performance.now();
  try {
    return await nativeAddModule.call(this, url, ...rest);
  } finally {
    since(`addModule ${new URL(url, location.href).pathname}`, startMs);
  }
};
const NativeWorker = window.Worker;
window.Worker = class extends NativeWorker {
  constructor(url, options) {
    super(url, options);
    const startMs = performance.now();
    const onReady = (e) => {
      if (e.data?.kind !== "ready" && e.data?.kind !== "load-error") return;
      since(`worker ${e.data.kind}`, startMs, { workerLoadMs: e.data.loadMs });
      this.removeEventListener("message", onReady);
    };
    this.addEventListener("message", onReady);
  }
};
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(url, protocols) {
    super(url, protocols);
    const startMs = performance.now();
    const path = new URL(url, location.href).pathname;
    this.addEventListener("open", () => since(`ws open ${path}`, startMs), { once: true });
    this.addEventListener("message", () => since(`ws first message ${path}`, startMs), { once: true });
  }
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A small seeded generator, so the trials' random waits are the same on every run. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Calls `fn(message, now)` for each message the session's capture worklet posts to the main thread. */
function onCaptureMessage(fn) {
  const node = captureNodes.at(-1);
  if (!node) throw new Error("no bargein-capture AudioWorkletNode was made: the hook on AudioWorkletNode did not see the session's capture");
  const listener = (e) => fn(e.data, performance.now());
  node.port.addEventListener("message", listener);
  return () => node.port.removeEventListener("message", listener);
}

function errorsOf(t) {
  return [...t.log.errors, ...(window.cspViolations ?? []).map((v) => `CSP: ${v}`)];
}

/**
 * Unmute trials: mute, wait until both the meter and the capture's level read
 * silence (exact zeros: a muted capture sends zeros), wait a random 100–300 ms
 * (so the unmute falls at a random phase of the meter's cadence), then unmute
 * at t0 and wait for the first non-silent meter event and capture level.
 * Then the input device swaps, on the same session.
 */
async function controls({ trials, threshold, settleMs: [settleMin, settleMax], timeoutMs, swaps, swapHoldMs, seed }) {
  const random = lcg(seed);
  const t = await makeSession({ input: "microphone", sessionOptions: { meter: true, vad: { meterIntervalMs: 32 } } });
  let onMeter = null;
  let onLevel = null;
  t.session.on("vad", (e) => {
    if (e.kind === "meter") onMeter?.(e.level, performance.now());
  });
  const swapEvents = [];
  t.session.on("inputDevice", (e) => swapEvents.push({ ...e, at: performance.now() }));
  await t.session.start();
  const offCapture = onCaptureMessage((m, now) => {
    if (m?.kind === "level") onLevel?.(m.rms, m.contextTime, now);
  });
  try {
    // The input unmuted, for 2 s: its level never reads silent (else a trial would wait for the speaker, not the SDK).
    const unmuted = { meter: [], capture: [] };
    onMeter = (level) => unmuted.meter.push(level);
    onLevel = (rms) => unmuted.capture.push(rms);
    await sleep(2000);
    onMeter = onLevel = null;

    const rows = [];
    for (let i = 0; i < trials; i++) {
      t.session.mute();
      const mutedAt = performance.now();
      let meterSilent = false;
      let levelSilent = false;
      onMeter = (level) => (meterSilent ||= level <= threshold);
      onLevel = (rms) => (levelSilent ||= rms <= threshold);
      await until(() => meterSilent && levelSilent, 3000, "silent meter and capture levels after mute()");
      const silentAfterMs = performance.now() - mutedAt;
      await sleep(settleMin + random() * (settleMax - settleMin));
      const row = { silentAfterMs };
      let resolveDone;
      const done = new Promise((r) => (resolveDone = r));
      const check = () => row.meterMs !== undefined && row.levelMs !== undefined && resolveDone();
      onMeter = (level, now) => {
        if (row.meterMs === undefined && level > threshold) row.meterMs = now - t0;
        check();
      };
      onLevel = (rms, contextTime, now) => {
        if (row.levelMs === undefined && rms > threshold) {
          row.levelMs = now - t0;
          row.levelWindowEndAudioMs = (contextTime - c0) * 1000;
        }
        check();
      };
      const c0 = t.context.currentTime;
      const t0 = performance.now();
      t.session.unmute();
      row.callMs = performance.now() - t0;
      await Promise.race([done, sleep(timeoutMs)]);
      onMeter = onLevel = null;
      row.state = t.session.state;
      rows.push(row);
      await sleep(100 + random() * 100);
    }

    // setInputDevice(): two fake inputs in turn (not "default", which is one of them again).
    const inputs = (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === "audioinput");
    const named = inputs.filter((d) => d.deviceId !== "default" && d.deviceId !== "communications");
    const pair = named.length >= 2 ? named.slice(-2) : inputs.slice(-2);
    if (pair.length < 2) throw new Error(`fewer than two fake audio inputs: ${JSON.stringify(inputs.map((d) => d.label))}`);
    const swapRows = [];
    for (let i = 0; i < swaps; i++) {
      const target = pair[i % 2];
      const before = swapEvents.length;
      const t0 = performance.now();
      await t.session.setInputDevice(target.deviceId);
      const callMs = performance.now() - t0;
      const event = swapEvents[before];
      swapRows.push({ to: target.label, gapMs: event?.gapMs ?? null, reason: event?.reason, callMs, state: t.session.state });
      await sleep(swapHoldMs);
    }
    const devices = t.session.metrics.devices;
    return {
      trials: rows,
      unmutedLevel: {
        meterMin: Math.min(...unmuted.meter),
        meterMax: Math.max(...unmuted.meter),
        meterEvents: unmuted.meter.length,
        captureMin: Math.min(...unmuted.capture),
        captureMax: Math.max(...unmuted.capture),
        captureEvents: unmuted.capture.length,
      },
      inputs: inputs.map((d) => d.label || d.deviceId),
      swapPair: pair.map((d) => d.label || d.deviceId),
      swaps: swapRows,
      devices,
      reconnects: t.log.warnings.filter((w) => w.startsWith("stt:")),
      states: [...new Set(t.log.states)],
      errors: errorsOf(t),
    };
  } finally {
    offCapture();
    await t.session.stop();
    await t.context.close();
  }
}

/** Calls `fn` on every animation frame for `ms`. */
function everyFrame(ms, fn) {
  return new Promise((resolve) => {
    const start = performance.now();
    const frame = () => {
      fn();
      if (performance.now() - start < ms) requestAnimationFrame(frame);
      else resolve(performance.now() - start);
    };
    requestAnimationFrame(frame);
  });
}

/**
 * The visualizer on a session with the meter off. "Off" first (no analyser
 * exists yet): `seconds` with no read, the AnalyserNode methods and
 * createAnalyser wrapped to count (and time) any call; then "on":
 * getLevels({ bins: true }) on every animation frame for `seconds`, each call
 * timed by performance.now() around it (the wrappers removed first).
 */
async function visualizer({ seconds, breakdownSeconds }) {
  const t = await makeSession({ input: "microphone" });
  await t.session.start();
  await sleep(1000);
  const longTasks = [];
  const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => ({ start: e.startTime, ms: e.duration }))));
  try {
    observer.observe({ type: "longtask", buffered: false });
  } catch {
    /* no longtask entries in this browser: reported as null below */
  }
  try {
    // Off: count and time every analyser call anything makes on the page while no one reads.
    const wrapped = [];
    const counted = { createAnalyser: 0, analyserReads: 0, analyserMs: 0 };
    const wrap = (proto, name, onCall) => {
      const original = proto[name];
      wrapped.push(() => (proto[name] = original));
      proto[name] = function (...args) {
        const t0 = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          onCall(performance.now() - t0);
        }
      };
    };
    wrap(BaseAudioContext.prototype, "createAnalyser", () => counted.createAnalyser++);
    for (const m of ["getFloatTimeDomainData", "getByteTimeDomainData", "getByteFrequencyData", "getFloatFrequencyData"]) {
      wrap(AnalyserNode.prototype, m, (ms) => {
        counted.analyserReads++;
        counted.analyserMs += ms;
      });
    }
    const captureMessages = {};
    const offCapture = onCaptureMessage((m) => (captureMessages[m?.kind] = (captureMessages[m?.kind] ?? 0) + 1));
    let meterEvents = 0;
    const offVad = t.session.on("vad", (e) => e.kind === "meter" && meterEvents++);
    const offStart = performance.now();
    await sleep(seconds * 1000);
    const offS = (performance.now() - offStart) / 1000;
    offCapture();
    offVad();
    for (const restore of wrapped.splice(0)) restore();
    const offLong = longTasks.splice(0);

    // On: getLevels({ bins: true }) each animation frame, as a visualizer reads it.
    const calls = [];
    let firstCallMs;
    let binsLength = 0;
    let maxBin = 0;
    const onS =
      (await everyFrame(seconds * 1000, () => {
        const t0 = performance.now();
        const levels = t.session.getLevels({ bins: true });
        const ms = performance.now() - t0;
        if (firstCallMs === undefined) firstCallMs = ms;
        else calls.push(ms);
        binsLength = levels.input.bins?.length ?? 0;
        if (levels.input.bins) for (const b of levels.input.bins) maxBin = Math.max(maxBin, b);
      })) / 1000;
    const onLong = longTasks.splice(0);

    // Where a read's time goes: getLevels() without bins for `breakdownSeconds`, then with bins and
    // each AnalyserNode method call timed by a wrapper (its own cost is two performance.now() calls).
    // The floor of this way of timing: the same pair of performance.now() calls around nothing, once a frame.
    const floorCalls = [];
    await everyFrame(breakdownSeconds * 1000, () => {
      const t0 = performance.now();
      floorCalls.push(performance.now() - t0);
    });
    // What any call into the page's JS costs in the same place (a getter of the session's, no work):
    // on a shared, loaded machine the first JS of a frame runs cold, whatever it does.
    const trivialCalls = [];
    await everyFrame(breakdownSeconds * 1000, () => {
      const t0 = performance.now();
      void t.session.muted;
      trivialCalls.push(performance.now() - t0);
    });
    const plainCalls = [];
    const plainS =
      (await everyFrame(breakdownSeconds * 1000, () => {
        const t0 = performance.now();
        t.session.getLevels();
        plainCalls.push(performance.now() - t0);
      })) / 1000;
    const byMethod = {};
    for (const m of ["getFloatTimeDomainData", "getByteFrequencyData"]) {
      wrap(AnalyserNode.prototype, m, (ms) => {
        const o = (byMethod[m] ??= { calls: 0, ms: 0 });
        o.calls++;
        o.ms += ms;
      });
    }
    const wrappedCalls = [];
    const wrappedS =
      (await everyFrame(breakdownSeconds * 1000, () => {
        const t0 = performance.now();
        t.session.getLevels({ bins: true });
        wrappedCalls.push(performance.now() - t0);
      })) / 1000;
    for (const restore of wrapped.splice(0)) restore();
    return {
      breakdown: { floor: floorCalls, trivial: trivialCalls, plain: { seconds: plainS, calls: plainCalls }, bins: { seconds: wrappedS, calls: wrappedCalls, byMethod } },
      off: { seconds: offS, ...counted, captureMessages, meterEvents, longTasks: offLong },
      on: { seconds: onS, firstCallMs, calls, binsLength, maxBin, longTasks: onLong },
      longTaskSupported: PerformanceObserver.supportedEntryTypes?.includes("longtask") ?? false,
      errors: errorsOf(t),
    };
  } finally {
    observer.disconnect();
    await t.session.stop();
    await t.context.close();
  }
}

/** One start(): from the call to the `listening` state, with its load progress and the page's resource timings. */
async function startOnce() {
  const t = await makeSession({ input: "microphone" });
  const progress = [];
  let listeningAt;
  t.session.on("progress", (e) => progress.push({ ...e, at: performance.now() }));
  t.session.on("state", (e) => {
    if (e.state === "listening" && listeningAt === undefined) listeningAt = performance.now();
  });
  const before = new Set(performance.getEntriesByType("resource").map((r) => r.name));
  phases.length = 0;
  const t0 = performance.now();
  try {
    await t.session.start();
    const resolvedMs = performance.now() - t0;
    await until(() => listeningAt !== undefined, 5000, "the listening state after start() resolved");
    const assets = {};
    for (const e of progress) {
      const a = (assets[e.asset] ??= { url: e.url, total: e.total, events: 0, firstMs: e.at - t0 });
      a.events++;
      a.loaded = e.loaded;
      a.lastMs = e.at - t0;
      if ("cached" in e) a.cached = e.cached;
      if (a.doneMs === undefined && e.total > 0 && e.loaded >= e.total) a.doneMs = e.at - t0;
    }
    // What the page itself fetched for start() (worklet modules, the worker script): transferSize 0 with a body is a cache hit.
    const resources = performance
      .getEntriesByType("resource")
      .filter((r) => !before.has(r.name) && r.name.includes("/dist/"))
      .map((r) => ({ name: new URL(r.name).pathname, transferSize: r.transferSize, decodedBodySize: r.decodedBodySize, durationMs: r.duration }));
    const round = (v) => Math.round(v * 10) / 10;
    return {
      startToListeningMs: listeningAt - t0,
      // Each phase's start and end, ms from the start() call.
      phases: phases.map((p) => ({ what: p.what, fromMs: round(p.startMs - t0), toMs: round(p.endMs - t0), ...(p.workerLoadMs !== undefined ? { workerLoadMs: round(p.workerLoadMs) } : {}) })),
      resolvedMs,
      assets,
      progressEvents: progress.length,
      progressHasCached: progress.some((e) => "cached" in e),
      resources,
      errors: errorsOf(t),
    };
  } finally {
    await t.session.stop();
    await t.context.close();
  }
}

window.controlsBench = { controls, visualizer, startOnce };
window.benchReady = true;
