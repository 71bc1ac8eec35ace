// The backchannel corpus of `npm run bench -- turn` (issue #19): what a
// listener says over the bot, and what a user says to stop it.
//
// - backchannels (must not interrupt): 12 phrases × flite's two voices, and
//   10 short bursts (160–260 ms) of real voices cut from the start of each
//   pocketsphinx-testdata recording's speech (a breath of a word, as a
//   listener's "mm" is);
// - interruptions (must interrupt): 10 phrases × the two voices, and the 10
//   real recordings whole (a person reading over the bot).
// Written to bench/pages/session/backchannel/ (git-ignored) in the fixtures'
// format (16 kHz s16 WAV and a JSON sidecar with onsetSamples/offsetSamples),
// with `kind` ("backchannel" | "interruption") and `source` ("flite" |
// "human"). flite runs in a child process with V8's fast API calls off:
// in the bench's own process it crashed (docs/post-mortems.md).
//
//   node --no-turbo-fast-api-calls bench/lib/backchannel-corpus.mjs   writes the corpus
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { prepareHumanSpeech } from "./human-speech.mjs";

const OUT = new URL("../pages/session/backchannel/", import.meta.url);
const HUMAN = new URL("../pages/session/human/", import.meta.url);

// No "Mm-hmm": flite spells it ("em em aitch em em", 1.0–1.2 s, and "Mhm" or "Mm" the same way),
// which no listener says; until 2026-12-06 it was here, and both its clips interrupted as speech
// voiced past `maxMs`. A person's hum is what the real bursts below stand for.
export const BACKCHANNEL_PHRASES = ["Yeah.", "Okay.", "Alright.", "Right.", "Uh-huh.", "Sure.", "I see.", "Got it.", "Yes.", "Oh.", "Really?", "Cool."];
export const INTERRUPTION_PHRASES = ["Wait.", "Stop.", "Hold on.", "No, wait.", "Excuse me.", "Stop, please.", "Wait a moment.", "No, I meant the other one.", "Can you repeat that?", "Actually, tell me the time."];
const VOICES = ["slt", "rms"];
/** Lengths of the real bursts, ms: spread over 160–260. */
const BURST_MS = [160, 170, 180, 190, 200, 210, 220, 235, 250, 260];
/** Silence before the speech and after it, s. */
const LEAD_S = 0.3;
const TAIL_S = 0.5;

/**
 * Makes the corpus (in a child process: flite) and returns its items:
 * `{ name, kind, source, text }`, name relative to bench/pages/session/.
 */
export function prepareBackchannelCorpus() {
  const human = prepareHumanSpeech();
  execFileSync(process.execPath, ["--no-turbo-fast-api-calls", fileURLToPath(import.meta.url)], { stdio: ["ignore", "ignore", "inherit"] });
  const items = JSON.parse(readFileSync(new URL("index.json", OUT), "utf8"));
  // The real voices: bursts cut here, recordings whole (already beside the page).
  human.names.forEach((name, i) => {
    const meta = JSON.parse(readFileSync(new URL(`${name.slice("human/".length)}.json`, HUMAN), "utf8"));
    const burstName = `burst-${name.slice("human/".length)}`;
    writeBurst(name.slice("human/".length), meta, BURST_MS[i % BURST_MS.length], burstName);
    items.push({ name: `backchannel/${burstName}`, kind: "backchannel", source: "human", text: `(${BURST_MS[i % BURST_MS.length]} ms of "${meta.text.split(" ")[0]}")` });
    items.push({ name, kind: "interruption", source: "human", text: meta.text });
  });
  return items;
}

/** The first `ms` of a recording's speech, faded in and out over 10 ms, with the corpus's lead and tail. */
function writeBurst(file, meta, ms, name) {
  const wav = readFileSync(new URL(`${file}.wav`, HUMAN));
  const dataAt = wav.indexOf("data") + 8;
  const rate = meta.sampleRate;
  const from = meta.onsetSamples;
  const length = Math.round((ms / 1000) * rate);
  const lead = Math.round(LEAD_S * rate);
  const out = new Int16Array(lead + length + Math.round(TAIL_S * rate));
  const fade = Math.round(0.01 * rate);
  for (let i = 0; i < length; i++) {
    const gain = Math.min(1, i / fade, (length - 1 - i) / fade);
    out[lead + i] = Math.round(wav.readInt16LE(dataAt + 2 * (from + i)) * gain);
  }
  writeFileSync(new URL(`${name}.wav`, OUT), wavBytes(out, rate));
  writeFileSync(new URL(`${name}.json`, OUT), JSON.stringify({ text: "", source: meta.source, sampleRate: rate, samples: out.length, onsetSamples: lead, offsetSamples: lead + length, words: [] }));
}

function wavBytes(samples, rate) {
  const b = Buffer.alloc(44 + samples.length * 2);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + samples.length * 2, 4);
  b.write("WAVEfmt ", 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(samples[i], 44 + 2 * i);
  return b;
}

/** The flite part, run as its own process. */
async function synthesiseFlite() {
  const { synthesize } = await import("../../demo/server/flite.mjs");
  mkdirSync(OUT, { recursive: true });
  const items = [];
  const kinds = [
    ["backchannel", BACKCHANNEL_PHRASES],
    ["interruption", INTERRUPTION_PHRASES],
  ];
  for (const [kind, phrases] of kinds) {
    for (const text of phrases) {
      for (const voice of VOICES) {
        const speech = synthesize(text, voice);
        const rate = speech.sampleRate;
        const pad = Math.round(Math.max(0, LEAD_S - speech.words[0].start) * rate);
        const samples = new Int16Array(pad + speech.samples.length + Math.round(TAIL_S * rate));
        samples.set(speech.samples, pad);
        const name = `${kind}-${text.toLowerCase().replace(/[^a-z]+/g, "-").replace(/^-|-$/g, "")}-${voice}`;
        const words = speech.words.map((w) => ({ text: w.text, start: pad / rate + w.start, stop: pad / rate + w.stop }));
        writeFileSync(new URL(`${name}.wav`, OUT), wavBytes(samples, rate));
        writeFileSync(
          new URL(`${name}.json`, OUT),
          JSON.stringify({ text, voice, sampleRate: rate, samples: samples.length, onsetSamples: Math.round(words[0].start * rate), offsetSamples: Math.round(words.at(-1).stop * rate), words }),
        );
        items.push({ name: `backchannel/${name}`, kind, source: "flite", text });
      }
    }
  }
  writeFileSync(new URL("index.json", OUT), JSON.stringify(items));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await synthesiseFlite();
