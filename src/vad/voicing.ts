/**
 * Whether a 16 kHz frame is voiced at a speaking voice's pitch: the onset
 * cue's cheap speech-likeness check (src/vad/onset-cue.ts). Pure; allocates
 * nothing; about 90k multiply-adds a 512-sample frame.
 *
 * The measure: the frame's normalised autocorrelation over lags of
 * 1000 Hz down to 80 Hz. Its fundamental is the shortest lag that comes
 * within 10% of the best, so a tone (a phone's ring, a notification, whose
 * autocorrelation peaks at every multiple of its short period) reads at its
 * own high pitch, not at a multiple that falls in a voice's range. Voiced
 * when that peak reaches `threshold` and the fundamental is 80–400 Hz.
 * Clicks, knocks, typing, applause and fricatives are not periodic; music
 * can be, which is why the bench measures what this costs in room sounds.
 */

const RATE = 16000;
const MIN_F0 = 80;
const MAX_F0 = 400;
/** The shortest lag looked at: 1000 Hz, so a tone above a voice's range is seen as such. */
const MIN_LAG = RATE / 1000;
const MAX_LAG = RATE / MIN_F0;

/** Whether `frame` (16 kHz) is periodic at a voice's pitch with normalised autocorrelation ≥ `threshold`. */
export function isVoiced(frame: Float32Array, threshold: number): boolean {
  const n = frame.length;
  if (n <= MAX_LAG) return false;
  let best = 0;
  let bestLag = 0;
  // Two passes so nothing is stored: the best correlation, then the first lag within 10% of it.
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    const c = correlation(frame, lag);
    if (c > best) {
      best = c;
      bestLag = lag;
    }
  }
  if (best < threshold) return false;
  let f0Lag = bestLag;
  for (let lag = MIN_LAG; lag < bestLag; lag++) {
    if (correlation(frame, lag) >= 0.9 * best) {
      f0Lag = lag;
      break;
    }
  }
  const f0 = RATE / f0Lag;
  return f0 >= MIN_F0 && f0 <= MAX_F0;
}

/** Normalised autocorrelation of `frame` at `lag` (−1 … 1; 0 for silence). */
function correlation(frame: Float32Array, lag: number): number {
  let xy = 0;
  let xx = 0;
  let yy = 0;
  for (let i = 0; i + lag < frame.length; i++) {
    const x = frame[i]!;
    const y = frame[i + lag]!;
    xy += x * y;
    xx += x * x;
    yy += y * y;
  }
  return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
}
