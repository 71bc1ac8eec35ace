// Pure checks shared by the audio tests and the audio benchmark.

/** Distinct, never-zero samples for `generation`: values in [0.1 g, 0.1 g + 0.05). */
export function generationSignal(generation, length) {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = 0.1 * generation + ((i * 7919) % 1000) / 20000 + 0.0001;
  return out;
}

/** The generation a rendered sample belongs to, or 0 for silence and ramps that are ambiguous. */
export function generationOf(sample) {
  return sample === 0 ? 0 : Math.floor(sample * 10 + 1e-6);
}

/**
 * Walks the recording `rendered` against the written stream `written` and
 * accounts for every sample: played at full gain, played under a fade-out
 * ramp (and then replayed), or under a fade-in ramp (gains as in the worklet:
 * out = fround(x × g), g = 1 − (i+1)/F out and (i+1)/F in). Silence between
 * is allowed. Returns how far the written stream got (`consumed`), how many
 * samples did not match any of these (`mismatches`), and the ramps seen.
 */
export function accountPauses(rendered, written, fade) {
  const f = Math.fround;
  let k = 0;
  while (k < rendered.length && rendered[k] === 0) k++;
  let j = 0;
  let paused = false;
  let mismatches = 0;
  let fadeOuts = 0;
  let fadeIns = 0;
  let firstMismatch = -1;
  const miss = (at) => {
    mismatches++;
    if (firstMismatch < 0) firstMismatch = at;
  };
  while (k < rendered.length && j < written.length) {
    const r = rendered[k];
    if (!paused) {
      if (r === written[j]) {
        j++;
        k++;
      } else if (r === 0) {
        k++; // an underrun gap: nothing is consumed
      } else if (r === f(written[j] * (1 - 1 / fade))) {
        for (let i = 0; i < fade && j + i < written.length && k + i < rendered.length; i++) {
          if (rendered[k + i] !== f(written[j + i] * (1 - (i + 1) / fade))) miss(k + i);
        }
        k += fade;
        paused = true;
        fadeOuts++;
      } else {
        miss(k);
        k++;
      }
    } else if (r === 0) {
      k++;
    } else {
      for (let i = 0; i < fade && j + i < written.length && k + i < rendered.length; i++) {
        if (rendered[k + i] !== f(written[j + i] * ((i + 1) / fade))) miss(k + i);
      }
      const n = Math.min(fade, written.length - j);
      j += n;
      k += n;
      paused = false;
      fadeIns++;
    }
  }
  return { consumed: j, mismatches, firstMismatch, fadeOuts, fadeIns };
}

/** Index of the last non-zero sample in [from, to), or from − 1. */
export function lastNonZero(samples, from, to) {
  for (let i = Math.min(to, samples.length) - 1; i >= from; i--) if (samples[i] !== 0) return i;
  return from - 1;
}

/** Index of the first sample at or after `from` that starts `run` zeros in a row. */
export function silenceFrom(samples, from, run = 256) {
  let zeros = 0;
  for (let i = from; i < samples.length; i++) {
    zeros = samples[i] === 0 ? zeros + 1 : 0;
    if (zeros === run) return i - run + 1;
  }
  return samples.length;
}
