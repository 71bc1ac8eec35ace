/**
 * How the VAD worker pauses, resumes and ducks playback: by writing the
 * Player's shared control block when the page is crossOriginIsolated (no
 * message hop), else by a message on the playback control port. Worker
 * thread only; `send` allocates only the port's message.
 */
import { duckPlayback, pausePlayback, playbackControl, resumePlayback, unduckPlayback } from "../../audio/playback-control.js";
import type { PlaybackControlMessage } from "../../protocol/vad-messages.js";

export type PlaybackWrite = "pause" | "resume" | "duck" | "unduck";

export class PlaybackWriter {
  #port: MessagePort | undefined;
  /** The Player's shared control block, when the page is crossOriginIsolated: written directly, no message. */
  #block: Int32Array | undefined;

  connect(port: MessagePort, control?: SharedArrayBuffer): void {
    this.#port?.close();
    this.#port = port;
    this.#block = control ? playbackControl(control) : undefined;
  }

  /**
   * Pauses, resumes, ducks (`db` softer) or unducks playback generation
   * `token`. Returns false when no playback is connected. The shared write's
   * own result (whether the pause stands) is not reported: on the port the
   * worker cannot know it, and both paths must mean the same thing to the
   * session.
   */
  send(kind: PlaybackWrite, token: number, sampleIndex: number, db: number): boolean {
    const block = this.#block;
    if (block) {
      if (kind === "pause") pausePlayback(block, token);
      else if (kind === "resume") resumePlayback(block, token);
      else if (kind === "duck") duckPlayback(block, token, db);
      else unduckPlayback(block, token);
      return true;
    }
    if (!this.#port) return false;
    const message: PlaybackControlMessage = kind === "duck" ? { kind, token, db, sampleIndex } : { kind, token, sampleIndex };
    this.#port.postMessage(message);
    return true;
  }

  close(): void {
    this.#port?.close();
    this.#port = undefined;
    this.#block = undefined;
  }
}
