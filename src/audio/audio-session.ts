/**
 * The page's audio session type (the Audio Session API,
 * https://w3c.github.io/audio-session/; Safari 16.4 and later): where the
 * browser has `navigator.audioSession` and its type is still "auto", it is
 * set to `type` before the microphone opens. A type the page chose is kept.
 *
 * Thread: main. Owner: the session's components (components.ts).
 */

interface AudioSessionLike {
  type: string;
}

/** Sets the type; returns the one in force, or undefined where the browser has no audio session. */
export function applyAudioSessionType(type: "play-and-record" | "auto", nav: { audioSession?: AudioSessionLike } | undefined = globalThis.navigator as never): string | undefined {
  const session = nav?.audioSession;
  if (!session) return undefined;
  if (type !== "auto" && session.type === "auto") session.type = type;
  return session.type;
}
