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
//
// For Gemini Live, against the Gemini Live emulator:
// - bargein: `geminiLive(...)` with its defaults (client activity detection; a
//   confirmed barge-in tells the model the heard words in a clientContent note);
// - peer: @google/genai 3.3.0's `live.connect` (bundled as vendor/genai.js),
//   pointed at the emulator by `httpOptions.baseUrl`, with the service's
//   automatic activity detection (START_OF_ACTIVITY_INTERRUPTS, the default):
//   on `serverContent.interrupted` the app empties its queue. The Live API has
//   no truncate, and the SDK sends nothing of what was heard.
import { VoiceSession, geminiLive, openaiRealtime } from "/dist/bargein.js";

const token = async () => (await (await fetch("/api/token?service=openai-realtime")).json()).token;
const geminiToken = async () => (await (await fetch("/api/token?service=gemini-live")).json()).token;
const url = () => `ws://${location.host}/v1/realtime`;
const MODEL = "gpt-realtime";
const GEMINI_MODEL = "models/gemini-live-2.5-flash-preview";
const GEMINI_PATH = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained";

/** Each client: start(), `interruptions` (context times at which it stopped the item), errors, stop(). */
export async function bargeinClient(rig, sessionOptions = {}, protocol = "openai") {
  const interruptions = [];
  const errors = [];
  const realtime =
    protocol === "gemini"
      ? geminiLive({ url: `ws://${location.host}${GEMINI_PATH}`, model: GEMINI_MODEL, token: geminiToken })
      : openaiRealtime({ url: url(), model: MODEL, token });
  const session = new VoiceSession({
    realtime,
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

/** The peer app's audio: a capture worklet that hands out 20 ms of pcm16, and a queue player. */
async function peerAudio(rig, send) {
  const { context } = rig;
  await context.audioWorklet.addModule("/bench/pages/realtime/peer-worklets.js");
  const player = new AudioWorkletNode(context, "peer-player", { numberOfInputs: 0, outputChannelCount: [1] });
  player.connect(rig.output);
  const capture = new AudioWorkletNode(context, "peer-capture", { numberOfOutputs: 0 });
  context.createMediaStreamSource(rig.mic.stream).connect(capture);
  let pending = new Int16Array(480);
  let filled = 0;
  capture.port.onmessage = (e) => {
    for (const v of e.data) {
      pending[filled++] = Math.max(-32768, Math.min(32767, Math.round(v * 32767)));
      if (filled === pending.length) {
        send(pending);
        pending = new Int16Array(480);
        filled = 0;
      }
    }
  };
  return {
    play(pcm) {
      const samples = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
      player.port.postMessage({ kind: "samples", samples }, [samples.buffer]);
    },
    clear: () => player.port.postMessage({ kind: "clear" }),
    close() {
      capture.port.onmessage = null;
      player.disconnect();
    },
  };
}

export async function peerClient(rig) {
  const { OpenAIRealtimeWebSocket } = await import("./vendor/agents-realtime.js");
  const { context } = rig;
  const interruptions = [];
  const errors = [];
  const transport = new OpenAIRealtimeWebSocket({});
  const audio = await peerAudio(rig, (pcm) => transport.status === "connected" && transport.sendAudio(pcm.buffer));
  transport.on("audio", (e) => audio.play(new Int16Array(e.data)));
  transport.on("audio_interrupted", () => {
    audio.clear();
    interruptions.push(context.currentTime);
  });
  transport.on("error", (e) => errors.push(JSON.stringify(e?.error ?? e).slice(0, 300)));
  await transport.connect({
    apiKey: await token(),
    model: MODEL,
    url: `${url()}?model=${MODEL}`,
    initialSessionConfig: { audio: { input: { turnDetection: { type: "server_vad" } } } },
  });
  return {
    interruptions,
    errors,
    trace: [],
    stop: async () => {
      audio.close();
      transport.close();
    },
    outputLatencyS: () => latency(context),
  };
}

export async function geminiPeerClient(rig) {
  const { GoogleGenAI, Modality } = await import("./vendor/genai.js");
  const { context } = rig;
  const interruptions = [];
  const errors = [];
  // An ephemeral token ("auth_tokens/…") opens the v1alpha constrained endpoint, as the SDK's docs say.
  const ai = new GoogleGenAI({ apiKey: await geminiToken(), httpOptions: { apiVersion: "v1alpha", baseUrl: location.origin } });
  let audio;
  const session = await ai.live.connect({
    model: GEMINI_MODEL,
    config: { responseModalities: [Modality.AUDIO] },
    callbacks: {
      onmessage: (m) => {
        const content = m.serverContent;
        if (!content) return;
        for (const part of content.modelTurn?.parts ?? []) {
          if (!part.inlineData?.data) continue;
          const bin = atob(part.inlineData.data);
          const pcm = new Int16Array(bin.length >> 1);
          for (let i = 0; i < pcm.length; i++) pcm[i] = (bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)) << 16 >> 16;
          audio?.play(pcm);
        }
        if (content.interrupted) {
          audio?.clear();
          interruptions.push(context.currentTime);
        }
      },
      onerror: (e) => errors.push(`gemini peer: ${e?.message ?? e}`),
      onclose: (e) => e?.code !== 1000 && e?.code !== 1005 && errors.push(`gemini peer closed ${e?.code} ${e?.reason ?? ""}`),
    },
  });
  // The docs' rate is 16 kHz; the Live API takes other rates and resamples (the rate in the MIME type).
  audio = await peerAudio(rig, (pcm) => {
    let bin = "";
    const bytes = new Uint8Array(pcm.buffer);
    for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    session.sendRealtimeInput({ audio: { data: btoa(bin), mimeType: "audio/pcm;rate=24000" } });
  });
  return {
    interruptions,
    errors,
    trace: [],
    stop: async () => {
      audio.close();
      session.close();
    },
    outputLatencyS: () => latency(context),
  };
}

/** What the session counts as the output latency (the heard ms is the rendered ms less it). */
function latency(context) {
  return (context.outputLatency ?? 0) + (context.baseLatency ?? 0);
}
