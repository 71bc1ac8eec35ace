/**
 * @internal The Player's MessagePort transport (pages that are not
 * crossOriginIsolated): PCM is transferred to the worklet, which owns the
 * ring, and every command is a message on the node's port, so all of them
 * reach the worklet in the order they were made. The position and state are
 * those of the worklet's last `status` (every 8 quanta while playing and on
 * each transition). Main thread only.
 */
import type { MainToPlaybackMessage, PlaybackState, PlaybackToMainMessage } from "../protocol/audio-messages.js";
import type { PlayerTransport } from "./player-transport.js";

export class PortPlayerTransport implements PlayerTransport {
  readonly kind = "port";
  readonly shared = undefined;
  #port: MessagePort | undefined;
  #status: { generation: number; rendered: number; underruns: number; state: PlaybackState } = {
    generation: 0,
    rendered: 0,
    underruns: 0,
    state: "idle",
  };

  connect(port: MessagePort): void {
    this.#port = port;
  }

  send(samples: Float32Array, generation: number): void {
    if (samples.length === 0) return;
    this.#post({ kind: "pcm", generation, samples }, [samples.buffer]);
  }

  fence(generation: number): void {
    this.#post({ kind: "fence", generation });
  }

  end(generation: number): void {
    this.#post({ kind: "end", generation });
  }

  flush(): void {
    this.#post({ kind: "flush" });
  }

  pause(token: number): void {
    this.#post({ kind: "pause", token });
  }

  resume(token: number): void {
    this.#post({ kind: "resume", token });
  }

  rendered(): { generation: number; samples: number } {
    return { generation: this.#status.generation, samples: this.#status.rendered };
  }

  get state(): PlaybackState {
    return this.#status.state;
  }

  get underruns(): number {
    return this.#status.underruns;
  }

  handle(message: PlaybackToMainMessage): void {
    if (message.kind === "status") this.#status = message;
  }

  close(): void {
    this.#port = undefined;
  }

  #post(message: MainToPlaybackMessage, transfer: Transferable[] = []): void {
    this.#port?.postMessage(message, transfer);
  }
}
