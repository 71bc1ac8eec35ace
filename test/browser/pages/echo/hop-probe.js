// Debug page: window.runProbe({ path: "direct" | "echo", echo, speech: [fixture names], seconds })
// returns the probe's mic and the source's reference (context frames micStart / refStart).

import { connectEchoPath } from "./echo-path.js";
import { sleep } from "/test/lib/wait.mjs";
window.runProbe = async ({ seconds = 8, path = "direct", rate, echo = {}, speech } = {}) => {
  const context = rate ? new AudioContext({ sampleRate: rate }) : new AudioContext();
  await context.audioWorklet.addModule("./hop-probe-worklet.js");
  const source = new AudioWorkletNode(context, "hop-source", { outputChannelCount: [1], processorOptions: { speech: !!speech } });
  const probe = new AudioWorkletNode(context, "hop-probe", { numberOfOutputs: 0 });
  if (speech) {
    const parts = [];
    for (const name of speech) parts.push((await context.decodeAudioData(await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer())).getChannelData(0));
    const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    source.port.postMessage(all);
  }
  const mic = context.createMediaStreamDestination();
  const out = new GainNode(context);
  source.connect(out);
  const silent = new GainNode(context, { gain: 0 });
  out.connect(silent).connect(context.destination);
  if (path === "direct") out.connect(mic);
  else connectEchoPath(context, out, mic, echo);
  const micSource = context.createMediaStreamSource(mic.stream);
  micSource.connect(probe);
  await context.resume();
  await sleep(seconds * 1000);
  const data = await new Promise((resolve) => { probe.port.onmessage = (e) => resolve(e.data); probe.port.postMessage(0); });
  await context.close();
  return { sampleRate: context.sampleRate, micStart: data.micStart, refStart: data.refStart, order: data.order.slice(0, 12), mic: Array.from(data.mic.subarray(0, Math.round(seconds * context.sampleRate))), ref: Array.from(data.ref.subarray(0, Math.round(seconds * context.sampleRate))) };
};
window.probeReady = true;
