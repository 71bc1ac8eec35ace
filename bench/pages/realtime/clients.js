// The two clients the realtime bench compares, each as an app would set it up
// against the reference backend's OpenAI Realtime emulator, in the rig's room:
// - bargein: `new VoiceSession({ realtime: openaiRealtime(...) })`, with its
//   defaults (client turn detection: its VAD pauses at the onset, and a
//   confirmed barge-in truncates at the rendered ms of the item);
// - peer: @openai/agents-realtime's OpenAIRealtimeWebSocket (v0.20.0), bundled
//   for the page (vendor/agents-realtime.js, written by the bench), with the
//   app's capture and queue player (peer-worklets.js) and server_vad (the
//   service's fastest turn detection; the SDK's default is semantic_vad). On
//   the service's speech_started the transport emits `audio_interrupted` (the
//   app empties its queue) and sends a truncate whose audio_end_ms is the wall
//   clock since the item's first audio delta arrived, capped at the audio
//   received (openaiRealtimeWebsocket.mjs `interrupt()`).
import { VoiceSession, openaiRealtime } from "/dist/bargein.js";

const token = async () => (await (await fetch("/api/token?service=openai-realtime")).json()).token;
const url = () => `ws://${location.host}/v1/realtime`;
const MODEL = "gpt-realtime";

/** Each client: start(), `interruptions` (context times at which it stopped the item), errors, stop(). */
export async function bargeinClient(rig, sessionOptions = {}) {
  const interruptions = [];
  const errors = [];
  const session = new VoiceSession({
    realtime: openaiRealtime({ url: url(), model: MODEL, token }),
    assetsPath: "/dist/",
    input: rig.mic.stream,
    audio: { context: rig.context, output: rig.output },
    ...sessionOptions,
  });
  // What the session did, in context time, to tell why a trial had no interruption.
  const trace = [];
  const at = () => rig.context.currentTime.toFixed(3);
  session.on("interruption", (e) => (interruptions.push(rig.context.currentTime), trace.push(`${at()} interruption ${e.reason}`)));
  session.on("state", (e) => trace.push(`${at()} state ${e.state}`));
  session.on("vad", (e) => e.kind !== "meter" && trace.push(`${at()} vad ${e.kind}`));
  session.on("transcript", (e) => e.final && trace.push(`${at()} ${e.role}: ${e.text}`));
  session.on("warning", (e) => trace.push(`${at()} warning ${e.message}`));
  session.on("error", (e) => errors.push(`${e.error.name}: ${e.error.message}`));
  await session.start();
  return { interruptions, errors, trace, stop: () => session.stop(), outputLatencyS: () => latency(rig.context) };
}

export async function peerClient(rig) {
  const { OpenAIRealtimeWebSocket } = await import("./vendor/agents-realtime.js");
  const { context } = rig;
  await context.audioWorklet.addModule("/bench/pages/realtime/peer-worklets.js");
  const player = new AudioWorkletNode(context, "peer-player", { numberOfInputs: 0, outputChannelCount: [1] });
  player.connect(rig.output);
  const capture = new AudioWorkletNode(context, "peer-capture", { numberOfOutputs: 0 });
  context.createMediaStreamSource(rig.mic.stream).connect(capture);
  const interruptions = [];
  const errors = [];
  const transport = new OpenAIRealtimeWebSocket({});
  transport.on("audio", (e) => {
    const pcm = new Int16Array(e.data);
    const samples = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
    player.port.postMessage({ kind: "samples", samples }, [samples.buffer]);
  });
  transport.on("audio_interrupted", () => {
    player.port.postMessage({ kind: "clear" });
    interruptions.push(context.currentTime);
  });
  transport.on("error", (e) => errors.push(JSON.stringify(e?.error ?? e).slice(0, 300)));
  await transport.connect({
    apiKey: await token(),
    model: MODEL,
    url: `${url()}?model=${MODEL}`,
    initialSessionConfig: { audio: { input: { turnDetection: { type: "server_vad" } } } },
  });
  // The app's uplink: 20 ms of pcm16 per send, as captured.
  let pending = new Int16Array(480);
  let filled = 0;
  capture.port.onmessage = (e) => {
    for (const v of e.data) {
      pending[filled++] = Math.max(-32768, Math.min(32767, Math.round(v * 32767)));
      if (filled === pending.length) {
        transport.sendAudio(pending.buffer);
        pending = new Int16Array(480);
        filled = 0;
      }
    }
  };
  return {
    interruptions,
    errors,
    trace: [],
    stop: async () => {
      capture.port.onmessage = null;
      transport.close();
      player.disconnect();
    },
    outputLatencyS: () => latency(context),
  };
}

/** What the session counts as the output latency (the heard ms is the rendered ms less it). */
function latency(context) {
  return (context.outputLatency ?? 0) + (context.baseLatency ?? 0);
}
