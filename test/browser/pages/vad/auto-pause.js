// The VAD worker's auto-pause on a real Player, recorded inside the same
// AudioContext. Exposes `window.autoPause` for test/browser/vad-auto-pause.spec.ts.
// On a crossOriginIsolated page the worker gets the player's shared control
// block and writes the pause there; the port it is given then belongs to this
// page, which counts what arrives on it (nothing should). With `?isolated=0`
// the worker gets the player's control port and nothing else.
import { Player, VadWorker } from "/dist/advanced.js";
import { accountPauses, generationOf, generationSignal } from "../audio/analysis.js";
import { loadFixture } from "./fixtures.js";
import { recorderNode } from "../audio/recorder-node.js";
import { sleep } from "/test/lib/wait.mjs";

const within = (promise, ms) => Promise.race([promise, sleep(ms).then(() => undefined)]);
const G_LABEL = 3;
const NEXT_LABEL = 6;
const FRAME = 512;

/** `onsetPause`: the level cue (off unless asked, so the speech-start pause is what the other tests see). */
async function rig({ minSpeechMs, onsetPause = false } = {}) {
  const context = new AudioContext();
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const recorder = recorderNode(context, 20);
  recorder.connect(context.destination);
  const player = new Player({ context, assetsPath: "/dist/", destination: recorder });
  await player.start();
  const vad = new VadWorker({ assetsPath: "/dist/", onsetPause, ...(minSpeechMs ? { minSpeechMs } : {}) });
  await vad.start();
  let portMessages = 0;
  if (player.controlBuffer) {
    const observer = new MessageChannel();
    observer.port1.onmessage = () => portMessages++;
    vad.connectPlaybackControl(observer.port2, player.controlBuffer);
  } else {
    vad.connectPlaybackControl(player.createControlPort());
  }
  const events = [];
  for (const kind of ["speechStart", "misfire", "speechEnd", "pauseLapse", "onsetPause"]) vad.on(kind, (e) => events.push({ kind, ...e, audio: undefined }));
  return {
    context,
    player,
    vad,
    events,
    rate: context.sampleRate,
    fade: Math.min(128, Math.round(0.005 * context.sampleRate)),
    portMessages: () => portMessages,
    snapshot: () =>
      new Promise((resolve) => {
        recorder.port.onmessage = (e) => resolve(e.data);
        recorder.port.postMessage({ kind: "snapshot" });
      }),
    feed: (samples, from, to, echo) => {
      for (let i = from; i + FRAME <= to; i += FRAME) vad.feed(samples.slice(i, i + FRAME), i, i / 16000, echo);
      return vad.flush();
    },
    async close() {
      await vad.stop();
      await context.close();
    },
  };
}

/** From the first sample labelled `label`: how the recording accounts for `written`. */
function account(rec, written, label, fade) {
  let first = 0;
  while (first < rec.samples.length && generationOf(rec.samples[first]) !== label) first++;
  return { heard: first < rec.samples.length, ...accountPauses(rec.samples.subarray(first), written, fade) };
}

/**
 * Generation g plays; auto-pause is armed with `token` (g, or an older one);
 * speech is fed (a misfire with a long minSpeechMs). With `next`, a confirmed
 * utterance is left paused and generation g + 1 is fenced and written.
 */
async function run({ g = 3, token = g, minSpeechMs, next = false } = {}) {
  const r = await rig({ minSpeechMs });
  const { samples, label } = await loadFixture("speech-slt");
  r.vad.setAutoPause(token);
  const written = generationSignal(G_LABEL, Math.round(r.rate * (next ? 8 : 5)));
  const started = r.player.once("started");
  r.player.write(written, { sampleRate: r.rate, generation: g });
  await started;
  await sleep(100);
  // Up to half a second into the speech: speech has started, the pause is written.
  await r.feed(samples, 0, label.utterances[0].onsetSample + 8000);
  await sleep(150);
  const duringSpeech = { state: r.player.state, position: r.player.position().samples };
  await sleep(100);
  duringSpeech.later = r.player.position().samples;
  await r.feed(samples, label.utterances[0].onsetSample + 8000, samples.length);
  await sleep(150);
  const afterSpeech = { state: r.player.state };
  let result;
  if (next) {
    const nextWritten = generationSignal(NEXT_LABEL, Math.round(r.rate * 0.5));
    const ended = r.player.once("ended");
    r.player.write(nextWritten, { sampleRate: r.rate, generation: g + 1 }); // fences g + 1; nobody resumes
    r.player.end(g + 1);
    const end = await within(ended, 3000);
    const rec = await r.snapshot();
    result = { ended: Boolean(end), endedSamples: end?.samples, written: nextWritten.length, ...account(rec, nextWritten, NEXT_LABEL, r.fade) };
  } else {
    const ended = r.player.once("ended");
    r.player.end(g);
    const end = await within(ended, 8000);
    const rec = await r.snapshot();
    result = { ended: Boolean(end), endedSamples: end?.samples, written: written.length, ...account(rec, written, G_LABEL, r.fade) };
  }
  const out = {
    transport: r.player.transport,
    events: r.events.map(({ kind, pausedPlayback, resumedPlayback, pauseToken }) => ({ kind, pausedPlayback, resumedPlayback, pauseToken })),
    portMessages: r.portMessages(),
    duringSpeech,
    afterSpeech,
    ...result,
    lost: result.written - result.consumed,
  };
  await r.close();
  return out;
}

/**
 * The pause lapse: generation g plays, auto-pause armed for it. A word of real
 * speech comes in frames the echo guard could not vouch for ("unconfirmed",
 * as the bot's residual echo would), then silence ("echo" frames), then the
 * next word the same way, then silence until the utterance ends. The player's
 * state is read after each part.
 */
async function lapse({ g = 3 } = {}) {
  const r = await rig({ minSpeechMs: 224, onsetPause: true });
  const { samples, label } = await loadFixture("speech-slt");
  r.vad.setAutoPause(g);
  const written = generationSignal(G_LABEL, Math.round(r.rate * 6));
  const started = r.player.once("started");
  r.player.write(written, { sampleRate: r.rate, generation: g });
  await started;
  await sleep(100);
  const onset = label.utterances[0].onsetSample;
  const states = [];
  const read = async () => {
    await sleep(60);
    const position = r.player.position().samples;
    await sleep(60);
    states.push({ state: r.player.state, moving: r.player.position().samples > position });
  };
  const silence = (ms) => new Float32Array(Math.round((ms / 1000) * 16000));
  const word = (from) => samples.slice(onset + from, onset + from + 4800); // 300 ms of the utterance
  const feedAll = async (audio, echo) => {
    for (let i = 0; i + FRAME <= audio.length; i += FRAME) r.vad.feed(audio.slice(i, i + FRAME), undefined, undefined, echo);
    await r.vad.flush();
  };
  await feedAll(word(0), "unconfirmed");
  await read();
  await feedAll(silence(200), "echo");
  await read();
  await feedAll(word(4800), "unconfirmed");
  await read();
  await feedAll(silence(1600), "echo"); // past the VadWorker's default redemptionMs (1400): a misfire
  await read();
  const ended = r.player.once("ended");
  r.player.end(g);
  const end = await within(ended, 8000);
  const rec = await r.snapshot();
  const out = {
    events: r.events.map(({ kind, pausedPlayback, resumedPlayback, pauseToken, lapsed }) => ({ kind, pausedPlayback, resumedPlayback, pauseToken, lapsed })),
    states,
    ended: Boolean(end),
    endedSamples: end?.samples,
    written: written.length,
    ...account(rec, written, G_LABEL, r.fade),
  };
  out.lost = out.written - out.consumed;
  await r.close();
  return out;
}

/**
 * The onset-cue pages' start: a rig with the cue `cue`, generation g playing `seconds` of its signal,
 * auto-pause armed. `read(what)` notes the player's state and whether it moves over 2 × `readMs`;
 * `noise(ms, db)` is seeded white noise at 16 kHz; `feedAll` feeds a signal in frames and flushes.
 */
async function cuePlaying({ g, cue, seconds, readMs }) {
  const r = await rig({ minSpeechMs: 5000, onsetPause: cue });
  r.vad.setAutoPause(g);
  const written = generationSignal(G_LABEL, Math.round(r.rate * seconds));
  const started = r.player.once("started");
  r.player.write(written, { sampleRate: r.rate, generation: g });
  await started;
  await sleep(100);
  const states = [];
  const read = async (what) => {
    await sleep(readMs);
    const position = r.player.position().samples;
    await sleep(readMs);
    states.push({ what, state: r.player.state, moving: r.player.position().samples > position });
  };
  let seed = 7;
  const noise = (ms, db) => {
    const amp = Math.pow(10, db / 20) * Math.sqrt(3);
    return Float32Array.from({ length: Math.round((ms / 1000) * 16000) }, () => {
      seed = (seed * 16807) % 2147483647;
      return amp * ((seed / 2147483647) * 2 - 1);
    });
  };
  const feedAll = async (audio) => {
    for (let i = 0; i + FRAME <= audio.length; i += FRAME) r.vad.feed(audio.slice(i, i + FRAME));
    await r.vad.flush();
  };
  return { r, written, states, read, noise, feedAll };
}

/**
 * The onset cue: generation g plays, auto-pause armed. First a bump (100 ms
 * of noise at −30 dBFS, not speech) after a quiet room; then the same bump
 * right before real speech (the fixture's utterance). The player's state is
 * read during and after each.
 */
async function onset({ g = 3, cue = { action: "pause", quickReleaseMs: 0 } } = {}) {
  const { samples, label } = await loadFixture("speech-slt");
  const { r, written, states, read, noise, feedAll } = await cuePlaying({ g, cue, seconds: 8, readMs: 60 });
  // A quiet room (−65 dBFS) long enough for the cue's floor to settle there.
  await feedAll(noise(2000, -65));
  await feedAll(noise(96, -30));
  await read("bump");
  await feedAll(noise(300, -65));
  await read("after the bump");
  const onsetSample = label.utterances[0].onsetSample;
  const speech = samples.slice(onsetSample, onsetSample + 8000);
  const bumpThenSpeech = new Float32Array(1536 + speech.length);
  bumpThenSpeech.set(noise(96, -30));
  bumpThenSpeech.set(speech, 1536);
  await feedAll(bumpThenSpeech);
  await read("speech");
  await feedAll(noise(2000, -65)); // a misfire (minSpeechMs 5000) resumes it
  await read("after the speech");
  const ended = r.player.once("ended");
  r.player.end(g);
  const end = await within(ended, 10000);
  const rec = await r.snapshot();
  const out = {
    events: r.events.map(({ kind, pausedPlayback, resumedPlayback, pauseToken, paused, action }) => ({ kind, pausedPlayback, resumedPlayback, pauseToken, paused, action })),
    states,
    ended: Boolean(end),
    endedSamples: end?.samples,
    written: written.length,
    ...account(rec, written, G_LABEL, r.fade),
  };
  out.lost = out.written - out.consumed;
  await r.close();
  return out;
}

/**
 * The duck (`onsetPause` with `action: "duck"`): generation g plays, auto-pause
 * armed; a bump of noise (not speech) after a quiet room. The recording is
 * walked against what was written, sample for sample (a duck holds nothing,
 * so the two run in step): each rendered sample is the written one at full
 * gain, at the duck's gain, or on a ramp between.
 */
async function duck({ g = 3, duckDb = 12 } = {}) {
  // The frames go in faster than real time: the duck stands from the bump's frames to the next frame fed, across each read.
  const { r, written, states, read, noise, feedAll } = await cuePlaying({ g, cue: { action: "duck", duckDb, quickReleaseMs: 96 }, seconds: 4, readMs: 50 });
  await feedAll(noise(2000, -65));
  await feedAll(noise(64, -30));
  await read("bump");
  await feedAll(noise(400, -65));
  await read("after the bump");
  const ended = r.player.once("ended");
  r.player.end(g);
  const end = await within(ended, 10000);
  const rec = await r.snapshot();
  let first = 0;
  while (first < rec.samples.length && generationOf(rec.samples[first]) !== G_LABEL) first++;
  const gain = Math.pow(10, -duckDb / 20);
  const counts = { full: 0, ducked: 0, ramp: 0, other: 0 };
  /** The kinds in the order they came, a run of one kind once: the duck's shape. */
  const runs = [];
  let j = 0;
  for (let k = first; k < rec.samples.length && j < written.length; k++, j++) {
    const ratio = rec.samples[k] / written[j];
    const kind = Math.abs(ratio - 1) < 1e-6 ? "full" : Math.abs(ratio - gain) < 1e-4 ? "ducked" : ratio > gain && ratio < 1 ? "ramp" : "other";
    counts[kind]++;
    if (runs[runs.length - 1] !== kind) runs.push(kind);
  }
  const out = {
    events: r.events.map(({ kind, pauseToken, paused, action }) => ({ kind, pauseToken, paused, action })),
    states,
    ended: Boolean(end),
    endedSamples: end?.samples,
    written: written.length,
    walked: j,
    ...counts,
    runs,
    fade: r.fade,
    rate: r.rate,
  };
  await r.close();
  return out;
}

window.autoPause = { run, lapse, onset, duck };
window.autoPauseReady = true;
