/**
 * The context's output latency, read when the context runs and before the
 * SDK's own graph exists (and again only if the context reported none then).
 * Main thread only; allocates only its result.
 *
 * Why once, and then: in Firefox the `AudioContext.outputLatency` getter (and
 * `getOutputTimestamp()`, which calls it) asks the audio backend for the
 * stream's latency while it holds the graph's lock, and the answer can depend
 * on an audio callback that waits for that same lock, so the main thread can
 * wait for ever. Firefox keeps the first non-zero answer per graph and never
 * asks again, so a read while the graph is nearly empty (just resumed) is the
 * one at risk the least; a read as a reply starts, with the worklets running,
 * froze the page in most runs (test/engines/README.md, "Firefox's freeze").
 * An app that knows its latency can give it (`audio.outputLatency`), and the
 * getter is then never read.
 */

/**
 * `outputLatency + baseLatency` of `context`, in seconds (0 for what the engine
 * does not report), and whether the output part was reported (> 0).
 * Chromium reports 0 until audio has rendered (measured: 0 right after
 * `resume()`, 0.03 s as playback starts), Firefox its answer at once: so a
 * zero is read again when playback starts (Player), and a non-zero never is.
 */
export function readOutputLatency(context: BaseAudioContext): { seconds: number; reported: boolean } {
  const audio = context as Partial<Pick<AudioContext, "outputLatency" | "baseLatency">>;
  const output = Number(audio.outputLatency ?? 0);
  const base = Number(audio.baseLatency ?? 0);
  const reported = Number.isFinite(output) && output > 0;
  return { seconds: (reported ? output : 0) + (Number.isFinite(base) && base > 0 ? base : 0), reported };
}
