/**
 * One error family for the whole SDK. Every error says what failed, where
 * (the service and URL when there is one) and what to do about it.
 * `name` follows the concrete class, so `err.name === "AtCapacityError"` works
 * across bundles where `instanceof` may not.
 */
export interface BargeinErrorOptions {
  cause?: unknown;
  /** The service the error came from: "stt", "tts", "llm", "vad", "audio", … */
  service?: string;
  /** The URL that failed, when there is one. */
  url?: string;
}

export class BargeinError extends Error {
  readonly service: string | undefined;
  readonly url: string | undefined;
  constructor(message: string, options: BargeinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.service = options.service;
    this.url = options.url;
  }
}

/** A worklet, worker, model or wasm file could not be fetched or evaluated. */
export class AssetLoadError extends BargeinError {}

/** A caller passed an option that cannot work; the message names the option. */
export class ConfigError extends BargeinError {}

/** A server sent something that does not follow its protocol, or too much of it. */
export class ProtocolError extends BargeinError {}

/** The service answered, but refused: it has no free channel ("no free channels"). */
export class AtCapacityError extends BargeinError {}

/** The service did not answer within its start-up timeout. */
export class ServiceTimeoutError extends BargeinError {
  readonly timeoutMs: number;
  constructor(message: string, options: BargeinErrorOptions & { timeoutMs: number }) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
  }
}

/** A socket closed before its stream was complete. */
export class ConnectionClosedError extends BargeinError {
  readonly code: number | undefined;
  constructor(message: string, options: BargeinErrorOptions & { code?: number } = {}) {
    super(message, options);
    this.code = options.code;
  }
}

/** The uplink could not keep up inside its latency budget. */
export class OverloadError extends BargeinError {}

/**
 * How the microphone failed. "ended": it was open, then its track ended
 * (device unplugged, permission revoked, or the input stream stopped).
 */
export type MicrophoneErrorReason = "denied" | "not-found" | "in-use" | "unsupported" | "ended" | "unknown";

/** The microphone could not be opened, or stopped while in use. `reason` tells which way. */
export class MicrophoneError extends BargeinError {
  readonly reason: MicrophoneErrorReason;
  constructor(message: string, options: BargeinErrorOptions & { reason: MicrophoneErrorReason }) {
    super(message, { ...options, service: options.service ?? "microphone" });
    this.reason = options.reason;
  }
}

/** The AudioContext could not be created or would not start. */
export class AudioContextError extends BargeinError {}

/**
 * Errors that are expected while shutting down: a service that was at capacity,
 * one that timed out, or a socket that was already closed. Disposing a
 * QuestManager swallows these and reports any other.
 */
export function isExpectedAtShutdown(err: unknown): boolean {
  return (
    err instanceof AtCapacityError ||
    err instanceof ServiceTimeoutError ||
    err instanceof ConnectionClosedError
  );
}
