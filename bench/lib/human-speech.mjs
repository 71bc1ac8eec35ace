// Recordings of real people for the barge-in bench: Debian's
// pocketsphinx-testdata ships LibriVox readings (public domain, one adult
// female reader of "Sense and Sensibility") and the CMU "cards" set (a male
// speaker saying playing cards), 16 kHz mono. Real onsets are softer than
// flite's, which is what the bench needs to see. They are copied beside the
// bench page with a label in the fixtures' format (onset/offset from the
// −20 dB envelope, held 20 ms: see envelope()), so the page plays them
// exactly as it plays the flite fixtures.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const DATA = "/usr/share/pocketsphinx/test/data";
const SETS = [
  { dir: "librivox", transcription: "librivox/transcription", speaker: "LibriVox reader (female)" },
  { dir: "cards", transcription: "cards/cards.transcription", speaker: "CMU cards speaker (male)" },
];
export const HUMAN_PACKAGE = "pocketsphinx-testdata";

function wavSamples(path) {
  const b = readFileSync(path);
  let at = 12;
  let rate = 0;
  while (at + 8 <= b.length) {
    const id = b.toString("ascii", at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === "fmt ") rate = b.readUInt32LE(at + 12);
    else if (id === "data") {
      const n = Math.floor(Math.min(size, b.length - at - 8) / 2);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = b.readInt16LE(at + 8 + 2 * i) / 32768;
      return { rate, samples: out };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error(`${path}: no data chunk`);
}

/**
 * Where the speech starts and ends, in samples: the first 5 ms window within
 * −20 dB of the loudest that begins ONSET_RUN windows in a row within it (so
 * 20 ms of voice), and the last window within it. Why the run: LibriVox 0880
 * ("he was not…") opens with a 25 ms click at −40 dBFS, 235 ms before "he";
 * a single window put its onset on the click (30 ms), and the bench then
 * charged the barge-in with the 235 ms of room noise after it (onset → pause
 * 290–309 ms in 2 of its 3 trials, the humanSpeech p95). Of the 10
 * recordings, the run moves only that onset (to 265 ms) and 0920's (340 →
 * 355 ms, a 5 ms tick 15 ms ahead of its first syllable).
 */
const ONSET_RUN = 4;
function envelope(samples, rate) {
  const w = Math.round(rate * 0.005);
  const rms = [];
  for (let i = 0; i + w <= samples.length; i += w) {
    let s = 0;
    for (let j = i; j < i + w; j++) s += samples[j] * samples[j];
    rms.push(Math.sqrt(s / w));
  }
  const threshold = 0.1 * Math.max(...rms);
  const first = rms.findIndex((_, i) => i + ONSET_RUN <= rms.length && rms.slice(i, i + ONSET_RUN).every((v) => v >= threshold));
  let last = rms.length - 1;
  while (last > 0 && rms[last] < threshold) last--;
  return { onset: first * w, offset: (last + 1) * w };
}

/**
 * Copies the recordings to bench/pages/session/human/ (git-ignored) and
 * returns their fixture names ("human/<name>") and the level of the noise bed
 * the bench plays under them (`noiseDb`, dBFS: the loudest room among them). Throws, naming the package,
 * when pocketsphinx-testdata is not installed.
 */
export function prepareHumanSpeech() {
  if (!existsSync(DATA)) {
    throw new Error(`the barge-in bench's recordings of real speech come from Debian's ${HUMAN_PACKAGE}, which is not installed: sudo apt-get install -y ${HUMAN_PACKAGE}`);
  }
  const out = new URL("../pages/session/human/", import.meta.url);
  mkdirSync(out, { recursive: true });
  const names = [];
  const noiseDbs = [];
  for (const set of SETS) {
    for (const line of readFileSync(`${DATA}/${set.transcription}`, "utf8").split("\n")) {
      const m = line.match(/^<s>\s*(.*?)\s*<\/s>\s*\(([^)]+)\)/);
      if (!m) continue;
      const [, text, id] = m;
      const file = `${DATA}/${set.dir}/${id}.wav`;
      if (!existsSync(file)) continue;
      const { rate, samples } = wavSamples(file);
      const { onset, offset } = envelope(samples, rate);
      const name = `${set.dir}-${id.replace(/[^a-z0-9]+/gi, "-").slice(-12)}`;
      copyFileSync(file, new URL(`${name}.wav`, out));
      const words = text.split(/\s+/).filter(Boolean).map((w) => ({ text: w }));
      writeFileSync(new URL(`${name}.json`, out), JSON.stringify({ text, speaker: set.speaker, source: `${HUMAN_PACKAGE}: ${set.dir}/${id}.wav`, sampleRate: rate, samples: samples.length, onsetSamples: onset, offsetSamples: offset, words }, null, 1));
      names.push(`human/${name}`);
      noiseDbs.push(roomNoiseDb(samples, rate));
    }
  }
  // The loudest of the recordings' own rooms: a bed at that level hides every recording's start.
  return { names, noiseDb: Math.round(Math.max(...noiseDbs)) };
}

/**
 * RMS (dBFS) of a recording's room noise: its quietest 20 ms. (What comes
 * before the −20 dB onset is no measure of it: breaths and soft starts put it
 * at −39 to −56 dBFS, against −53 to −64 for the quietest window.)
 */
function roomNoiseDb(samples, rate) {
  const span = Math.round(rate * 0.02);
  let level = Infinity;
  for (let i = 0; i + span <= samples.length; i += span) {
    let s = 0;
    for (let j = i; j < i + span; j++) s += samples[j] * samples[j];
    level = Math.min(level, Math.sqrt(s / span));
  }
  return 20 * Math.log10(Math.max(level, 1e-6));
}
