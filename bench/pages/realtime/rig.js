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
  const items = tapWebSocket(context);
  const buffers = new Map();

  /** Fixture `name`, decoded: its buffer, its labels, its speech onset and earliest cue (s into it). */
  async function fixture(name) {
    if (!buffers.has(name)) {
      const data = await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer();
      const buffer = await context.decodeAudioData(data);
      const meta = await (await fetch(`/test/fixtures/speech/${name}.json`)).json();
      buffers.set(name, { buffer, meta, onsetS: envelopeOnsetSeconds(buffer), cueS: earliestCueS(buffer) });
    }
    return buffers.get(name);
  }

  /**
   * Plays fixture `name` into the mic so that its speech onset lands at context time `onsetAt`.
   * `cueAt`: the earliest moment its level could cue bargein's pause (earliestCueS).
   */
  async function say(name, { onsetAt = 0 } = {}) {
    const { buffer, meta, onsetS, cueS } = await fixture(name);
    const startedAt = Math.max(context.currentTime + 2 * (128 / RATE), onsetAt - onsetS);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(mic);
    source.start(startedAt);
    return { name, onset: startedAt + onsetS, cueAt: startedAt + cueS, speechEnd: startedAt + meta.offsetSamples / meta.sampleRate, end: startedAt + buffer.duration };
  }

  /** The recorded output of context times [from, to): samples, and whether each quantum was rendered. */
  function window(from, to) {
    return new Promise((resolve) => {
      recorder.port.onmessage = (e) => resolve(e.data);
      recorder.port.postMessage({ kind: "window", fromFrame: Math.round(from * RATE), toFrame: Math.round(to * RATE) });
    });
  }

  return { context, output, mic, items, fixture, say, window, close: () => (items.restore(), context.close()) };
}

/**
 * Keeps the PCM of every output item the page receives, in arrival order:
 * `{ itemId, firstAt (performance.now), arrivedFrame (the context's then), pcm: Int16Array[] }`. Installed before a
 * client connects; both clients of each protocol open their socket with the
 * global WebSocket. OpenAI Realtime: `response.output_audio.delta`, by item id.
 * Gemini Live has no item ids: a model turn's `inlineData` parts, up to its
 * `turnComplete` or `interrupted`, are one item ("turn-N").
 */
function tapWebSocket(context) {
  const Native = window.WebSocket;
  const list = [];
  let geminiOpen = false;
  const append = (itemId, b64) => {
    let item = list.at(-1);
    if (item?.itemId !== itemId) list.push((item = { itemId, firstAt: performance.now(), arrivedFrame: Math.round(context.currentTime * RATE), pcm: [] }));
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
            if (!geminiOpen) list.push({ itemId: `turn-${list.length}`, firstAt: performance.now(), arrivedFrame: Math.round(context.currentTime * RATE), pcm: [] });
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

/**
 * The earliest moment (s into `buffer`) its level could cue bargein's pause: the end of its first 8 ms
 * window at ONSET_MIN_DBFS (RMS; src/vad/onset-cue.ts, which reads a frame's loudest 8 ms window
 * against a floor that digital silence puts at its minimum). The labelled onset is the envelope's
 * −20 dB point, later: the fixtures' first cue-loud window ends 43 (help-me) and 98 ms (turn-on-lights)
 * before it, so the pause's fade may begin that far before the labelled onset.
 * @param {AudioBuffer} buffer
 */
export function earliestCueS(buffer) {
  const data = buffer.getChannelData(0);
  const window = Math.round(buffer.sampleRate * 0.008);
  const floor = 10 ** (ONSET_MIN_DBFS / 10) * window;
  let sum = 0;
  for (let i = 0; i < data.length; i++) {
    sum += data[i] * data[i] - (i >= window ? data[i - window] * data[i - window] : 0);
    if (i + 1 >= window && sum >= floor) return (i + 1) / buffer.sampleRate;
  }
  return buffer.duration;
}

/** src/vad/onset-cue.ts ONSET_MIN_DBFS: a cue's level at least. */
const ONSET_MIN_DBFS = -50;

/** An item's PCM as one array: the same array until more of it arrives (the judge indexes it by identity). */
export function itemPcm(item) {
  if (item.joined?.chunks === item.pcm.length) return item.joined.pcm;
  const n = item.pcm.reduce((s, c) => s + c.length, 0);
  const out = new Int16Array(n);
  let at = 0;
  for (const c of item.pcm) out.set(c, at), (at += c.length);
  item.joined = { chunks: item.pcm.length, pcm: out };
  return out;
}

export { envelopeOnsetSeconds };
