// Send pacing, a pure core shared by the TTS emulators: the first `burstS` seconds of
// audio go at once (a real service's head start), then audio goes at `pace` times
// real time (0: as fast as it is synthesised).

/**
 * When the frame after `sentSeconds` of audio is due, in ms on the clock of `firstAt`.
 * @param {{ firstAt: number, sentSeconds: number, burstS: number, pace: number }} p
 */
export function frameDueAt({ firstAt, sentSeconds, burstS, pace }) {
  if (pace <= 0) return firstAt;
  return firstAt + (Math.max(0, sentSeconds - burstS) / pace) * 1000;
}
