// The Silero models side by side (bench/vad-models.bench.mjs): each labelled
// speech fixture, clean and mixed with white or pink noise at a given SNR,
// and the noise alone, fed as fast as the worker takes it through a real
// VadWorker per model, with the session's VAD settings. Returns, per model and
// condition, the utterances found, missed and invented, and the onset error.
import { VadWorker } from "/dist/advanced.js";
import { loadFixture } from "/test/browser/pages/vad/fixtures.js";

const FRAME = 512;

function rms(samples, from = 0, to = samples.length) {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / Math.max(1, to - from));
}

/** The gain that puts `noise` `snrDb` below the labelled utterances of `speech`. */
function noiseGain(speech, label, noise, snrDb) {
  const speechRms = Math.sqrt(label.utterances.reduce((n, u) => n + rms(speech, u.onsetSample, u.offsetSample) ** 2, 0) / label.utterances.length);
  return speechRms / (rms(noise) * 10 ** (snrDb / 20));
}

/** `speech` (or silence of its length, with `noiseOnly`) plus `noise`, looped, at `snrDb` below its utterances. */
function mix(speech, label, noise, snrDb, noiseOnly = false) {
  const gain = noiseGain(speech, label, noise, snrDb);
  return Float32Array.from(speech, (s, i) => (noiseOnly ? 0 : s) + noise[i % noise.length] * gain);
}

/** Feeds `samples` to a new VadWorker; returns its speech segments [start, end) in samples and speech starts. */
async function segments(samples, options) {
  const vad = new VadWorker({ assetsPath: "/dist/", ...options });
  await vad.start();
  const found = [];
  const starts = [];
  vad.on("speechStart", (e) => starts.push(e.sampleIndex));
  vad.on("speechEnd", (e) => found.push({ start: e.audioStartIndex, end: e.sampleIndex, firstStart: starts.at(-1) }));
  for (let i = 0; i + FRAME <= samples.length; i += FRAME) vad.feed(samples.slice(i, i + FRAME), i);
  await vad.flush();
  await vad.stop();
  return { found, starts };
}

/** Matches segments to labelled utterances by overlap. */
function score(found, label) {
  const utterances = label?.utterances ?? [];
  const hit = utterances.map((u) => found.find((f) => f.start < u.offsetSample && f.end > u.onsetSample));
  const invented = found.filter((f) => !utterances.some((u) => f.start < u.offsetSample && f.end > u.onsetSample));
  const onsetErrorMs = hit.flatMap((f, i) => (f ? [((f.firstStart - utterances[i].onsetSample) / 16000) * 1000] : []));
  return { utterances: utterances.length, found: hit.filter(Boolean).length, missed: hit.filter((f) => !f).length, invented: invented.length, onsetErrorMs };
}

async function run({ models, speech, noises, snrsDb, options }) {
  const fixtures = Object.fromEntries(await Promise.all([...speech, ...noises].map(async (n) => [n, await loadFixture(n)])));
  const rows = [];
  for (const model of models) {
    for (const name of speech) {
      const { samples, label } = fixtures[name];
      for (const noise of [null, ...noises]) {
        for (const snrDb of noise ? snrsDb : [null]) {
          const mixed = noise ? mix(samples, label, fixtures[noise].samples, snrDb) : samples;
          const { found } = await segments(mixed, { ...options, model });
          rows.push({ model, fixture: name, noise: noise ?? "clean", snrDb, ...score(found, label) });
        }
      }
    }
    for (const noise of noises) {
      // Noise alone, at the level it has at the lowest SNR against the speech fixtures: every segment is invented.
      const { samples, label } = fixtures[speech[0]];
      const { found } = await segments(mix(samples, label, fixtures[noise].samples, Math.min(...snrsDb), true), { ...options, model });
      rows.push({ model, fixture: "none", noise, snrDb: Math.min(...snrsDb), utterances: 0, found: 0, missed: 0, invented: found.length, onsetErrorMs: [] });
    }
  }
  return rows;
}

window.bench = { run };
window.benchReady = true;
