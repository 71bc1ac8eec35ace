// The deterministic recogniser for tests (demo/server/known-speech.mjs): a fixture that reached
// the STT by a browser's path (resampled 16 → 48 → 16 kHz, another gain, another phase, noise, the
// bot's echo under it) gets exactly the words the real recogniser heard in it, each once the
// audio past its end has arrived; speech it does not know gets pocketsphinx's words.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { DecoderPool } from "../../demo/server/pocketsphinx.mjs";
import { FRAME_16K, StreamingRecogniser } from "../../demo/server/recogniser.mjs";
import { RationalResampler } from "../../demo/server/resample.mjs";
import { knownSpeechPool, loadKnownSpeech } from "../../demo/server/known-speech.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { synthesize } from "../../demo/server/flite.mjs";
import { prng } from "../lib/prng.mjs";

const DIR = "test/fixtures/speech";
const clips = loadKnownSpeech(DIR);
const pool = knownSpeechPool(new DecoderPool(), clips);
afterAll(() => pool.close());

function fixture(name: string): { samples: Float32Array; recognised: { word: string; start: number; end: number }[] } {
  const wav = readWav(readFileSync(`${DIR}/${name}.wav`));
  const samples = Float32Array.from(wav.samples, (s) => s / 32768);
  // The words as the recogniser knows them: the sidecar's, the last one ending where the speech does.
  const clip = clips.find((c) => c.name === name);
  if (!clip) throw new Error(`${name} is not known speech`);
  return { samples, recognised: clip.words };
}

/** A browser's path: 16 → 48 kHz (the context) → 16 kHz (the uplink), at another level and phase, with noise. */
function throughBrowser(samples: Float32Array, { leadSamples, gain, noise, seed }: { leadSamples: number; gain: number; noise: number; seed: number }): Float32Array {
  const random = prng(seed);
  const padded = new Float32Array(leadSamples + samples.length + 16000);
  for (let i = 0; i < samples.length; i++) padded[leadSamples + i] = samples[i] * gain;
  for (let i = 0; i < padded.length; i++) padded[i] += (random() * 2 - 1) * noise;
  return new RationalResampler(1, 3).process(new RationalResampler(3, 1).process(padded));
}

/** Streams `audio` to a recogniser frame by frame; returns each utterance's final words and when each word first appeared. */
async function recognise(audio: Float32Array) {
  const decoder = await pool.acquire();
  if (!decoder) throw new Error("pocketsphinx is not installed (node scripts/ensure-system.mjs)");
  const recogniser = new StreamingRecogniser(decoder);
  const finals: { word: string; start: number; end: number }[][] = [];
  /** When the hypothesis first held i + 1 words, by i. */
  const firstSeenAt: number[] = [];
  try {
    for (let at = 0; at < audio.length; at += FRAME_16K) {
      const result = await recogniser.processFrame(audio.subarray(at, Math.min(audio.length, at + FRAME_16K)));
      for (let i = firstSeenAt.length; i < result.words.length; i++) firstSeenAt[i] = result.processed / 16000;
      if (result.ended) finals.push(result.words);
    }
  } finally {
    pool.release(decoder);
  }
  return { finals, firstSeenAt };
}

describe("known speech", () => {
  it("loads every speech fixture with the words the real recogniser heard in it", () => {
    expect(clips.map((c) => c.name).sort()).toEqual([
      "help-me", "okay", "rig-help-me", "rig-please-stop", "rig-story", "rig-weather",
      "stop-please", "turn-on-lights", "wait", "weather-question", "weather-question-late",
    ]);
    const helpMe = clips.find((c) => c.name === "help-me");
    const sidecar = JSON.parse(readFileSync(`${DIR}/help-me.json`, "utf8"));
    expect(helpMe?.words.map((w) => w.word)).toEqual(["can", "you", "help", "me"]);
    // The last word ends where the speech does (pocketsphinx ran it on into the silence after it).
    expect(sidecar.recognised.at(-1).end).toBeGreaterThan(sidecar.offsetSamples / 16000);
    expect(helpMe?.words.at(-1)?.end).toBeCloseTo(Math.ceil((sidecar.offsetSamples / 16000) * 100) / 100, 5);
  });

  for (const name of ["help-me", "weather-question", "turn-on-lights", "stop-please", "okay", "wait"]) {
    it(`${name}: by a browser's path, at any phase and level, gives exactly the fixture's words, each after its audio`, async () => {
      const { samples, recognised } = fixture(name);
      for (const [seed, leadSamples, gain, noise] of [[1, 0, 1, 0], [2, 4097, 0.35, 0.002], [3, 11_111, 1.6, 0.004]]) {
        const lead = leadSamples / 16000;
        const { finals, firstSeenAt } = await recognise(throughBrowser(samples, { leadSamples, gain, noise, seed }));
        expect(finals.map((f) => f.map((w) => w.word))).toEqual([recognised.map((w) => w.word)]);
        const final = finals[0];
        for (const [i, w] of recognised.entries()) {
          // The word's times on the stream are the fixture's, shifted by the lead. Within 60 ms: the same speech
          // in weather-question-late, which lines up as well, was heard with its last word 60 ms shorter.
          expect(Math.abs(final[i].end - (w.end + lead))).toBeLessThan(0.061);
          // It is not given before the audio past its end has arrived.
          expect(firstSeenAt[i]).toBeGreaterThanOrEqual(w.end + lead - 0.061);
        }
      }
    });
  }

  it("a fixture over the bot's quieter echo (another voice, 14 dB down) still gets the fixture's words", async () => {
    const { samples, recognised } = fixture("help-me");
    const echo = synthesize("The forecast says rain later this afternoon.", "slt");
    const mixed = Float32Array.from(samples);
    for (let i = 0; i < mixed.length && i < echo.samples.length; i++) mixed[i] += (echo.samples[i] / 32768) * 0.2;
    const { finals } = await recognise(throughBrowser(mixed, { leadSamples: 2345, gain: 1, noise: 0.001, seed: 7 }));
    expect(finals.map((f) => f.map((w) => w.word))).toEqual([recognised.map((w) => w.word)]);
  });

  it("the bot's echo and then a fixture in one utterance: the echo's words as pocketsphinx heard them, then exactly the fixture's", async () => {
    const { samples, recognised } = fixture("weather-question");
    const echo = synthesize("I hope it is pleasant where you are.", "rms");
    const gap = 3200; // 200 ms: less than the STT's endpoint, so one utterance
    const joined = new Float32Array(echo.samples.length + gap + samples.length);
    joined.set(Float32Array.from(echo.samples, (v) => v / 32768));
    joined.set(samples, echo.samples.length + gap);
    const { finals } = await recognise(throughBrowser(joined, { leadSamples: 1234, gain: 0.9, noise: 0.001, seed: 13 }));
    const words = finals.flat().map((w) => w.word);
    expect(words.slice(-recognised.length)).toEqual(recognised.map((w) => w.word));
    expect(words.length).toBeGreaterThan(recognised.length);
  });

  // A looping fake microphone, a reconnect's replay or the bot's echo can run straight into a fixture,
  // with no pause to end the utterance: the full window lines up with the fixture only once it holds
  // none of the other speech, and pocketsphinx's words for the fixture's start must not have gone out.
  for (const [prefixS, voice, seed] of [[0.2, "slt", 31], [0.4, "rms", 32], [0.6, "slt", 33], [0.8, "rms", 34]] as const) {
    it(`${prefixS} s of other speech run straight into a fixture (${voice}): its words as pocketsphinx heard them, then exactly the fixture's`, async () => {
      const { samples, recognised } = fixture("weather-question");
      const sidecar = JSON.parse(readFileSync(`${DIR}/weather-question.json`, "utf8"));
      const question = samples.subarray(Math.max(0, sidecar.onsetSamples - 800));
      const other = Float32Array.from(synthesize("I hope it is pleasant where you are today.", voice).samples, (v) => v / 32768);
      let end = other.length;
      while (end > 0 && Math.abs(other[end - 1]) < 0.01) end--;
      const tail = other.subarray(Math.max(0, end - Math.round(prefixS * 16000)), end);
      const joined = new Float32Array(tail.length + question.length);
      joined.set(tail);
      joined.set(question, tail.length);
      const { finals } = await recognise(throughBrowser(joined, { leadSamples: 1234, gain: 0.9, noise: 0.001, seed }));
      expect(finals).toHaveLength(1);
      const words = finals[0].map((w) => w.word);
      expect(words.slice(-recognised.length)).toEqual(recognised.map((w) => w.word));
    });
  }

  it("a flush right after the last word's speech gives every word, the last one included", async () => {
    const { samples, recognised } = fixture("weather-question");
    const decoder = await pool.acquire();
    if (!decoder) throw new Error("pocketsphinx is not installed");
    const recogniser = new StreamingRecogniser(decoder);
    const sidecar = JSON.parse(readFileSync(`${DIR}/weather-question.json`, "utf8"));
    const audio = samples.subarray(0, sidecar.offsetSamples);
    try {
      for (let at = 0; at < audio.length; at += FRAME_16K) await recogniser.processFrame(audio.subarray(at, Math.min(audio.length, at + FRAME_16K)));
      expect((await recogniser.finish()).map((w) => w.word)).toEqual(recognised.map((w) => w.word));
    } finally {
      pool.release(decoder);
    }
  });

  // Six replies spoken and recognised in full: CPU work, with five other files beside it in the suite (it passed 30 s there).
  it("the bot's own replies (the same synthesiser and voice as some fixtures) are never taken for a fixture", { timeout: 120_000 }, async () => {
    const replies = [
      "I am only a scripted demo, so I cannot really know. What would you guess?",
      "I see. How does that make you feel?",
      "I cannot look outside, but I hope it is pleasant where you are. Are you planning to go out today?",
      "Once upon a time there was a small robot who loved to listen. Every day it asked people about their plans, and every day it learned something new.",
      "Please tell me more.",
      "Why do you ask? Tell me a little more.",
    ];
    const fixturePhrases = [...new Set(clips.map((c) => c.words.map((w) => w.word).join(" ")))];
    for (const [i, reply] of replies.entries()) {
      const speech = synthesize(reply, "slt");
      const { finals } = await recognise(throughBrowser(Float32Array.from(speech.samples, (v) => v / 32768), { leadSamples: 777 * i, gain: 0.5, noise: 0.001, seed: 20 + i }));
      for (const words of finals.map((f) => ` ${f.map((w) => w.word).join(" ")} `)) {
        expect(fixturePhrases.filter((p) => words.includes(` ${p} `)), `${reply} → ${words}`).toEqual([]);
      }
    }
  });

  it("speech it does not know gets the real recogniser's words", async () => {
    const speech = synthesize("Please open the door.", "rms");
    const { finals } = await recognise(throughBrowser(Float32Array.from(speech.samples, (s) => s / 32768), { leadSamples: 3000, gain: 1, noise: 0, seed: 9 }));
    const words = finals.flat().map((w) => w.word);
    expect(words).toContain("door");
    expect(words.join(" ")).not.toMatch(/weather|lights|help|moment/);
  });

  it("the knob known_speech=0 gives a stream pocketsphinx alone", async () => {
    const plain = await pool.acquire({ knownSpeech: 0 });
    const known = await pool.acquire({});
    try {
      expect(plain?.constructor.name).toBe("Decoder");
      expect(known?.constructor.name).toBe("KnownSpeechDecoder");
    } finally {
      if (plain) pool.release(plain);
      if (known) pool.release(known);
    }
  });

  it("two fixtures in one stream, apart, are two utterances with their own words", async () => {
    const a = fixture("okay");
    const b = fixture("turn-on-lights");
    const both = new Float32Array(a.samples.length + 8000 + b.samples.length);
    both.set(a.samples);
    both.set(b.samples, a.samples.length + 8000);
    const { finals } = await recognise(throughBrowser(both, { leadSamples: 999, gain: 0.8, noise: 0.001, seed: 11 }));
    expect(finals.map((f) => f.map((w) => w.word).join(" "))).toEqual(["okay", "please turn on the lights"]);
  });
});
