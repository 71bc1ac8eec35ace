// The room both clients of the realtime bench run in, so that they get the
// same speech and are judged on the same samples:
// - an AudioContext at 24 kHz, the Realtime API's own rate, so the output
//   that is played is the items' PCM sample for sample (no resampler between
//   what was received and what was rendered);
// - a mic (a MediaStream that fixtures are played into at chosen context
//   times) and an output node recorded by window-recorder.js;
// - a tap on WebSocket that keeps each output item's PCM as it arrived
//   (`response.output_audio.delta`), to find where the item starts in the
//   recording and how much of it was rendered.
import { envelopeOnsetSeconds } from "/test/browser/pages/session/session.js";
import { recordedOutput } from "/test/browser/pages/session/recorded-output.js";

import { RATE } from "./output-rate.js";

export { RATE, SILENT } from "./output-rate.js";

export async function makeRig() {
  const context = new AudioContext({ sampleRate: RATE, latencyHint: "interactive" });
  const { output, recorder } = await recordedOutput(context, { module: "/bench/pages/session/window-recorder.js", processor: "window-recorder", seconds: 40 });
  const mic = context.createMediaStreamDestination();
  const items = tapWebSocket();
  const buffers = new Map();

  /** Plays fixture `name` into the mic so that its speech onset lands at context time `onsetAt`. */
  async function say(name, { onsetAt = 0 } = {}) {
    if (!buffers.has(name)) {
      const data = await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer();
      const buffer = await context.decodeAudioData(data);
      const meta = await (await fetch(`/test/fixtures/speech/${name}.json`)).json();
      buffers.set(name, { buffer, meta, onsetS: envelopeOnsetSeconds(buffer) });
    }
    const { buffer, meta, onsetS } = buffers.get(name);
    const startedAt = Math.max(context.currentTime + 2 * (128 / RATE), onsetAt - onsetS);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(mic);
    source.start(startedAt);
    return { name, onset: startedAt + onsetS, speechEnd: startedAt + meta.offsetSamples / meta.sampleRate, end: startedAt + buffer.duration };
  }

  /** The recorded output of context times [from, to): samples, and whether each quantum was rendered. */
  function window(from, to) {
    return new Promise((resolve) => {
      recorder.port.onmessage = (e) => resolve(e.data);
      recorder.port.postMessage({ kind: "window", fromFrame: Math.round(from * RATE), toFrame: Math.round(to * RATE) });
    });
  }

  return { context, output, mic, items, say, window, close: () => (items.restore(), context.close()) };
}

/**
 * Keeps the PCM of every output item the page receives, in arrival order:
 * `{ itemId, firstAt (performance.now), pcm: Int16Array[] }`. Installed before a
 * client connects; both clients of each protocol open their socket with the
 * global WebSocket. OpenAI Realtime: `response.output_audio.delta`, by item id.
 * Gemini Live has no item ids: a model turn's `inlineData` parts, up to its
 * `turnComplete` or `interrupted`, are one item ("turn-N").
 */
function tapWebSocket() {
  const Native = window.WebSocket;
  const list = [];
  let geminiOpen = false;
  const append = (itemId, b64) => {
    let item = list.at(-1);
    if (item?.itemId !== itemId) list.push((item = { itemId, firstAt: performance.now(), pcm: [] }));
    const bin = atob(b64);
    const pcm = new Int16Array(bin.length >> 1);
    for (let i = 0; i < pcm.length; i++) pcm[i] = (bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)) << 16 >> 16;
    item.pcm.push(pcm);
  };
  // The last messages both ways, by kind, to tell why a trial failed.
  const wire = [];
  const note = (dir, data) => {
    if (typeof data !== "string" || data.includes('"input_audio_buffer.append"') || data.includes('"realtimeInput":{"audio"')) return;
    const kind = data.startsWith('{"serverContent"') ? `serverContent ${Object.keys(JSON.parse(data).serverContent).join("+")}` : data.slice(0, 60);
    if (wire.at(-1)?.kind === kind) wire.at(-1).n++;
    else wire.push({ at: performance.now().toFixed(0), dir, kind, n: 1 });
    if (wire.length > 60) wire.shift();
  };
  list.wire = wire;
  window.WebSocket = class extends Native {
    send(data) {
      note(">", data);
      return super.send(data);
    }
    constructor(url, protocols) {
      super(url, protocols);
      this.addEventListener("message", (e) => {
        note("<", e.data);
        if (typeof e.data !== "string") return;
        if (e.data.includes('"response.output_audio.delta"')) {
          const m = JSON.parse(e.data);
          append(m.item_id, m.delta);
        } else if (e.data.includes('"serverContent"')) {
          const content = JSON.parse(e.data).serverContent;
          for (const part of content.modelTurn?.parts ?? []) {
            if (!part.inlineData?.data) continue;
            if (!geminiOpen) list.push({ itemId: `turn-${list.length}`, firstAt: performance.now(), pcm: [] });
            geminiOpen = true;
            append(list.at(-1).itemId, part.inlineData.data);
          }
          if (content.turnComplete || content.interrupted) geminiOpen = false;
        }
      });
    }
  };
  list.restore = () => (window.WebSocket = Native);
  return list;
}

/** An item's PCM as one array. */
export function itemPcm(item) {
  const n = item.pcm.reduce((s, c) => s + c.length, 0);
  const out = new Int16Array(n);
  let at = 0;
  for (const c of item.pcm) out.set(c, at), (at += c.length);
  return out;
}

export { envelopeOnsetSeconds };
