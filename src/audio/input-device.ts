/**
 * Opening a microphone track with getUserMedia: the processing flags the SDK
 * relies on (echo cancellation, noise suppression, gain control), the app's
 * extra constraints, and an optional device. Shared by Microphone.start() and
 * Microphone.setDevice(), so a swapped device is opened exactly like the first.
 * Thread: main.
 */
import { MicrophoneError, type MicrophoneErrorReason } from "../errors.js";

/**
 * Opens an audio track. `deviceId` undefined: the browser's default input.
 * A chosen device is `exact`, so a missing one fails rather than silently
 * opening another (https://developer.mozilla.org/en-US/docs/Web/API/MediaDevices/getUserMedia).
 */
export async function openInput(constraints: MediaTrackConstraints | undefined, deviceId?: string): Promise<MediaStream> {
  const media = globalThis.navigator?.mediaDevices;
  if (!media?.getUserMedia) {
    throw new MicrophoneError(
      "This page cannot use the microphone (navigator.mediaDevices is missing): serve it over https or from localhost",
      { reason: "unsupported" },
    );
  }
  let stream: MediaStream;
  try {
    stream = await media.getUserMedia({
      audio: {
        ...constraints,
        ...(deviceId === undefined ? {} : { deviceId: { exact: deviceId } }),
        echoCancellation: true,
        noiseSuppression: true,
        autoGainControl: true,
      },
    });
  } catch (cause) {
    throw microphoneError(cause, deviceId);
  }
  await preferFullEchoCancellation(stream);
  return stream;
}

/**
 * Where the browser offers it, asks for echo cancellation of all system audio
 * (`echoCancellation: "all"`), not only of this page's own output.
 */
async function preferFullEchoCancellation(stream: MediaStream): Promise<void> {
  const track = stream.getAudioTracks()[0];
  const offered = (track?.getCapabilities?.() as { echoCancellation?: unknown } | undefined)?.echoCancellation;
  if (!Array.isArray(offered) || !offered.includes("all")) return;
  try {
    await track.applyConstraints({ echoCancellation: "all" } as unknown as MediaTrackConstraints);
  } catch {
    // The browser listed "all" but refused it: plain echo cancellation stays on.
  }
}

function microphoneError(cause: unknown, deviceId: string | undefined): MicrophoneError {
  const name = (cause as { name?: string } | undefined)?.name;
  const device = deviceId === undefined ? "" : ` (input device "${deviceId}")`;
  const table: Record<string, [MicrophoneErrorReason, string]> = {
    NotAllowedError: ["denied", "Microphone access was denied: allow it in the browser's site settings, then try again"],
    SecurityError: ["denied", "Microphone access is blocked on this page: serve it over https and allow the microphone"],
    NotFoundError: ["not-found", "No microphone was found: plug one in or choose another input device"],
    OverconstrainedError: ["not-found", "No microphone matches the requested constraints: choose another device"],
    NotReadableError: ["in-use", "The microphone could not be opened (another app may hold it): close that app and try again"],
    AbortError: ["in-use", "The microphone could not be opened: try again or choose another device"],
  };
  const [reason, message] = table[name ?? ""] ?? ["unknown", `The microphone could not be opened (${name ?? String(cause)})`];
  return new MicrophoneError(message.replace(":", `${device}:`), { reason, cause });
}
