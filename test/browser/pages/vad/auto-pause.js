// The VAD worker's auto-pause on a real Player, recorded inside the same
// AudioContext. Exposes `window.autoPause` for test/browser/vad-auto-pause.spec.ts.
// On a crossOriginIsolated page the worker gets the player's shared control
// block and writes the pause there; the port it is given then belongs to this
// page, which counts what arrives on it (nothing should). With `?isolated=0`
// the worker gets the player's control port and nothing else.
import { Player, VadWorker } from "/dist/bargein.js";
import { accountPauses, generationOf, generationSignal } from "../audio/analysis.js";
import { loadFixture } from "./fixtures.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const within = (promise, ms) => Promise.race([promise, sleep(ms).then(() => undefined)]);
const G_LABEL = 3;
const NEXT_LABEL = 6;
const FRAME = 512;

async function rig({ minSpeechMs } = {}) {
  const context = new AudioContext();
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const recorder = new AudioWorkletNode(context, "test-recorder", {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    outputChannelCount: [1],
    channelCount: 1,
    channelCountMode: "explicit",
    processorOptions: { capacity: Math.ceil(context.sampleRate * 20) },
  });
  recorder.connect(context.destination);
  const player = new Player({ context, assetsPath: "/dist/", destination: recorder });
  await player.start();
  const vad = new VadWorker({ assetsPath: "/dist/", ...(minSpeechMs ? { minSpeechMs } : {}) });
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
  for (const kind of ["speechStart", "misfire", "speechEnd"]) vad.on(kind, (e) => events.push({ kind, ...e, audio: undefined }));
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
    feed: (samples, from, to) => {
      for (let i = from; i + FRAME <= to; i += FRAME) vad.feed(samples.slice(i, i + FRAME), i);
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

window.autoPause = { run };
window.autoPauseReady = true;
