// The Player through the WebRTC loopback route (audio.outputRoute
// "webrtc-loopback"), with what the loopback's <audio> element plays recorded
// in the same AudioContext: its track goes into a test recorder node, so the
// rendered time (the player's `started` event) and the time the element's
// stream carries the sound are on one clock. Used by
// test/browser/output-route.spec.ts.
import { Player, openWebrtcLoopback } from "/dist/advanced.js";
import { VoiceSession } from "/dist/bargein.js";
import { referenceProvider } from "../session/reference-providers.js";
import { TEST_FLUSH_TIMEOUT_MS, TEST_UPLINK_BUDGET_MS } from "../session/loaded-machine.js";
import { recorderNode, snapshot } from "./recorder-node.js";
import { sleep } from "/test/lib/wait.mjs";


/** A 440 Hz tone of `seconds` at amplitude 0.5, after `leadS` of silence. */
function tone(rate, leadS, seconds) {
  const lead = Math.round(rate * leadS);
  const out = new Float32Array(lead + Math.round(rate * seconds));
  for (let i = lead; i < out.length; i++) out[i] = 0.5 * Math.sin((2 * Math.PI * 440 * (i - lead)) / rate);
  return out;
}

/** First index from `from` where the 64-sample RMS passes `level`, or -1. */
function firstLoud(samples, from, level) {
  for (let i = Math.max(0, from); i + 64 <= samples.length; i += 16) {
    let s = 0;
    for (let j = i; j < i + 64; j++) s += samples[j] * samples[j];
    if (Math.sqrt(s / 64) >= level) return i;
  }
  return -1;
}

/** First index from `from` after which 512 samples in a row stay under `level` in magnitude, or -1. */
function firstQuiet(samples, from, level) {
  let run = 0;
  for (let i = Math.max(0, from); i < samples.length; i++) {
    run = Math.abs(samples[i]) < level ? run + 1 : 0;
    if (run === 512) return i - 511;
  }
  return -1;
}

/**
 * `count` tones through the loopback. For each: when the player rendered its
 * first sample and when the element's stream carried it (the loopback's
 * latency, ms), and after a pause mid-tone, when the stream went quiet.
 * Also the route's own latency estimate, and the time to open it.
 */
async function run({ count = 4 } = {}) {
  const context = new AudioContext();
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const openedAt = performance.now();
  const route = await openWebrtcLoopback(context);
  const openMs = performance.now() - openedAt;
  const player = new Player({ context, assetsPath: "/dist/", destination: route.input });
  await player.start();
  const recorder = recorderNode(context, count * 1.5 + 4);
  const mute = context.createGain();
  mute.gain.value = 0;
  recorder.connect(mute).connect(context.destination);
  const track = route.element.srcObject.getAudioTracks()[0];
  context.createMediaStreamSource(new MediaStream([track])).connect(recorder);
  const rate = context.sampleRate;
  const events = [];
  for (let g = 1; g <= count; g++) {
    const started = player.once("started");
    player.write(tone(rate, 0, 0.6), { sampleRate: rate, generation: g });
    const { contextTime } = await started;
    await sleep(300);
    const pauseFrame = Math.round(context.currentTime * rate);
    player.pause(g);
    await sleep(700);
    player.flush();
    events.push({ renderedFrame: Math.round(contextTime * rate), pauseFrame });
  }
  await sleep(300);
  const rec = await snapshot(recorder);
  const results = events.map(({ renderedFrame, pauseFrame }) => {
    const heard = firstLoud(rec.samples, renderedFrame - rec.startFrame, 0.05);
    const quiet = firstQuiet(rec.samples, pauseFrame - rec.startFrame, 0.01);
    return {
      latencyMs: heard < 0 ? null : ((heard + rec.startFrame - renderedFrame) / rate) * 1000,
      pauseToQuietMs: quiet < 0 ? null : ((quiet + rec.startFrame - pauseFrame) / rate) * 1000,
    };
  });
  const estimateMs = route.latency * 1000;
  route.close();
  player.close();
  await context.close();
  return { openMs, estimateMs, rate, results, elementPaused: route.element.paused };
}

/**
 * A whole VoiceSession with audio.outputRoute "webrtc-loopback" on the
 * reference backend: a spoken question, its reply recorded from the
 * loopback's element, then stop(). The page counts the peer connections and
 * elements the route made, to show stop() ends them.
 */
async function session() {
  const connections = [];
  const Native = globalThis.RTCPeerConnection;
  globalThis.RTCPeerConnection = class extends Native {
    constructor(config) {
      super(config);
      connections.push(this);
    }
  };
  const elements = [];
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    elements.push(this);
    return play.call(this);
  };
  const context = new AudioContext();
  await context.audioWorklet.addModule("/test/browser/pages/audio/recorder-worklet.js");
  const mic = context.createMediaStreamDestination();
  const s = new VoiceSession({
    stt: referenceProvider("stt"),
    tts: referenceProvider("tts"),
    llm: referenceProvider("sse"),
    assetsPath: "/dist/",
    input: mic.stream,
    audio: { context, outputRoute: "webrtc-loopback" },
    // The question is said at once: with the model still loading on a loaded machine, the level
    // fallback's late events let the turn end before the VAD's speech start (CI: no turn in 30 s).
    // Listening before the model is ready is cold-start.spec.ts's business; this test is the route's.
    vad: { waitForModel: true },
    turn: { flushTimeoutMs: TEST_FLUSH_TIMEOUT_MS },
    uplink: { budgetMs: TEST_UPLINK_BUDGET_MS },
  });
  const errors = [];
  const turns = [];
  s.on("error", (e) => errors.push(`${e.error.name}: ${e.error.message}`));
  s.on("turn", (e) => turns.push(e));
  await s.start();
  const recorder = recorderNode(context, 30);
  const mute = context.createGain();
  mute.gain.value = 0;
  recorder.connect(mute).connect(context.destination);
  context.createMediaStreamSource(elements[0].srcObject).connect(recorder);
  const data = await (await fetch("/test/fixtures/speech/help-me.wav")).arrayBuffer();
  const source = context.createBufferSource();
  source.buffer = await context.decodeAudioData(data);
  source.connect(mic);
  source.start();
  const deadline = performance.now() + 30000;
  while (performance.now() < deadline && !(s.history.length >= 2 && s.state === "listening")) await sleep(50);
  const rec = await snapshot(recorder);
  let peak = 0;
  for (const v of rec.samples) peak = Math.max(peak, Math.abs(v));
  const history = JSON.parse(JSON.stringify(s.history));
  await s.stop();
  await context.close();
  globalThis.RTCPeerConnection = Native;
  HTMLMediaElement.prototype.play = play;
  return {
    errors,
    history,
    turns: turns.length,
    peak,
    connections: connections.map((c) => c.connectionState),
    elements: elements.map((e) => ({ paused: e.paused, source: e.srcObject === null ? "none" : "stream" })),
  };
}

window.loopback = { run, session };
window.loopbackReady = true;
