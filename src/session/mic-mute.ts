/**
 * The session's mute switch. A muted microphone sends silence, not nothing:
 * the capture worklet replaces its input by zeros from the next render
 * quantum, so the VAD hears no speech (no barge-in, no turn) and the STT's
 * timeline and socket stay alive (a hosted STT closes a stream that gets no
 * audio for a while, and word times would shift). The track stays open, so
 * unmuting takes one quantum.
 *
 * Two inputs decide it: the app's `mute()`, and with push-to-talk the
 * button, which opens the microphone only while it is held. The capture is
 * muted when either says so; `muted` and the metrics are the app's switch.
 *
 * Thread: main. Owner: VoiceSession. The clock comes in with each call.
 */
import { ConfigError } from "../errors.js";
import type { CapturePort } from "./ports.js";

export class MicMute {
  readonly #pushToTalk: boolean;
  #muted = false;
  #held = false;
  #since = 0;
  #mutedMs = 0;

  constructor(pushToTalk = false) {
    this.#pushToTalk = pushToTalk;
  }

  /** The app's switch (`mute()`). */
  get muted(): boolean {
    return this.#muted;
  }

  /** Whether the capture sends silence now. */
  get silenced(): boolean {
    return this.#muted || (this.#pushToTalk && !this.#held);
  }

  /**
   * The app mutes or unmutes; applied to `capture` when the session has one
   * (else at `attach`). Returns false when nothing changed.
   */
  set(muted: boolean, capture: CapturePort | undefined, now: number): boolean {
    if (muted === this.#muted) return false;
    this.#apply(capture, () => (this.#muted = muted));
    if (muted) this.#since = now;
    else this.#mutedMs += now - this.#since;
    return true;
  }

  /** Push-to-talk: whether the button is held now. */
  get held(): boolean {
    return this.#held;
  }

  /** Push-to-talk: the button is held (the microphone opens, unless the app muted it) or released. */
  hold(held: boolean, capture: CapturePort | undefined): void {
    this.#apply(capture, () => (this.#held = held));
  }

  /** A new capture (each start()) begins unmuted: a session muted now mutes it. */
  attach(capture: CapturePort): void {
    if (this.silenced) requireMute(capture).call(capture, true);
  }

  /** For SessionMetrics.mic. */
  snapshot(now: number): { muted: boolean; mutedMs: number } {
    return { muted: this.#muted, mutedMs: this.#mutedMs + (this.#muted ? now - this.#since : 0) };
  }

  /** Changes the inputs; tells the capture when the result changed (checked first, so a failure changes nothing). */
  #apply(capture: CapturePort | undefined, change: () => void): void {
    const before = this.silenced;
    const setMuted = capture ? requireMute(capture) : undefined;
    change();
    if (setMuted && this.silenced !== before) setMuted.call(capture, this.silenced);
  }
}

function requireMute(capture: CapturePort): NonNullable<CapturePort["setMuted"]> {
  if (typeof capture.setMuted === "function") return capture.setMuted;
  throw new ConfigError("VoiceSession: this session's components have no `capture.setMuted(muted)`, which mute() and push-to-talk need; add it to your components factory (see CapturePort)");
}
