/**
 * The microphone's stream into the AudioContext, for Microphone.start() and
 * Microphone.setDevice(). Thread: main.
 */
import { MicrophoneError } from "../errors.js";

/**
 * `context.createMediaStreamSource(stream)`, with one failure made readable.
 * Firefox refused to connect a track to an AudioContext made at another
 * `sampleRate` (Mozilla bugs 1674892 and 1725336), with a NotSupportedError
 * whose text names neither rate nor a way out; ESR 153 resamples, as Chromium
 * and WebKit do (test/engines), but the releases before the fix are still in
 * use. The name is matched, not the text, which is the browser's to change.
 * The track's rate is named only where getSettings() gives it (Firefox does
 * not; WebKitGTK says 0).
 */
export function connectStream(
  context: Pick<AudioContext, "createMediaStreamSource" | "sampleRate">,
  stream: MediaStream,
): MediaStreamAudioSourceNode {
  try {
    return context.createMediaStreamSource(stream);
  } catch (err) {
    if ((err as { name?: unknown } | null)?.name !== "NotSupportedError") throw err;
    const rate = stream.getAudioTracks()[0]?.getSettings?.().sampleRate;
    const mic = typeof rate === "number" && rate > 0 ? `${rate} Hz` : "at another rate";
    throw new MicrophoneError(
      `The microphone (${mic}) cannot be connected to the AudioContext at ${context.sampleRate} Hz: ` +
        "this browser does not resample between them. Create the AudioContext without a `sampleRate` " +
        "(bargein resamples for the VAD and the STT itself), or at the microphone's rate",
      { reason: "unsupported", cause: err },
    );
  }
}
