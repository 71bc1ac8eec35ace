/**
 * The shapes a Gemini Live connection routes its events through (gemini-connection.ts):
 * its options, the reply's audio sink, and the bookkeeping of model turns.
 */
import type { BargeinError } from "../errors.js";
import type { AsyncQueue } from "../util/async-queue.js";
import type * as wire from "./gemini-wire.js";
import type { AudioSink } from "./speech-to-speech.js";
import type { LlmOutput, ToolCallRequest } from "./types.js";

export interface ConnectionOptions {
  url: string;
  safeUrl: string;
  config: wire.GeminiSetupConfig;
  maxMessageBytes: number;
  connectTimeoutMs: number;
  onError(error: BargeinError): void;
}

/** A reply round waiting for, or reading, the generation that answers it. */
export interface Claim {
  text: AsyncQueue<LlmOutput>;
  sink: AudioSink | undefined;
  /** The reply was cut or abandoned: the rest of its content is stale. */
  dropped: boolean;
}

/** One model turn, or one round of it (a toolCall ends a round). */
export interface Generation {
  index: number;
  /** Content that came before a reply claimed it, replayed to it in order. */
  early: Array<{ kind: "text"; delta: string } | { kind: "audio"; pcm: Uint8Array }>;
  claim: Claim | undefined;
  /** Nobody will read it (the service's answer to a turn the model was told was cut): dropped as it comes. */
  stale: boolean;
  calls: ToolCallRequest[];
  ended: boolean;
}
