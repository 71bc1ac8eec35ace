// Healthy VoiceSessions on the reference backend while the page's main thread
// is busy (a busy loop of `busyMs` in every `periodMs`), several sessions at
// once in this page. It only measures, per session, where an uplink frame's
// time goes, so a test can say which part fell behind if one did:
// - capture → uplink (the main thread's delivery delay): the uplink's
//   arrivalAgeMs, from the capture worklet's context time;
// - uplink queue (the socket had no room: bufferedAmount not back to 0): the
//   uplink's queueWaitMs, and bufferedAmount seen at each send;
// - timers: how late a 10 ms probe timer fires on this page.
// It never decides pass/fail.
import { Microphone } from "/dist/advanced.js";
import { kyutaiStt } from "/dist/bargein.js";
import { makeSession, until } from "../session/session.js";
import { sleep } from "/test/lib/wait.mjs";

const ws = `ws://${location.host}`;

/** Keeps the main thread busy `busyMs` of every `periodMs`, until the returned function is called. */
export function startMainThreadLoad(busyMs = 50, periodMs = 60) {
  let running = true;
  let busyTotal = 0;
  const tick = () => {
    if (!running) return;
    const start = performance.now();
    while (performance.now() - start < busyMs) {
      // spin: a page rendering, as far as the event loop can tell
    }
    busyTotal += performance.now() - start;
    setTimeout(tick, periodMs - busyMs);
  };
  const startedAt = performance.now();
  setTimeout(tick, 0);
  return () => {
    running = false;
    return { busyFraction: busyTotal / (performance.now() - startedAt) };
  };
}

/** How late a `everyMs` timer fires, at most and at p95, while it runs. */
function timerProbe(everyMs = 10) {
  const lates = [];
  let last = performance.now();
  const id = setInterval(() => {
    const now = performance.now();
    lates.push(now - last - everyMs);
    last = now;
  }, everyMs);
  return () => {
    clearInterval(id);
    const sorted = lates.sort((a, b) => a - b);
    return { lateMsMax: sorted.at(-1) ?? 0, lateMsP95: sorted[Math.floor(0.95 * (sorted.length - 1))] ?? 0 };
  };
}

/**
 * The same capture worklet's frames, timed where they land: on this page's
 * main thread (uplink frames, where the Uplink lives today) and in a dedicated
 * worker (VAD frames on a port, where an uplink off the main thread would
 * live), both on the absolute clock (timeOrigin + now).
 * - `mainThreadAgeMs`: the audio clock's progress between a frame's end and
 *   its handling on the main thread (what the session's uplink counts as age
 *   on arrival);
 * - `mainBehindWorkerMs`: for each uplink frame, how much later the main
 *   thread handled it than the worker received the VAD frame that ended at or
 *   just after it (up to one 32 ms VAD frame early): the part of the delay a
 *   worker would have saved.
 */
/** The SDK's default uplink budget, which these sessions keep (the session test page's default is larger). */
const SDK_UPLINK_BUDGET_MS = 500;

export async function deliveryProbe(budgetMs = SDK_UPLINK_BUDGET_MS) {
  const context = new AudioContext();
  const tone = context.createOscillator();
  const stream = context.createMediaStreamDestination();
  tone.connect(stream);
  tone.start();
  const mic = new Microphone({ context, assetsPath: "/dist/", input: stream.stream, uplink: { sampleRate: 24000, format: "f32", frameMs: 80 } });
  await mic.start();
  const worker = new Worker("/test/browser/pages/uplink/delivery-probe-worker.js", { type: "module" });
  const channel = new MessageChannel();
  worker.postMessage({ kind: "port", port: channel.port2 }, [channel.port2]);
  mic.connectVad(channel.port1);
  let main = [];
  mic.on("frame", (e) => main.push([e.contextTime, performance.timeOrigin + performance.now(), (context.currentTime - e.contextTime) * 1000]));
  const summary = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
    return { frames: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: Math.round(sorted.at(-1) ?? 0), overBudget: sorted.filter((d) => d > budgetMs).length };
  };
  const collect = () => new Promise((resolve) => {
    worker.onmessage = (e) => resolve(e.data.arrivals);
    worker.postMessage({ kind: "report" });
  });
  return {
    /** Forgets what was measured so far (call when the measured period starts). */
    async reset() {
      main = [];
      await collect();
    },
    async report() {
      const fromWorker = await collect();
      const behind = [];
      let k = 0;
      for (const [contextTime, at] of main) {
        while (k < fromWorker.length && fromWorker[k][0] < contextTime) k++;
        if (k < fromWorker.length) behind.push(at - fromWorker[k][1]);
      }
      const result = { mainThreadAgeMs: summary(main.map((m) => m[2])), mainBehindWorkerMs: summary(behind) };
      await mic.stop();
      worker.terminate();
      await context.close();
      return result;
    },
  };
}

/** A kyutaiStt whose streams report what the socket held at each send, and the longest pause between sends. */
function watchedStt(query) {
  // Start-up is not what is measured: on a loaded machine the server loads a decoder per new stream (seconds).
  const inner = kyutaiStt({ urls: `${ws}/?${query}`, startupTimeoutMs: 30000 });
  // `heard`: the STT's words and flush markers ("|"), in the order the session read them.
  const socket = { sends: 0, bufferedAmountMax: 0, bufferedNonZeroSends: 0, sendIntervalMsMax: 0, connections: 0, heard: [] };
  return {
    socket,
    provider: {
      name: inner.name,
      audioFormat: inner.audioFormat,
      supportsGap: inner.supportsGap,
      async connect(signal) {
        const stream = await inner.connect(signal);
        socket.connections++;
        let lastSend = 0;
        const send = stream.sendAudio.bind(stream);
        stream.sendAudio = (pcm) => {
          const now = performance.now();
          const buffered = stream.bufferedAmount;
          socket.sends++;
          if (buffered > 0) socket.bufferedNonZeroSends++;
          socket.bufferedAmountMax = Math.max(socket.bufferedAmountMax, buffered);
          if (lastSend) socket.sendIntervalMsMax = Math.max(socket.sendIntervalMsMax, now - lastSend);
          lastSend = now;
          return send(pcm);
        };
        const events = stream.events.bind(stream);
        stream.events = async function* (signal) {
          for await (const e of events(signal)) {
            if (e.kind === "word") socket.heard.push(e.text);
            if (e.kind === "marker") socket.heard.push("|");
            yield e;
          }
        };
        return stream;
      },
    },
  };
}

const UPLINK_MAX_KEYS = ["arrivalAgeMsMax", "arrivalAgeMsP95", "queueWaitMsP95", "oldestFrameAgeMsMax", "expiredFrameAgeMsMax", "pendingBytesMax"];
/** Per stream, so the most any one stream carried: a stream opened by the last overload may have sent nothing yet. */
const STREAM_MAX_KEYS = ["sentSamples"];

/**
 * Runs `sessions` sessions at once for `durationMs` with the main thread busy
 * `busyMs` of every `periodMs` (0: idle), from when the last one listens. Each
 * says `fixture` once (`speakAtMs` after the load starts, 1.5 s apart).
 */
export async function busySessions({ sessions = 5, durationMs = 30000, busyMs = 50, periodMs = 60, sttQuery = "", fixture = "turn-on-lights", speakAtMs = 4000, uplink = {} } = {}) {
  const runs = [];
  for (let i = 0; i < sessions; i++) {
    const stt = watchedStt(sttQuery);
    const t = await makeSession({ sessionOptions: { stt: stt.provider, uplink: { budgetMs: SDK_UPLINK_BUDGET_MS, ...uplink }, vad: { loadTimeoutMs: 90000 } }, recordSeconds: 2 });
    runs.push({ t, stt, overloads: [], uplinkMax: {}, listeningAt: 0 });
  }
  for (const run of runs) {
    run.t.session.on("overload", (e) => run.overloads.push({ ...e, afterListeningMs: Math.round(performance.now() - run.listeningAt) }));
    // A session the reconnect policy gives up on ends, and its uplink's metrics go with its stream
    // (`metrics.uplink` is there while a stream is): they are kept as the fatal error found them.
    run.t.session.on("error", (e) => e.fatal && (run.uplinkAtEnd ??= run.t.session.metrics.uplink));
  }
  const sample = setInterval(() => {
    for (const run of runs) {
      const u = run.t.session.metrics.uplink;
      if (!u) continue;
      for (const k of UPLINK_MAX_KEYS) run.uplinkMax[k] = Math.max(run.uplinkMax[k] ?? 0, u[k] ?? 0);
      for (const k of STREAM_MAX_KEYS) run.uplinkMax[`${k}Max`] = Math.max(run.uplinkMax[`${k}Max`] ?? 0, u[k] ?? 0);
    }
  }, 250);
  // Started one after the other, then the load: five Silero models loading at
  // once on a busy two-core machine miss the VAD's start-up limit, and start-up
  // is not what is measured here. An overload at any time after `listening` counts.
  const began = performance.now();
  for (const [i, run] of runs.entries()) {
    await run.t.session.start();
    run.listeningAt = performance.now();
    console.log(`uplink-busy: session ${i + 1} listening after ${Math.round(run.listeningAt - began)} ms`);
  }
  const probe = await deliveryProbe(uplink.budgetMs ?? SDK_UPLINK_BUDGET_MS);
  await probe.reset();
  const stopLoad = busyMs > 0 ? startMainThreadLoad(busyMs, periodMs) : () => ({ busyFraction: 0 });
  const stopProbe = timerProbe();
  const loadedAt = performance.now();
  // Each session speaks once, staggered, so the STT has real speech to recognise.
  await Promise.all(
    runs.map(async (run, i) => {
      await sleep(speakAtMs + 1500 * i);
      await run.t.say(fixture);
    }),
  );
  console.log(`uplink-busy: all spoke by ${Math.round(performance.now() - loadedAt)} ms into the load`);
  await until(() => performance.now() - loadedAt >= durationMs, durationMs + 10000);
  clearInterval(sample);
  const timers = stopProbe();
  const delivery = await probe.report();
  const load = stopLoad();
  // A stream ended by an overload near the end of the load may still be reconnecting (its backoff, then the
  // new stream's Ready): each overload's new stream is waited for, so that its socket is counted.
  // (A session the policy gave up on opens no stream for its last overload.)
  const reconnected = (run) => run.stt.socket.connections >= 1 + run.overloads.length - (run.t.log.errors.length > 0 ? 1 : 0);
  await until(() => runs.every(reconnected), 20000).catch(() => {});
  const results = runs.map((run) => {
    const u = run.t.session.metrics.uplink ?? run.uplinkAtEnd ?? {};
    return {
      listenedBeforeLoadMs: Math.round(loadedAt - run.listeningAt),
      overloads: run.overloads,
      warnings: run.t.log.warnings,
      errors: run.t.log.errors,
      transcripts: run.t.log.transcripts,
      // The user's messages as the history keeps them (late words of a timed-out flush revise the last one).
      users: run.t.session.history.filter((m) => m.role === "user").map((m) => m.text),
      // What the turn did, to tell a turn cut short from words lost.
      states: run.t.log.states,
      vad: run.t.log.vadEvents.map((e) => e.kind),
      interruptions: run.t.log.interruptions.map((e) => ({ reason: e.reason, heardText: e.heardText, userTurnResumed: e.userTurnResumed })),
      uplink: {
        ...run.uplinkMax,
        admissionRejects: u.admissionRejects,
        lateArrivals: u.lateArrivals,
        gapSamples: u.gapSamples,
        sentSamples: u.sentSamples,
        pushedSamples: u.pushedSamples,
        unsentAfterEndSamples: u.unsentAfterEndSamples,
        budgetBytes: u.budgetBytes,
      },
      socket: run.stt.socket,
    };
  });
  await Promise.all(runs.map((run) => run.t.session.stop()));
  await Promise.all(runs.map((run) => run.t.context.close().catch(() => {})));
  return { sessions: results, timers, delivery, busyFraction: load.busyFraction };
}

window.uplinkBusy = { busySessions, startMainThreadLoad };
window.uplinkBusyReady = true;
