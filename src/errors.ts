/**
 * One error family for the whole SDK. Every error says what failed, where
 * (the service and URL when there is one) and what to do about it.
 *
 * Each class sets `name` as a literal and a stable machine-readable `code`:
 * a minifier renames classes (a class's own name then reads `_` or `x` in an
 * app's production build), and `instanceof` fails across two copies of the
 * SDK, but `err.name === "AtCapacityError"` and `err.code === "at_capacity"`
 * hold everywhere. test/unit/errors.test.ts checks them in a minified bundle.
 */
export interface BargeinErrorOptions {
  /** The error behind this one (the standard `Error.cause`). */
  cause?: unknown;
  /** The service the error came from: "stt", "tts", "llm", "vad", "audio", … */
  service?: string;
  /** The URL that failed, when there is one. */
  url?: string;
}

/** Every `code` a BargeinError can have; one per class. */
export type BargeinErrorCode =
  | "error"
  | "asset_load"
  | "config"
  | "protocol"
  | "at_capacity"
  | "service_timeout"
  | "deadline_exceeded"
  | "connection_closed"
  | "overload"
  | "microphone"
  | "audio_context"
  | "unsupported"
  | "state";

/** The base class, used as such when a service reported its own error (the message quotes it). */
export class BargeinError extends Error {
  override readonly name: string = "BargeinError";
  readonly code: BargeinErrorCode = "error";
  readonly service: string | undefined;
  readonly url: string | undefined;
  constructor(message: string, options: BargeinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.service = options.service;
    this.url = options.url;
  }
}

/** A worklet, worker, model or wasm file could not be fetched or evaluated. */
export class AssetLoadError extends BargeinError {
  override readonly name = "AssetLoadError";
  override readonly code = "asset_load";
}

/** A caller passed an option that cannot work; the message names the option. */
export class ConfigError extends BargeinError {
  override readonly name = "ConfigError";
  override readonly code = "config";
}

/** A server sent something that does not follow its protocol, or too much of it. */
export class ProtocolError extends BargeinError {
  override readonly name = "ProtocolError";
  override readonly code = "protocol";
}

/** The service answered, but refused: it has no free channel ("no free channels"). */
export class AtCapacityError extends BargeinError {
  override readonly name = "AtCapacityError";
  override readonly code = "at_capacity";
}

/** The service did not answer within its start-up timeout. */
export class ServiceTimeoutError extends BargeinError {
  override readonly name = "ServiceTimeoutError";
  override readonly code = "service_timeout";
  readonly timeoutMs: number;
  constructor(message: string, options: BargeinErrorOptions & { timeoutMs: number }) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
  }
}

/** A request waited in a queue (the LLM admission) past its deadline; it was never sent. */
export class DeadlineExceededError extends BargeinError {
  override readonly name = "DeadlineExceededError";
  override readonly code = "deadline_exceeded";
}

/** A socket closed before its stream was complete. `closeCode` is the WebSocket close code, when there was one. */
export class ConnectionClosedError extends BargeinError {
  override readonly name = "ConnectionClosedError";
  override readonly code = "connection_closed";
  readonly closeCode: number | undefined;
  constructor(message: string, options: BargeinErrorOptions & { closeCode?: number } = {}) {
    super(message, options);
    this.closeCode = options.closeCode;
  }
}

/** More work arrived than can be handled in time: the LLM admission queue is full, or the uplink fell behind its budget. */
export class OverloadError extends BargeinError {
  override readonly name = "OverloadError";
  override readonly code = "overload";
}

/**
 * How the microphone failed. "ended": it was open, then its track ended
 * (device unplugged, permission revoked, or the input stream stopped).
 */
export type MicrophoneErrorReason = "denied" | "not-found" | "in-use" | "unsupported" | "ended" | "unknown";

/** The microphone could not be opened, or stopped while in use. `reason` tells which way. */
export class MicrophoneError extends BargeinError {
  override readonly name = "MicrophoneError";
  override readonly code = "microphone";
  readonly reason: MicrophoneErrorReason;
  constructor(message: string, options: BargeinErrorOptions & { reason: MicrophoneErrorReason }) {
    super(message, { ...options, service: options.service ?? "microphone" });
    this.reason = options.reason;
  }
}

/** The AudioContext could not be created or would not start. */
export class AudioContextError extends BargeinError {
  override readonly name = "AudioContextError";
  override readonly code = "audio_context";
}

/**
 * The browser lacks something bargein needs (`browserSupport()` lists what);
 * the message names the feature and what it is for. Check `isSupported()`
 * before offering voice.
 */
export class UnsupportedError extends BargeinError {
  override readonly name = "UnsupportedError";
  override readonly code = "unsupported";
}

/**
 * A method was called in a state where it cannot run: `start()` on a session
 * already started, `add()` on a disposed QuestManager, a second reader on a
 * one-consumer stream. A bug in the calling code, not a fault of a service.
 */
export class StateError extends BargeinError {
  override readonly name = "StateError";
  override readonly code = "state";
}

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
