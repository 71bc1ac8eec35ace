// Readings of a recorded output (timeline-recorder.js: sample i is context
// frame startFrame + i), shared by the pages that judge a barge-in on it.
// Quanta the render thread skipped stay zero in the recording: they prove
// nothing either way, so silence is never found in them.

/** Below this a sample is silence (-80 dBFS). */
export const SILENCE = 1e-4;
/** Above this a sample is the bot's audio, not a fade's tail (-60 dBFS). */
export const AUDIBLE = 1e-3;

/** Maps context times to recording indices, and tells skipped quanta apart. */
export function timeline(rec, sampleRate) {
  const skipped = new Set(rec.missed.map((q) => Math.floor(q / 128)));
  return {
    index: (t) => Math.round(t * sampleRate) - rec.startFrame,
    known: (i) => !skipped.has(Math.floor(i / 128)),
  };
}

/**
 * Where the output fell silent for good in [from, until): the sample after the last rendered one that
 * is not silence, or `from` when none is. Not the first silent 10 ms: a gap between the bot's words,
 * before its pause, is one of those.
 */
export function silentFrom(samples, line, from, until) {
  for (let i = Math.min(until, samples.length) - 1; i >= from; i--) if (line.known(i) && Math.abs(samples[i]) >= SILENCE) return i + 1;
  return from;
}

/**
 * Sound of a flushed reply after its flush, in [from, until): the recording index of the first flush
 * at or after `from` (`flushes`: the session page's { frame } list, context frames) and how many samples
 * are not silence from the end of that flush's quantum on. `at` is -1 when no flush came.
 */
export function afterFlush(samples, startFrame, flushes, from, until) {
  const flush = flushes.map((f) => f.frame - startFrame).find((at) => at >= from);
  if (flush === undefined) return { at: -1, loud: 0 };
  return { at: flush, loud: loudSamples(samples, flush + 128, until) };
}

/** The output's sound in [from, until), as [startMs, endMs] runs of 10 ms windows from `from`: where it played, paused and played again. */
export function soundRuns(samples, sampleRate, from, until) {
  const runs = [];
  const window = Math.round(sampleRate * 0.01);
  for (let i = from; i + window <= until; i += window) {
    if (peak(samples, i, i + window) < SILENCE) continue;
    const ms = Math.round(((i - from) / sampleRate) * 1000);
    if (runs.length && runs.at(-1)[1] === ms) runs.at(-1)[1] = ms + 10;
    else runs.push([ms, ms + 10]);
  }
  return runs;
}

/**
 * How a reply was cut, read from the recording (`rec`: { samples, startFrame }; `flushes`: the session
 * page's list) between the user's onset and `quietUntil` (recording indices): where the output fell
 * silent for good and how long after the onset, how loud the bot was in the 300 ms before it, the sound
 * after the onset as 10 ms runs (`runs`, and `said` for a message), and what sounded after the flush.
 */
export function readCut(rec, line, flushes, sampleRate, onsetAt, quietUntil) {
  const { samples } = rec;
  const silentAt = silentFrom(samples, line, onsetAt, quietUntil);
  const runs = soundRuns(samples, sampleRate, onsetAt, quietUntil);
  return {
    silentAt,
    silentAfterMs: ((silentAt - onsetAt) / sampleRate) * 1000,
    audibleBefore: peak(samples, onsetAt - Math.round(sampleRate * 0.3), onsetAt),
    runs,
    said: `sound after the onset (ms): ${JSON.stringify(runs)}`,
    flushed: afterFlush(samples, rec.startFrame, flushes, onsetAt, quietUntil),
  };
}

/** Samples in [from, until) that are not silence. */
export function loudSamples(samples, from, until) {
  let n = 0;
  for (let i = Math.max(0, from); i < Math.min(until, samples.length); i++) if (Math.abs(samples[i]) >= SILENCE) n++;
  return n;
}

/** The first index at or after `from` whose sample is audible, or -1. */
export function firstAudible(samples, from = 0, threshold = AUDIBLE) {
  for (let i = Math.max(0, from); i < samples.length; i++) if (Math.abs(samples[i]) >= threshold) return i;
  return -1;
}

/** The loudest |sample| in [from, until). */
export function peak(samples, from, until) {
  let max = 0;
  for (let i = Math.max(0, from); i < Math.min(until, samples.length); i++) max = Math.max(max, Math.abs(samples[i]));
  return max;
}

/** Milliseconds of [from, until) in 10 ms windows whose RMS is above -40 dBFS: how much speech played. */
export function loudMs(samples, sampleRate, from = 0, until = samples.length) {
  const window = Math.round(sampleRate * 0.01);
  let windows = 0;
  for (let i = Math.max(0, from); i + window <= Math.min(until, samples.length); i += window) {
    let sum = 0;
    for (let j = i; j < i + window; j++) sum += samples[j] * samples[j];
    if (Math.sqrt(sum / window) > 0.01) windows++;
  }
  return windows * 10;
}

/**
 * Samples of the recording in [from, to) in which the player rendered nothing of its audio: quanta the
 * render thread skipped (the player did not run either), and the playback worklet's underruns (it ran
 * dry at the frame it reported, then waited for its prebuffer and went on from the start of a quantum:
 * the quantum of the next non-zero sample). `underrunFrames` are context frames. `silenceAhead(n)`:
 * how many zero samples (at the output's rate) the audio has after its first n output samples, when
 * the test knows the audio; otherwise the next sound is taken for the resume.
 */
export function notRendered(samples, line, startFrame, from, to, underrunFrames = [], silenceAhead = () => 0) {
  const skipped = skippedIn(line, startFrame, from, to);
  let starved = 0;
  // The end of the last dry span counted: a second report inside it is the same wait, not another.
  let counted = -Infinity;
  for (const frame of underrunFrames.slice().sort((a, b) => a - b)) {
    const at = frame - startFrame;
    if (at <= from || at >= to || at < counted) continue;
    let next = at;
    while (next < to && samples[next] === 0) next++;
    // The audio it went on with may itself begin with zeros (a pause between words): the player
    // resumed that much before its next sound.
    const quiet = Math.max(0, Math.min(next - at, silenceAhead(at - from - skippedIn(line, startFrame, from, at) - starved)));
    const resumedAt = next - quiet;
    const resumed = resumedAt - ((startFrame + resumedAt) % 128);
    starved += Math.max(0, Math.min(resumed, to) - at);
    counted = resumed;
  }
  return { skipped, starved };
}

/** Samples of [from, to) in quanta the render thread skipped. */
function skippedIn(line, startFrame, from, to) {
  let skipped = 0;
  for (let i = from - ((startFrame + from) % 128); i < to; i += 128) if (!line.known(Math.max(i, from))) skipped += Math.min(i + 128, to) - Math.max(i, from);
  return skipped;
}
