/**
 * MessageSocket: the one WebSocket wrapper the providers share. It opens with
 * an AbortSignal, enforces an inbound size limit, decodes each frame into a
 * typed message, and hands messages to one consumer in arrival order.
 *
 * Contracts:
 * - Main thread only (uses the browser WebSocket global).
 * - Inbound messages are queued (an AsyncQueue) until read; one consumer
 *   reads them with `next` or `messages` (a second waiting read throws a
 *   StateError). Aborting a read ends that read, not the socket.
 * - The stream ends normally on a clean close with code 1000 or 1005, or when
 *   we closed it ourselves. Any other close throws ConnectionClosedError; a
 *   malformed or oversized frame throws ProtocolError and closes the socket.
 * - The browser receives a frame whole before we can measure it, so the size
 *   limit bounds what we decode and keep, not what the network carries.
 * - A socket whose open is cancelled while it connects is closed once it
 *   opens, not before (see `open`); until then it is recorded page-wide, and
 *   `settleCancelled()` is how a session's stop() waits for it.
 */
import { BargeinError, ConfigError, ConnectionClosedError, ProtocolError } from "../errors.js";
import { abortable, isAbort, raceAbort } from "../util/abort.js";
import { AsyncQueue } from "../util/async-queue.js";
import { timeout } from "../util/timeout.js";
import { protocolError, type WireContext } from "./wire.js";

/** Default cap on one inbound frame: 1 MiB (a Kyutai audio frame is about 10 kB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;

// Application close codes (the browser only lets us send 1000 or 3000–4999).
const CLOSE_PROTOCOL_ERROR = 4002;
const CLOSE_TOO_BIG = 4009;
/**
 * How long close() waits for the close handshake before giving up on it, and
 * how long a socket cancelled while it connects is given to open.
 */
const CLOSE_WAIT_MS = 1000;

/**
 * The closes of sockets cancelled while they connected, until each is done.
 * Page-wide: after a cancelled open nobody else holds the socket, and its
 * session cannot be told from the signal (providers derive their own).
 */
const cancelledCloses = new Set<Promise<void>>();

export interface MessageSocketOptions<T> {
  /** The service, for errors: "stt", "tts", "llm". */
  service: string;
  /** Where to connect; may hold a token. Never put in errors. */
  url: string;
  /** `url` without secrets, for errors. */
  safeUrl: string;
  /** WebSocket subprotocols to offer (may carry a token). */
  protocols?: string[];
  /** Largest inbound frame accepted, in bytes (text frames count UTF-16 units × 1). */
  maxMessageBytes?: number;
  /**
   * Turns one frame into a message, or `undefined` to skip it. Runs as each
   * frame arrives, in order. A thrown BargeinError (a ProtocolError, or the
   * error a server message stands for) ends the stream with that error.
   */
  decode: (data: ArrayBuffer | string, ctx: WireContext) => T | undefined;
}

export interface CloseInfo {
  code: number;
  reason: string;
  wasClean: boolean;
  /** True when this side called close(). */
  byUs: boolean;
}

export class MessageSocket<T> {
  readonly ctx: WireContext;
  readonly #ws: WebSocket;
  readonly #maxBytes: number;
  #decode: (data: ArrayBuffer | string, ctx: WireContext) => T | undefined;
  /** Decoded messages for the one consumer; ended or failed when the socket ends (the first ending wins). */
  readonly #queue = new AsyncQueue<T>();
  #closedByUs = false;
  readonly #closed: Promise<CloseInfo>;

  private constructor(ws: WebSocket, options: MessageSocketOptions<T>) {
    this.#ws = ws;
    this.ctx = { service: options.service, url: options.safeUrl };
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#decode = options.decode;
    ws.binaryType = "arraybuffer";
    ws.addEventListener("message", (event) => this.#onMessage(event.data as ArrayBuffer | string));
    this.#closed = new Promise((resolve) => {
      ws.addEventListener("close", (event) => {
        const info = { code: event.code, reason: event.reason, wasClean: event.wasClean, byUs: this.#closedByUs };
        this.#endWith(info);
        resolve(info);
      });
    });
  }

  /**
   * Opens a socket and resolves once it is open. Rejects with
   * ConnectionClosedError when the connection fails, or with the signal's
   * reason when it aborts: at once, the socket's close left to
   * `settleCancelled()`'s record when it was still connecting.
   */
  static open<T>(options: MessageSocketOptions<T>, signal?: AbortSignal): Promise<MessageSocket<T>> {
    signal?.throwIfAborted();
    let ws: WebSocket;
    try {
      ws = new WebSocket(options.url, options.protocols);
    } catch (err) {
      // The browser's message may quote the URL or subprotocols, token included: don't pass it on.
      throw new ConfigError(
        `${options.service}: cannot open a WebSocket to ${options.safeUrl}: the URL or a subprotocol is invalid (${(err as Error).name})`,
        { service: options.service, url: options.safeUrl },
      );
    }
    const socket = new MessageSocket<T>(ws, options);
    const opened = abortable<MessageSocket<T>>((resolve, reject) => {
      const onOpen = () => resolve(socket);
      // Before `open`, an error is a failed handshake (refused, 401, no such
      // path). Some implementations fire `close` only much later, so fail now.
      const onFailure = () =>
        reject(
          new ConnectionClosedError(`${options.service}: could not connect to ${options.safeUrl} (the handshake failed)`, {
            service: options.service,
            url: options.safeUrl,
            closeCode: 1006,
          }),
        );
      ws.addEventListener("open", onOpen);
      ws.addEventListener("error", onFailure);
      void socket.#closed.then(onFailure);
      return () => {
        ws.removeEventListener("open", onOpen);
        ws.removeEventListener("error", onFailure);
      };
    }, signal);
    // Failed or aborted before it opened: the socket is ours to close. Cancelled while it connects
    // (stop(), a barge-in), it is let open first: a socket closed while connecting is reported on the
    // page's console as an error (Firefox: "can't establish a connection"; Chromium: "closed before
    // the connection is established"), which an app's error monitoring counts. A failure or a
    // timeout closes it at once: a service that is slow to answer is not kept waiting for.
    opened.catch((err: unknown) => {
      if (isAbort(err) && ws.readyState === WebSocket.CONNECTING) socket.#closeOnceOpen();
      else void socket.close();
    });
    return opened;
  }

  /**
   * Resolves once every socket cancelled while it connected (before this
   * call) is closed, or given up: each is given CLOSE_WAIT_MS to open, then
   * closed as close() does. Never rejects. Page-wide, so it may also wait for
   * another session's socket, within the same bound.
   */
  static settleCancelled(): Promise<void> {
    return Promise.all(cancelledCloses).then(() => undefined);
  }

  /** Closes this socket once it opened (or ended), or after CLOSE_WAIT_MS; recorded in cancelledCloses until then. */
  #closeOnceOpen(): void {
    const done = this.#openedOrGivenUp()
      .then(() => this.close())
      .finally(() => cancelledCloses.delete(done));
    cancelledCloses.add(done);
  }

  /** Resolves when the socket opens or closes, or after CLOSE_WAIT_MS. */
  async #openedOrGivenUp(): Promise<void> {
    const ws = this.#ws;
    const limit = timeout(CLOSE_WAIT_MS);
    try {
      await abortable<unknown>((resolve) => {
        ws.addEventListener("open", resolve);
        void this.#closed.then(resolve);
        return () => ws.removeEventListener("open", resolve);
      }, limit.signal);
    } catch {
      // It did not open in time: it is closed while connecting after all (its console error included).
    } finally {
      limit.clear();
    }
  }

  /**
   * Switches this socket to a new message type: `map` runs on every message
   * still queued and on every later one, in order, and may skip (undefined)
   * or throw a BargeinError to end the stream. Used after a handshake, when
   * the generic messages become a provider's events. Returns this socket;
   * the old typed reference must not be used any more.
   */
  map<U>(map: (message: T, ctx: WireContext) => U | undefined): MessageSocket<U> {
    const self = this as unknown as MessageSocket<U>;
    const decode = this.#decode;
    self.#decode = (data, ctx) => {
      const message = decode(data, ctx);
      return message === undefined ? undefined : map(message, ctx);
    };
    try {
      // The same queue, retyped: what it holds becomes U in place, in order.
      this.#queue.remap((message) => map(message, this.ctx));
    } catch (err) {
      this.#failDecoding(err);
    }
    return self;
  }

  /** Bytes accepted by send() but not yet on the network. */
  get bufferedAmount(): number {
    return this.#ws.bufferedAmount;
  }

  /** True while the socket is open and this side has not closed it. */
  get isOpen(): boolean {
    return this.#ws.readyState === WebSocket.OPEN && !this.#closedByUs;
  }

  /** Resolves with how the socket closed, whichever side closed it. */
  get closed(): Promise<CloseInfo> {
    return this.#closed;
  }

  /**
   * Sends one frame and returns its size in bytes. Throws ConnectionClosedError
   * when the socket is not open: the browser would otherwise drop it silently.
   */
  send(data: Uint8Array | string): number {
    if (!this.isOpen) {
      throw new ConnectionClosedError(`${this.ctx.service}: cannot send, the socket to ${this.ctx.url} is closed`, {
        service: this.ctx.service,
        url: this.ctx.url,
      });
    }
    this.#ws.send(data as Uint8Array<ArrayBuffer> | string);
    return typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength;
  }

  /**
   * The next message, or `done` once the socket ended normally. Throws the
   * socket's failure (ProtocolError, ConnectionClosedError) after the queued
   * messages are read; rejects with the signal's reason on abort.
   */
  next(signal?: AbortSignal): Promise<IteratorResult<T, undefined>> {
    return this.#queue.next(signal);
  }

  /** Iterates messages until the socket ends; see `next`. */
  messages(signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    return this.#queue.iterate(signal);
  }

  /**
   * Closes the socket (code 1000 unless given) and resolves once the close
   * handshake finished, or after 1 s if the peer never answers. Idempotent.
   */
  async close(code = 1000, reason = ""): Promise<void> {
    if (!this.#closedByUs && this.#ws.readyState !== WebSocket.CLOSED) {
      this.#closedByUs = true;
      this.#ws.close(code, reason);
    }
    if (this.#ws.readyState === WebSocket.CLOSED) return;
    const limit = timeout(CLOSE_WAIT_MS);
    try {
      await raceAbort(this.#closed, limit.signal);
    } catch {
      // The peer never answered the close: the socket is closed on our side all the same.
    } finally {
      limit.clear();
    }
  }

  #onMessage(data: ArrayBuffer | string): void {
    if (this.#queue.closed) return;
    const size = typeof data === "string" ? data.length : data.byteLength;
    if (size > this.#maxBytes) {
      this.#fail(
        protocolError(this.ctx, `a message of ${size} bytes exceeds the limit of ${this.#maxBytes} (maxMessageBytes)`),
        CLOSE_TOO_BIG,
      );
      return;
    }
    this.#accept(() => this.#decode(data, this.ctx));
  }

  /** Queues what `produce` returns (unless undefined); on a throw, fails the stream. */
  #accept(produce: () => T | undefined): void {
    let message: T | undefined;
    try {
      message = produce();
    } catch (err) {
      this.#failDecoding(err);
      return;
    }
    if (message !== undefined) this.#queue.push(message);
  }

  /** A decode or map threw: a BargeinError ends the stream as it is, anything else as a ProtocolError. */
  #failDecoding(err: unknown): void {
    this.#fail(err instanceof BargeinError ? err : protocolError(this.ctx, "a message could not be decoded", err), CLOSE_PROTOCOL_ERROR);
  }

  /** Ends the stream with `error` and closes the socket: we stop trusting this peer. */
  #fail(error: Error, code: number): void {
    this.#queue.fail(error);
    void this.close(code, error instanceof ProtocolError ? "protocol error" : "error");
  }

  /**
   * Ends the stream when the socket closed: normally on a clean 1000/1005 or
   * when we closed it, else with a ConnectionClosedError. A failure already
   * recorded (a ProtocolError) stays the stream's ending.
   */
  #endWith(info: CloseInfo): void {
    if (info.byUs || (info.wasClean && (info.code === 1000 || info.code === 1005))) {
      this.#queue.end();
      return;
    }
    this.#queue.fail(
      new ConnectionClosedError(
        `${this.ctx.service}: the connection to ${this.ctx.url} closed abnormally (code ${info.code}${info.reason ? `, ${info.reason}` : ""})`,
        { service: this.ctx.service, url: this.ctx.url, closeCode: info.code },
      ),
    );
  }
}
