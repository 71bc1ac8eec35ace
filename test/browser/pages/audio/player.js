// Scenarios for the Player, recorded inside the same AudioContext by a
// test-only recorder node placed after the player. Used by
// test/browser/audio-player.spec.ts and bench/audio.bench.mjs.
import { Player } from "/dist/advanced.js";
import { accountPauses, generationOf, generationSignal, silenceFrom } from "./analysis.js";
import { prng } from "/test/lib/prng.mjs";
import { startTicker } from "./ticker.js";
import { recorderNode } from "./recorder-node.js";
import { sleep } from "/test/lib/wait.mjs";


async function rig({ prebufferMs, profile, profileClock, seconds = 60 } = {}) {
  const context = new AudioContext();
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const clockBuffer = typeof SharedArrayBuffer === "function" && crossOriginIsolated ? new SharedArrayBuffer(4) : undefined;
  const recorder = recorderNode(context, seconds, clockBuffer);
  recorder.connect(context.destination);
  const player = new Player({ context, assetsPath: "/dist/", destination: recorder, prebufferMs, profile, profileClock });
  await player.start();
  const clock = clockBuffer && new Int32Array(clockBuffer);
  return {
    context,
    player,
    rate: context.sampleRate,
    fade: Math.min(128, Math.round(0.005 * context.sampleRate)),
    snapshot: () =>
      new Promise((resolve) => {
        recorder.port.onmessage = (e) => resolve(e.data);
        recorder.port.postMessage({ kind: "snapshot" });
      }),
    /** The render quantum the audio thread is on now (exact with SAB; else from currentTime). */
    audioFrame: () => (clock ? Atomics.load(clock, 0) : Math.round(context.currentTime * context.sampleRate)),
  };
}

/**
 * A worker that pauses and resumes playback by token, as the VAD worker does:
 * through the shared control block (`via: "shared"`, crossOriginIsolated
 * pages only) or through a control port (`via: "port"`). Each call resolves
 * once the worker has sent the command.
 */
async function controlWorker(player, via) {
  const worker = new Worker("/test/browser/pages/audio/playback-control-worker.js", { type: "module" });
  const port = player.createControlPort();
  const buffer = via === "shared" ? player.controlBuffer : undefined;
  if (via === "shared" && !buffer) throw new Error("no controlBuffer on this page");
  await new Promise((resolve, reject) => {
    worker.onerror = (e) => reject(new Error(`control worker: ${e.message}`));
    worker.onmessage = resolve;
    worker.postMessage({ kind: "attach", port, buffer }, [port]);
  });
  const send = (kind, token) =>
    new Promise((resolve) => {
      worker.onmessage = resolve;
      worker.postMessage({ kind, token });
    });
  return {
    pause: (token) => send("pause", token),
    resume: (token) => send("resume", token),
    close: () => worker.terminate(),
  };
}

/** Resolves with `promise`'s value, or undefined after `ms` (so a held player fails an assertion, not the test's timeout). */
const within = (promise, ms) => Promise.race([promise, sleep(ms).then(() => undefined)]);

/** Longest run of zeros in samples[from, to). */
function longestSilence(samples, from, to) {
  let longest = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    run = samples[i] === 0 ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** Random flushes while audio plays: samples heard after the flush is applied, and after it is requested. */
async function flushes({ count = 5, seed = 1 } = {}) {
  const r = await rig({ seconds: count * 0.4 + 5 });
  const random = prng(seed);
  const events = [];
  for (let c = 0; c < count; c++) {
    r.player.write(generationSignal(1, Math.round(r.rate * 0.35)), { sampleRate: r.rate, generation: 1 });
    await sleep(80 + random() * 150);
    const requestFrame = r.audioFrame();
    const flushed = r.player.once("flushed");
    r.player.flush();
    const { frame } = await flushed;
    const state = r.player.state;
    events.push({ requestFrame, frame, stateAfter: state });
    await sleep(20);
  }
  await sleep(100);
  const rec = await r.snapshot();
  const results = events.map(({ requestFrame, frame }) => {
    const at = frame - rec.startFrame;
    // The next cycle's audio starts ≥ 20 ms later, so a 256-sample run of zeros is this flush's silence.
    const silent = silenceFrom(rec.samples, at);
    return {
      audibleAtFlush: rec.samples[at - 1] !== 0,
      afterApplied: silent - at,
      afterRequest: silent - (requestFrame - rec.startFrame),
    };
  });
  const end = r.player.position();
  await r.context.close();
  return { transport: r.player.transport, rate: r.rate, results, states: events.map((e) => e.stateAfter), end };
}

/**
 * A generation playing, then a newer one (with or without a flush first), and
 * a late write of the old one: counts old-generation samples rendered after
 * the first sample of the new one.
 */
async function fences({ count = 3, flushFirst = false, seed = 2 } = {}) {
  const r = await rig({ seconds: count * 1.2 + 5 });
  const random = prng(seed);
  let stale = 0;
  let staleAccepted = 0;
  let newRenderedInOrder = true;
  let checked = 0;
  // Signal labels (value ranges) stay fixed while generation numbers grow: a
  // faded-out old sample (< 0.35) can never pass for a new one (≥ 0.6).
  const OLD = 3;
  const NEW = 6;
  const failures = [];
  let heardOld = 0;
  for (let c = 0; c < count; c++) {
    const rec0 = r.audioFrame();
    const oldGen = 1 + 2 * c;
    const newGen = oldGen + 1;
    const started = r.player.once("started");
    r.player.write(generationSignal(OLD, Math.round(r.rate * 0.6)), { sampleRate: r.rate, generation: oldGen });
    await started;
    await sleep(30 + random() * 200);
    if (flushFirst) r.player.flush();
    const next = generationSignal(NEW, Math.round(r.rate * 0.2));
    const ended = r.player.once("ended");
    r.player.write(next, { sampleRate: r.rate, generation: newGen });
    // A stream that dies late writes once more under the old generation.
    staleAccepted += r.player.write(generationSignal(OLD, Math.round(r.rate * 0.2)), { sampleRate: r.rate, generation: oldGen });
    r.player.end(newGen);
    await ended;
    const rec = await r.snapshot();
    // This cycle's old audio starts after rec0 (the previous cycle's new audio may still
    // be in the quantum that rec0 names); the new generation starts after it.
    const from = Math.max(0, rec0 - rec.startFrame - 256);
    let firstOld = from;
    while (firstOld < rec.samples.length && generationOf(rec.samples[firstOld]) !== OLD) firstOld++;
    let firstNew = firstOld;
    while (firstNew < rec.samples.length && generationOf(rec.samples[firstNew]) !== NEW) firstNew++;
    for (let i = firstNew; i < rec.samples.length; i++) if (generationOf(rec.samples[i]) === OLD) stale++;
    // The new generation plays whole and in order.
    let bad = 0;
    for (let i = 0; i < next.length; i++) if (rec.samples[firstNew + i] !== next[i]) bad++;
    if (bad > 0) {
      newRenderedInOrder = false;
      failures.push({ cycle: c, bad, firstNew });
    }
    if (firstNew > firstOld) heardOld++;
    checked++;
  }
  await r.context.close();
  return { transport: r.player.transport, heardOld, stale, staleAccepted, newRenderedInOrder, failures, checked, dropped: r.player.droppedStaleSamples };
}

/**
 * Pause/resume cycles at random moments over one long generation, from the
 * main thread or from a worker (control port, or shared flag): every written
 * sample must be accounted for, and position() must equal what was rendered.
 */
async function pauses({ cycles = 6, seed = 3, via = "main" } = {}) {
  const seconds = Math.max(2, cycles * 0.1 + 1);
  const r = await rig({ seconds: seconds * 2 + 5 });
  const random = prng(seed);
  // Generation 1 throughout: the main thread's default token, passed explicitly by the worker.
  let control = r.player;
  if (via !== "main") {
    const worker = await controlWorker(r.player, via);
    control = { pause: () => worker.pause(1), resume: () => worker.resume(1) };
  }
  const written = generationSignal(1, Math.round(r.rate * seconds));
  const started = r.player.once("started");
  r.player.write(written, { sampleRate: r.rate, generation: 1 });
  await started;
  let midCheck;
  for (let c = 0; c < cycles; c++) {
    await sleep(15 + random() * 50);
    await control.pause();
    await sleep(15 + random() * 40);
    if (c === 1) {
      // Held paused: the position must equal the samples rendered so far (fade-outs excluded).
      await sleep(60);
      const position = r.player.position().samples;
      const rec = await r.snapshot();
      midCheck = { position, rendered: accountPauses(rec.samples, written, r.fade).consumed };
    }
    await control.resume();
  }
  const ended = r.player.once("ended");
  r.player.end(1);
  const end = await ended;
  const rec = await r.snapshot();
  const account = accountPauses(rec.samples, written, r.fade);
  const position = r.player.position();
  await r.context.close();
  return {
    transport: r.player.transport,
    written: written.length,
    ...account,
    lost: written.length - account.consumed,
    position: position.samples,
    endedSamples: end.samples,
    midCheck,
    fade: r.fade,
  };
}

// Signal labels for the token scenarios (as in `fences`): g is heard as 3, g + 1 as 6.
const G_LABEL = 3;
const NEXT_LABEL = 6;

/**
 * The race the tokens exist for: generation g plays, is paused and resumed
 * (token g); then g + 1 is fenced and written, and a pause with token g lands
 * late: from a worker (`via` the control port or the shared block), before
 * g + 1 starts and again while it plays, and from the main thread. Returns how
 * g + 1 was rendered: it must play in full, sample for sample, with nothing held.
 */
async function latePause({ via = "port", g = 4 } = {}) {
  const r = await rig({ seconds: 6 });
  const worker = await controlWorker(r.player, via);
  let started = r.player.once("started");
  r.player.write(generationSignal(G_LABEL, Math.round(r.rate * 0.6)), { sampleRate: r.rate, generation: g });
  await started;
  await sleep(60);
  r.player.pause(g);
  await sleep(40);
  r.player.resume(g);
  await sleep(40);
  const rec0 = r.audioFrame();
  r.player.fence(g + 1);
  const next = generationSignal(NEXT_LABEL, Math.round(r.rate * 0.5));
  started = r.player.once("started");
  const ended = r.player.once("ended");
  r.player.write(next, { sampleRate: r.rate, generation: g + 1 });
  r.player.end(g + 1);
  await worker.pause(g); // late: after the resume and the fence, before g + 1 starts
  const start = await within(started, 2000);
  await sleep(50);
  await worker.pause(g); // late again, while g + 1 plays
  r.player.pause(g);
  const end = await within(ended, 3000);
  const state = r.player.state;
  const position = r.player.position();
  const rec = await r.snapshot();
  worker.close();
  await r.context.close();
  let firstNew = Math.max(0, rec0 - rec.startFrame - 256);
  while (firstNew < rec.samples.length && generationOf(rec.samples[firstNew]) !== NEXT_LABEL) firstNew++;
  let mismatches = 0;
  for (let i = 0; i < next.length; i++) if (rec.samples[firstNew + i] !== next[i]) mismatches++;
  return {
    transport: r.player.transport,
    via,
    started: Boolean(start),
    ended: Boolean(end),
    endedSamples: end?.samples,
    written: next.length,
    heardNew: firstNew < rec.samples.length,
    mismatches,
    silenceInside: longestSilence(rec.samples, firstNew, Math.min(rec.samples.length, firstNew + next.length)),
    position: position.samples,
    state,
  };
}

/**
 * A stale resume: g + 1 plays and is paused with its own token; a resume with
 * token g then arrives (from a worker `via` the port or the shared block, and
 * from the main thread) and must not lift it. Held for `holdMs`, then resumed
 * with token g + 1, which must lose no sample.
 */
async function staleResume({ via = "port", g = 4, holdMs = 250 } = {}) {
  const r = await rig({ seconds: 6 });
  const worker = await controlWorker(r.player, via);
  let started = r.player.once("started");
  r.player.write(generationSignal(G_LABEL, Math.round(r.rate * 0.4)), { sampleRate: r.rate, generation: g });
  await started;
  await sleep(40);
  const rec0 = r.audioFrame();
  const next = generationSignal(NEXT_LABEL, Math.round(r.rate * 1.0));
  started = r.player.once("started");
  r.player.write(next, { sampleRate: r.rate, generation: g + 1 }); // fences g + 1
  await within(started, 2000);
  await sleep(60);
  r.player.pause(g + 1);
  await sleep(40);
  const heldFrom = r.player.position().samples;
  await worker.resume(g);
  r.player.resume(g);
  await sleep(holdMs);
  const heldTo = r.player.position().samples;
  const stateHeld = r.player.state;
  const ended = r.player.once("ended");
  r.player.resume(g + 1);
  r.player.end(g + 1);
  const end = await within(ended, 3000);
  const rec = await r.snapshot();
  worker.close();
  await r.context.close();
  let firstNew = Math.max(0, rec0 - rec.startFrame - 256);
  while (firstNew < rec.samples.length && generationOf(rec.samples[firstNew]) !== NEXT_LABEL) firstNew++;
  const account = accountPauses(rec.samples.subarray(firstNew), next, r.fade);
  return {
    transport: r.player.transport,
    via,
    heldFrom,
    heldTo,
    stateHeld,
    ended: Boolean(end),
    endedSamples: end?.samples,
    written: next.length,
    ...account,
    lost: next.length - account.consumed,
    silence: longestSilence(rec.samples, firstNew, rec.samples.length),
    holdSamples: Math.round((holdMs / 1000) * r.rate),
  };
}

/** Plays resampled s16 at 24 kHz and checks the started event against the recording. */
async function startedAndResample() {
  const r = await rig({ seconds: 5 });
  let underruns = 0;
  r.player.on("underrun", () => underruns++);
  const pcm = new Int16Array(24000 / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000));
  const started = r.player.once("started");
  const accepted = r.player.write(pcm, { sampleRate: 24000, generation: 7 });
  const ended = r.player.once("ended");
  r.player.end(7);
  const s = await started;
  const e = await ended;
  const rec = await r.snapshot();
  let first = -1;
  for (let i = 0; i < rec.samples.length; i++) if (rec.samples[i] !== 0) { first = i; break; }
  let last = rec.samples.length - 1;
  while (last > first && rec.samples[last] === 0) last--;
  // Level of the tone inside the filter's ramps (8000/32768 ≈ 0.244 peak), over all of it: a loaded
  // render thread skips quanta (they stay zero here): CI once read 0 in a fixed 100 ms window of it.
  let peak = 0;
  for (let i = first + 64; i < last - 64; i++) peak = Math.max(peak, Math.abs(rec.samples[i]));
  const position = r.player.position();
  await r.context.close();
  return {
    rate: r.rate,
    accepted,
    startedFrame: Math.round(s.contextTime * r.rate),
    firstAudibleFrame: rec.startFrame + first,
    peak,
    endedSamples: e.samples,
    position: position.samples,
    generation: position.generation,
    gaps: rec.gaps,
    underruns,
    recStart: rec.startFrame,
  };
}

/** Feeds audio at 1× real time in 20 ms chunks for `seconds` and counts underruns. */
async function realtime({ seconds = 3, profile = false } = {}) {
  // No ticker here: it would spin a core and starve the feeding main thread.
  const ticker = profile === "ticker" ? await startTicker() : undefined;
  const r = await rig({ seconds: 1, profile: Boolean(profile), profileClock: ticker?.buffer });
  const chunk = Math.round(r.rate * 0.02);
  const signal = generationSignal(1, chunk);
  let underruns = 0;
  r.player.on("underrun", () => underruns++);
  const t0 = performance.now();
  let written = 0;
  let maxFeedGapMs = 0;
  let last = t0;
  while (performance.now() - t0 < seconds * 1000) {
    maxFeedGapMs = Math.max(maxFeedGapMs, performance.now() - last);
    last = performance.now();
    const due = Math.floor(((performance.now() - t0) / 1000) * r.rate) + chunk;
    while (written < due) {
      r.player.write(signal, { sampleRate: r.rate, generation: 1 });
      written += chunk;
    }
    await sleep(10);
  }
  const rendered = r.player.position().samples;
  const profiled = profile ? await r.player.profile() : undefined;
  ticker?.stop();
  await r.context.close();
  return { transport: r.player.transport, underruns, maxFeedGapMs, written, rendered, micros: profiled && Array.from(profiled.micros), meanMicrosByDate: profiled?.meanMicrosByDate, clock: profiled?.clock };
}

/** A player whose worklet file is missing. */
async function missingWorklet() {
  const context = new AudioContext();
  try {
    await new Player({ context, assetsPath: "/dist/missing/" }).start();
    return { name: "none" };
  } catch (err) {
    return { name: err.name, url: err.url, message: err.message };
  } finally {
    await context.close();
  }
}

window.audio = { flushes, fences, pauses, latePause, staleResume, startedAndResample, realtime, missingWorklet };
window.audioReady = true;
