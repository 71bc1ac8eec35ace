/** Small pure helpers of the VAD worker about the frames it is sent. */

/** What a frame that is not a Float32Array(512) is, for the error that names it. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  const name = (value as object).constructor?.name ?? typeof value;
  const length = (value as { length?: number }).length;
  return length === undefined ? name : `${name}(${length})`;
}

/** RMS of one frame (linear), for the meter: the level of the very audio the probability is for. */
export function frameRms(frame: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  return frame.length ? Math.sqrt(sum / frame.length) : 0;
}
