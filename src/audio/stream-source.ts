/**
 * The microphone's stream into the AudioContext, for Microphone.start() and
 * Microphone.setDevice(). Thread: main.
 */
import { MicrophoneError } from "../errors.js";

/**
 * `context.createMediaStreamSource(stream)`, with one failure made readable.
 * Firefox does not resample between a track and an AudioContext made at
 * another `sampleRate`: it throws a NotSupportedError whose text names
 * neither rate nor a way out (Mozilla bugs 1674892 and 1725336); Chromium and
 * WebKit resample, so an app meets this in Firefox only. The name is matched,
 * not the text, which is the browser's to change. Any other error is the
 * caller's to handle, unchanged.
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
    const mic = typeof rate === "number" && rate > 0 ? `${rate} Hz` : "another rate";
    throw new MicrophoneError(
      `The microphone (${mic}) cannot be connected to the AudioContext at ${context.sampleRate} Hz: ` +
        "this browser does not resample between them. Create the AudioContext without a `sampleRate` " +
        "(bargein resamples for the VAD and the STT itself), or at the microphone's rate",
      { reason: "unsupported", cause: err },
    );
  }
}
