// Shared by both bench pages: builds the same audio program from the VAD test
// fixtures and plays it, in real time, into a MediaStream inside a 16 kHz
// AudioContext. Each VAD under test consumes that stream in that context, so
// both see the same samples through the same path.
//
// Onset times: the render clock and performance.now() are read together when
// playback is scheduled; a sample's time is mapped from context time with that
// pair (both VADs use the same mapping, so its small offset cancels out in the
// comparison).
import { prng } from "/test/lib/prng.mjs";
import { loadFixture } from "/test/browser/pages/vad/fixtures.js";

/** The fixtures `repeats` times over, each after 0–511 samples of extra silence. */
export async function buildProgram({ fixtures, repeats, seed = 42 }) {
  const loaded = await Promise.all(fixtures.map(loadFixture));
  const rand = prng(seed);
  const parts = [];
  const onsets = [];
  let cursor = 0;
  for (let r = 0; r < repeats; r++) {
    for (const { samples, label } of loaded) {
      const jitter = Math.floor(rand() * 512);
      parts.push(new Float32Array(jitter));
      cursor += jitter;
      for (const u of label.utterances) onsets.push(cursor + u.onsetSample);
      parts.push(samples);
      cursor += samples.length;
    }
  }
  const samples = new Float32Array(cursor);
  let at = 0;
  for (const p of parts) {
    samples.set(p, at);
    at += p.length;
  }
  return { samples, onsets };
}

/** A 16 kHz context playing `samples` into a MediaStream once `play()` is called. */
export function createPlayer(samples) {
  const context = new AudioContext({ sampleRate: 16000 });
  const destination = context.createMediaStreamDestination();
  const buffer = context.createBuffer(1, samples.length, 16000);
  buffer.copyToChannel(samples, 0);
  return {
    context,
    stream: destination.stream,
    /** Starts playback 0.3 s from now; resolves with the mapping and the end. */
    async play() {
      await context.resume();
      const source = new AudioBufferSourceNode(context, { buffer });
      source.connect(destination);
      const when = context.currentTime + 0.3;
      const pair = { contextTime: context.currentTime, perfTime: performance.now() };
      source.start(when);
      const ended = new Promise((r) => (source.onended = r));
      const perfOfSample = (i) => pair.perfTime + (when + i / 16000 - pair.contextTime) * 1000;
      return { perfOfSample, ended, durationS: samples.length / 16000 };
    },
  };
}

/** For each onset, the first speech-start time at or after it minus 250 ms, before the next onset. */
export function onsetLatencies(onsets, perfOfSample, startTimes) {
  return onsets.map((onset, i) => {
    const from = perfOfSample(onset) - 250;
    const until = i + 1 < onsets.length ? perfOfSample(onsets[i + 1]) - 250 : Infinity;
    const t = startTimes.find((s) => s >= from && s < until);
    return t === undefined ? null : t - perfOfSample(onset);
  });
}

/**
 * Phase 2 of both VAD pages: plays `window.state.player`'s program in real
 * time, keeps the run in `window.state.run`, and resolves 0.5 s after the
 * audio has ended (time for the last decisions to arrive).
 */
export async function playPhase() {
  const { player } = window.state;
  const run = await player.play();
  window.state.run = run;
  await run.ended;
  await new Promise((r) => setTimeout(r, 500));
  return { durationS: run.durationS };
}
