// The turn-taking corpus of `npm run bench -- turn` (issue #19): utterances
// with pauses inside them, as people speak, each labelled with where the
// turn really ends. Spoken by flite (both voices), the pauses inserted as
// room silence between the segments:
// - hesitation: a sentence broken once, mid-phrase, by a 300–900 ms pause;
// - list: items read with commas, a 300–900 ms pause after each but the last;
// - afterthought: a question, a 300–900 ms pause, then its afterthought;
// - plain: a short finished sentence, no pause (the latency reference).
// Pause lengths are seeded (SEED), so every run and every policy hears the
// same corpus. Written to bench/pages/session/turn-corpus/ (git-ignored), in
// the fixtures' format plus `pauses` ([start, end] s) and `kind`; the turn's
// end is `offsetSamples`. flite runs in a child process (V8's fast API calls
// off: docs/post-mortems.md).
//
//   node --no-turbo-fast-api-calls bench/lib/turn-corpus.mjs   writes the corpus
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { prng } from "../../test/lib/prng.mjs";
import { writeWav } from "../../demo/server/wav.mjs";

const OUT = new URL("../pages/session/turn-corpus/", import.meta.url);
const SEED = 23;
const LEAD_S = 0.3;
const TAIL_S = 0.6;

/** Each entry is its segments: a pause goes between two. */
const SCRIPTS = {
  hesitation: [
    ["I want to go to", "the train station."],
    ["Can you tell me", "the time in Tokyo?"],
    ["Please turn on", "the kitchen lights."],
    ["My favourite colour is", "dark green."],
    ["I would like to book a table for", "four people."],
    ["What is the", "capital of Australia?"],
    ["Remind me to call", "my sister tomorrow."],
    ["Could you play some", "quiet music?"],
    ["I need a taxi", "to the airport."],
    ["How long does it take to", "boil an egg?"],
  ],
  list: [
    ["I need eggs,", "milk,", "and bread."],
    ["Add apples,", "pears,", "and some grapes."],
    ["Call Anna,", "Peter,", "and my mother."],
    ["Open the door,", "the window,", "and the garage."],
    ["We visited Rome,", "Paris,", "and Berlin."],
  ],
  afterthought: [
    ["What is the weather like?", "In London, I mean."],
    ["Is the shop open?", "The one on the corner."],
    ["Can you set an alarm?", "For seven tomorrow."],
    ["Do you know this song?", "The one playing now."],
    ["How far is the beach?", "By car, I mean."],
  ],
  plain: [["What time is it?"], ["Turn off the radio."], ["Tell me a joke."], ["How are you today?"], ["Thank you very much."]],
};
const VOICES = ["slt", "rms"];

/** Makes the corpus (in a child process: flite) and returns its items `{ name, kind, voice, text, pauses }`. */
export function prepareTurnCorpus() {
  execFileSync(process.execPath, ["--no-turbo-fast-api-calls", fileURLToPath(import.meta.url)], { stdio: ["ignore", "ignore", "inherit"] });
  return JSON.parse(readFileSync(new URL("index.json", OUT), "utf8"));
}

async function synthesiseCorpus() {
  const { synthesize } = await import("../../demo/server/flite.mjs");
  mkdirSync(OUT, { recursive: true });
  const random = prng(SEED);
  const items = [];
  for (const [kind, scripts] of Object.entries(SCRIPTS)) {
    scripts.forEach((segments, index) => {
      for (const voice of VOICES) {
        const rate = 16000;
        const parts = [];
        const words = [];
        const pauses = [];
        let at = Math.round(LEAD_S * rate);
        segments.forEach((text, i) => {
          const speech = synthesize(text, voice);
          // Only the voiced part of each segment: from its first word's start to its last word's end.
          const from = Math.round(speech.words[0].start * rate);
          const to = Math.round(speech.words.at(-1).stop * rate);
          if (i > 0) {
            const pauseS = 0.3 + 0.6 * random();
            pauses.push([at / rate, at / rate + pauseS]);
            at += Math.round(pauseS * rate);
          }
          parts.push({ at, samples: speech.samples.subarray(from, to) });
          for (const w of speech.words) words.push({ text: w.text, start: (at + Math.round(w.start * rate) - from) / rate, stop: (at + Math.round(w.stop * rate) - from) / rate });
          at += to - from;
        });
        const end = at;
        const samples = new Int16Array(end + Math.round(TAIL_S * rate));
        for (const p of parts) samples.set(p.samples, p.at);
        const name = `${kind}-${index + 1}-${voice}`;
        const text = segments.join(" ");
        writeFileSync(new URL(`${name}.wav`, OUT), writeWav(samples, rate));
        writeFileSync(
          new URL(`${name}.json`, OUT),
          JSON.stringify({ text, voice, kind, sampleRate: rate, samples: samples.length, onsetSamples: Math.round(LEAD_S * rate), offsetSamples: end, pauses, words }),
        );
        items.push({ name: `turn-corpus/${name}`, kind, voice, text, pauses: pauses.map(([a, b]) => Math.round((b - a) * 1000)) });
      }
    });
  }
  writeFileSync(new URL("index.json", OUT), JSON.stringify(items));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await synthesiseCorpus();
