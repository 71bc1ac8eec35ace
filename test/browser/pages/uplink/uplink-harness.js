// Drives N real kyutaiStt streams (browser WebSockets to the reference STT)
// with a synthetic 24 kHz signal, either through an Uplink each or through a
// naive sender (`send()` per frame, no queue), and samples what is pending on
// every push and on a short poll. Shared by test/browser/uplink.spec.ts and
// bench/uplink.bench.mjs; it never decides pass/fail, it only measures.
import { Uplink } from "/dist/advanced.js";
import { kyutaiStt } from "/dist/bargein.js";
import { sleep } from "/test/lib/wait.mjs";

const RATE = 24000;
/** kyutaiStt's wire cost: msgpack float32 is 5 bytes a sample. */
const BYTES_PER_SAMPLE = 5;

/** Opens one real kyutaiStt stream against this page's backend, with the knobs in `query`. */
export function openStt(query) {
  const provider = kyutaiStt({ urls: `ws://${location.host}/?${query}`, startupTimeoutMs: 10000 });
  return provider.connect();
}

/**
 * Kyutai's protocol has no gap message, so to exercise the "gap" policy on a
 * real socket the audio goes to the real stream and the gap markers are only
 * counted here (test and bench only; a provider with gaps would send them).
 */
export function gapCountingSink(stream) {
  const gaps = { markers: 0, samples: 0 };
  return {
    gaps,
    sendAudio: (pcm) => stream.sendAudio(pcm),
    get bufferedAmount() {
      return stream.bufferedAmount;
    },
    sendGap(samples) {
      gaps.markers++;
      gaps.samples += samples;
    },
  };
}

/**
 * Counts live timers of the whole page (setTimeout not yet fired or cleared).
 * The uplink promises one retry timer at most, whatever the backlog: with
 * nothing else running on the page, this census shows it.
 */
export function installTimerCensus() {
  if (window.timerCensus) return window.timerCensus;
  const census = { live: new Set(), max: 0, created: 0, reset() { this.max = this.live.size; this.created = 0; } };
  const { setTimeout: set, clearTimeout: clear } = window;
  window.setTimeout = function (fn, ms, ...args) {
    const id = set.call(window, (...a) => {
      census.live.delete(id);
      if (typeof fn === "function") fn(...a);
    }, ms, ...args);
    census.live.add(id);
    census.created++;
    census.max = Math.max(census.max, census.live.size);
    return id;
  };
  window.clearTimeout = function (id) {
    census.live.delete(id);
    clear.call(window, id);
  };
  window.timerCensus = census;
  return census;
}

/** A 220 Hz tone at 0.2 amplitude, continuous across frames. */
function toneSource() {
  let phase = 0;
  return (samples) => {
    const pcm = new Float32Array(samples);
    for (let i = 0; i < samples; i++) pcm[i] = 0.2 * Math.sin((2 * Math.PI * 220 * (phase + i)) / RATE);
    phase += samples;
    return pcm;
  };
}

/**
 * The naive sender's view of its socket buffer: which frames have left
 * `bufferedAmount` (their wait), and how old the oldest one still in it is.
 */
class NaiveTracker {
  constructor(stream) {
    this.stream = stream;
    this.sentBytes = 0;
    this.frames = []; // { end: cumulative byte offset, at }
    this.waits = [];
    this.oldestAgeMax = 0;
    this.pushedSamples = 0;
    this.sentSamples = 0;
  }
  push(pcm, capturedAt = performance.now()) {
    this.pushedSamples += pcm.length;
    this.sentBytes += this.stream.sendAudio(pcm);
    this.sentSamples += pcm.length;
    this.frames.push({ end: this.sentBytes, at: capturedAt });
  }
  get pendingBytes() {
    return this.stream.bufferedAmount;
  }
  sample(now) {
    const drained = this.sentBytes - this.stream.bufferedAmount;
    let i = 0;
    while (i < this.frames.length && this.frames[i].end <= drained) this.waits.push(now - this.frames[i++].at);
    if (i) this.frames.splice(0, i);
    const age = this.frames.length ? now - this.frames[0].at : 0;
    this.oldestAgeMax = Math.max(this.oldestAgeMax, age);
    return age;
  }
}

function quantile(values, q) {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Trace points in a row with a low queue for audio to count as flowing again, and how long a run waits for it. */
export const FLOWING_POINTS = 5;
const FLOWING_WAIT_MS = 30_000;

/**
 * Runs `streams` streams for `durationMs` (then lets them drain for up to
 * `drainMs`) and returns what was measured.
 * - mode "uplink": each stream has an Uplink (budgetMs, policy; "gap" goes
 *   through gapCountingSink); mode "naive": send() per frame.
 * - frameMs: frame length; frames are pushed at real-time cadence (a catch-up
 *   count per tick), or `framesPerTick` at once per tick when given (a burst).
 * - totalFrames: stop after this many frames per stream instead of durationMs.
 * - prime: first fill the kernel's socket buffers at burst speed (see below).
 * - untilFlowing: after durationMs, push on in real time until the last
 *   FLOWING_POINTS trace points of stream 0 show its queue at or under a
 *   quarter of the budget (audio flows again), for at most FLOWING_WAIT_MS
 *   more: how soon a stalled backlog drains turns on the machine's load, so
 *   the run waits for it rather than for a fixed window.
 */
export async function runStreams({
  streams = 1,
  query = "recognise=0",
  mode = "uplink",
  budgetMs = 500,
  policy = "gap",
  frameMs = 80,
  durationMs = 5000,
  drainMs = 5000,
  framesPerTick,
  totalFrames,
  pollMs = 5,
  prime = false,
  untilFlowing = false,
}) {
  const census = installTimerCensus();
  const opened = await Promise.all(Array.from({ length: streams }, () => openStt(query)));
  const frameSamples = Math.round((RATE * frameMs) / 1000);
  const links = opened.map((stream) => {
    if (mode === "naive") return { stream, naive: new NaiveTracker(stream), tone: toneSource() };
    const sink = policy === "gap" ? gapCountingSink(stream) : stream;
    const uplink = new Uplink(sink, { sampleRate: RATE, bytesPerSample: BYTES_PER_SAMPLE, budgetMs, policy });
    const link = { stream, sink, uplink, tone: toneSource(), overloads: 0, ended: false };
    uplink.on("overload", () => link.overloads++);
    uplink.on("ended", () => (link.ended = true));
    return link;
  });
  const budgetBytes = links[0].uplink?.budgetBytes ?? Math.round((budgetMs / 1000) * RATE * BYTES_PER_SAMPLE);
  census.reset();
  const obs = {
    samples: 0,
    overBudgetSamples: 0,
    pendingBytesMax: 0,
    bufferedAmountMax: 0,
    pendingFramesMax: 0,
    heapPeakBytes: performance.memory?.usedJSHeapSize ?? 0,
    afterPushOldestAgeMax: 0,
    trace: [], // [ms since start, pending bytes of stream 0, bufferedAmount of stream 0]
  };
  const t0 = performance.now();
  const observe = (now) => {
    for (const link of links) {
      const pending = link.naive ? link.naive.pendingBytes : link.uplink.pendingBytes;
      obs.samples++;
      if (pending > budgetBytes) obs.overBudgetSamples++;
      if (pending > obs.pendingBytesMax) obs.pendingBytesMax = pending;
      const buffered = link.stream.bufferedAmount;
      if (buffered > obs.bufferedAmountMax) obs.bufferedAmountMax = buffered;
      if (link.naive) link.naive.sample(now);
    }
    const heap = performance.memory?.usedJSHeapSize ?? 0;
    if (heap > obs.heapPeakBytes) obs.heapPeakBytes = heap;
  };
  let lastTrace = -Infinity;
  const flowingAgain = () => obs.trace.length >= FLOWING_POINTS && obs.trace.slice(-FLOWING_POINTS).every(([, pending]) => pending <= budgetBytes / 4);
  const poll = () => {
    const now = performance.now();
    observe(now);
    if (!links[0].naive) {
      for (const l of links) obs.pendingFramesMax = Math.max(obs.pendingFramesMax, l.uplink.pendingFrames);
      if (now - lastTrace >= 100) {
        lastTrace = now;
        obs.trace.push([Math.round(now - t0), links[0].uplink.pendingBytes, links[0].stream.bufferedAmount]);
      }
    } else if (now - lastTrace >= 100) {
      lastTrace = now;
      obs.trace.push([Math.round(now - t0), links[0].naive.pendingBytes, links[0].stream.bufferedAmount]);
    }
  };
  let framesPushed = 0;
  let primedMs = 0;
  /**
   * `capturedAt`: when a real microphone would have finished the frame. In the
   * real-time run that is the frame's due time, so a tick that runs late (a
   * busy page) hands over frames that are already old, as a late delivery from
   * the capture worklet would; priming bursts are "captured" as they are pushed.
   */
  const pushOne = (capturedAt) => {
    for (const link of links) {
      const pcm = link.tone(frameSamples);
      if (link.naive) link.naive.push(pcm, capturedAt);
      else link.uplink.push(pcm, capturedAt);
    }
    framesPushed++;
    observe(performance.now());
  };
  const pollTimer = setInterval(poll, pollMs);
  if (prime) {
    // On loopback the kernel and the browser's network service absorb megabytes
    // before `bufferedAmount` moves (README, "Uplink"). Priming fills them at
    // burst speed, through the same senders, until every socket shows
    // backpressure; only then does the real-time run start. Priming frames are
    // counted like any other (pushed, sent, gapped).
    // A burst alone makes bufferedAmount blink above 0 (the network service is
    // a hop away), so "full" means: above 0 at every check for 500 ms.
    const primeStart = performance.now();
    let fullSince = Infinity;
    while (performance.now() - primeStart < 60000) {
      const now = performance.now();
      if (links.every((l) => l.stream.bufferedAmount > 0)) {
        fullSince = Math.min(fullSince, now);
        if (now - fullSince >= 500) break;
      } else fullSince = Infinity;
      for (let i = 0; i < 20; i++) pushOne();
      await sleep(0);
    }
    primedMs = performance.now() - primeStart;
  }
  const tRun = performance.now();
  const primeFrames = framesPushed;
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - tRun;
      const due = framesPerTick ? framesPushed + framesPerTick : primeFrames + Math.floor(elapsed / frameMs);
      const planned = primeFrames + (totalFrames ?? Math.floor(durationMs / frameMs));
      const flowing = !untilFlowing || flowingAgain() || elapsed >= durationMs + FLOWING_WAIT_MS;
      const limit = flowing ? planned : Infinity;
      while (framesPushed < Math.min(due, limit)) {
        const k = framesPushed - primeFrames;
        pushOne(framesPerTick ? undefined : Math.min(performance.now(), tRun + (k + 1) * frameMs));
      }
      if (framesPushed >= limit) {
        clearInterval(tick);
        resolve();
      }
    }, framesPerTick ? 1 : Math.min(frameMs, 20));
  });
  const pushedForMs = performance.now() - tRun;
  // Drain: the uplinks empty their queues (or the naive socket buffers empty), within drainMs.
  const drainStart = performance.now();
  while (performance.now() - drainStart < drainMs) {
    const idle = links.every((l) => (l.naive ? l.stream.bufferedAmount === 0 : l.uplink.pendingFrames === 0 && l.stream.bufferedAmount === 0));
    if (idle) break;
    await sleep(20);
  }
  const drainedMs = performance.now() - drainStart;
  clearInterval(pollTimer);
  poll();
  const result = summarise({ links, obs, budgetBytes, census, framesPushed, pushedForMs, drainedMs, mode });
  result.primedMs = Math.round(primedMs);
  result.primeFramesPerStream = primeFrames;
  await Promise.all(opened.map((s) => s.close().catch(() => {})));
  for (const link of links) link.uplink?.close();
  return result;
}

function summarise({ links, obs, budgetBytes, census, framesPushed, pushedForMs, drainedMs, mode }) {
  const per = links.map((link) => {
    if (link.naive) {
      const n = link.naive;
      return {
        pendingBytesMax: 0,
        queueWaitMsP95: quantile(n.waits, 0.95),
        oldestFrameAgeMsMax: n.oldestAgeMax,
        oldestFrameAgeMsNow: n.frames.length ? performance.now() - n.frames[0].at : 0,
        admissionRejects: 0,
        gapSamples: 0,
        pushedSamples: n.pushedSamples,
        sentSamples: n.sentSamples,
        unsentAfterEndSamples: 0,
        queuedSamples: 0,
        pendingFrames: 0,
        overloads: 0,
        ended: false,
        gapMarkers: 0,
      };
    }
    const m = link.uplink.metrics;
    const queuedSamples = (m.pendingBytes - link.stream.bufferedAmount) / BYTES_PER_SAMPLE;
    return {
      pendingBytesMax: m.pendingBytesMax,
      queueWaitMsP95: m.queueWaitMsP95,
      oldestFrameAgeMsMax: m.oldestFrameAgeMsMax,
      oldestFrameAgeMsNow: m.oldestFrameAgeMs,
      expiredFrameAgeMsMax: m.expiredFrameAgeMsMax,
      arrivalAgeMsMax: m.arrivalAgeMsMax,
      arrivalAgeMsP95: m.arrivalAgeMsP95,
      lateArrivals: m.lateArrivals,
      admissionRejects: m.admissionRejects,
      gapSamples: m.gapSamples,
      pushedSamples: m.pushedSamples,
      sentSamples: m.sentSamples,
      unsentAfterEndSamples: m.unsentAfterEndSamples,
      queuedSamples,
      pendingFrames: m.pendingFrames,
      overloads: m.overloads,
      ended: link.ended,
      gapMarkers: link.sink.gaps?.markers ?? 0,
      gapSamplesCountedBySink: link.sink.gaps?.samples ?? 0,
    };
  });
  const sum = (k) => per.reduce((n, p) => n + (p[k] ?? 0), 0);
  const max = (k) => per.reduce((n, p) => Math.max(n, p[k] ?? 0), 0);
  const silentlyDroppedSamples = per.reduce(
    (n, p) => n + (p.pushedSamples - p.sentSamples - p.gapSamples - p.unsentAfterEndSamples - p.queuedSamples),
    0,
  );
  const pendingBytesMax = Math.max(obs.pendingBytesMax, max("pendingBytesMax"));
  return {
    mode,
    streams: links.length,
    budgetBytes,
    framesPushedPerStream: framesPushed,
    pushedForMs: Math.round(pushedForMs),
    drainedMs: Math.round(drainedMs),
    pendingBytesMax,
    overBudgetBytes: Math.max(0, pendingBytesMax - budgetBytes),
    overBudgetSamples: obs.overBudgetSamples,
    pendingSamplesTaken: obs.samples,
    bufferedAmountMax: obs.bufferedAmountMax,
    queueWaitMsP95: max("queueWaitMsP95"),
    oldestFrameAgeMsMax: max("oldestFrameAgeMsMax"),
    oldestFrameAgeMsAfterDrain: max("oldestFrameAgeMsNow"),
    expiredFrameAgeMsMax: max("expiredFrameAgeMsMax"),
    arrivalAgeMsMax: max("arrivalAgeMsMax"),
    arrivalAgeMsP95: max("arrivalAgeMsP95"),
    lateArrivals: sum("lateArrivals"),
    admissionRejects: sum("admissionRejects"),
    gapSamples: sum("gapSamples"),
    gapMarkers: sum("gapMarkers"),
    gapSamplesCountedBySink: sum("gapSamplesCountedBySink"),
    pushedSamples: sum("pushedSamples"),
    sentSamples: sum("sentSamples"),
    unsentAfterEndSamples: sum("unsentAfterEndSamples"),
    pendingFramesAfterDrain: sum("pendingFrames"),
    pendingFramesMax: obs.pendingFramesMax,
    overloads: sum("overloads"),
    endedStreams: per.filter((p) => p.ended).length,
    silentlyDroppedSamples,
    liveTimersMax: census.max,
    timersCreated: census.created,
    heapPeakBytes: obs.heapPeakBytes,
    trace: obs.trace,
  };
}

window.uplinkHarness = { runStreams, openStt, gapCountingSink, installTimerCensus };
window.uplinkHarnessReady = true;
