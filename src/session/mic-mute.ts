/**
 * The session's mute switch. A muted microphone sends silence, not nothing:
 * the capture worklet replaces its input by zeros from the next render
 * quantum, so the VAD hears no speech (no barge-in, no turn) and the STT's
 * timeline and socket stay alive (a hosted STT closes a stream that gets no
 * audio for a while, and word times would shift). The track stays open, so
 * unmuting takes one quantum.
 *
 * Thread: main. Owner: VoiceSession. The clock comes in with each call.
 */
import { ConfigError } from "../errors.js";
import type { CapturePort } from "./ports.js";

export class MicMute {
  #muted = false;
  #since = 0;
  #mutedMs = 0;

  get muted(): boolean {
    return this.#muted;
  }

  /**
   * Mutes or unmutes; applies it to `capture` when the session has one (else
   * at `attach`). Returns false when nothing changed.
   */
  set(muted: boolean, capture: CapturePort | undefined, now: number): boolean {
    if (muted === this.#muted) return false;
    if (capture) requireMute(capture).call(capture, muted);
    this.#muted = muted;
    if (muted) this.#since = now;
    else this.#mutedMs += now - this.#since;
    return true;
  }

  /** A new capture (each start()) begins unmuted: a session muted before start() mutes it. */
  attach(capture: CapturePort): void {
    if (this.#muted) requireMute(capture).call(capture, true);
  }

  /** For SessionMetrics.mic. */
  snapshot(now: number): { muted: boolean; mutedMs: number } {
    return { muted: this.#muted, mutedMs: this.#mutedMs + (this.#muted ? now - this.#since : 0) };
  }
}

function requireMute(capture: CapturePort): NonNullable<CapturePort["setMuted"]> {
  if (typeof capture.setMuted === "function") return capture.setMuted;
  throw new ConfigError("VoiceSession.mute(): this session's components have no `capture.setMuted(muted)`; add it to your components factory (see CapturePort)");
}
