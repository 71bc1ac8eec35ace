/**
 * The connection lifecycle the speech-to-speech providers share (OpenAI
 * Realtime, Gemini Live): a socket opened and started under one time bound
 * (`openSession`: the open, then the service's handshake), and a base class
 * with the one pump that hands every server message to the subclass's
 * router, and that, when the socket ends, ends the input side (our close) or
 * fails it and every reader with the socket's failure (the STT link then
 * reconnects under its policy).
 *
 * Thread: main. Owner: one provider, one connection at a time.
 */
import { ConnectionClosedError, ServiceTimeoutError } from "../errors.js";
import { AsyncQueue } from "../util/async-queue.js";
import { timeout } from "../util/timeout.js";
import { openHostedSocket } from "./hosted-socket.js";
import type { CloseInfo, MessageSocket, MessageSocketOptions } from "./message-socket.js";
import type { SttEvent } from "./types.js";
import type { WireContext } from "./wire.js";

export interface SessionSocketOptions<E> extends MessageSocketOptions<E> {
  connectTimeoutMs: number;
  /** The service's start after the open (a session.update, a setup), bounded with the open by connectTimeoutMs. */
  handshake(socket: MessageSocket<E>, signal: AbortSignal): Promise<void>;
  /** What the service did not do in time, for the ServiceTimeoutError: "start the session … (session.created, session.updated)". */
  started: string;
  /** The error a failed handshake stands for, given how the socket closed if it has (default: the handshake's own). */
  failure?(err: unknown, closed: CloseInfo | undefined, ctx: WireContext): unknown;
}

/** Opens the socket and runs the handshake; on a failure the socket is closed first. */
export async function openSession<E>(options: SessionSocketOptions<E>, signal?: AbortSignal): Promise<MessageSocket<E>> {
  const socket = await openHostedSocket<E>(options, options.connectTimeoutMs, signal);
  const limit = timeout(options.connectTimeoutMs, signal);
  try {
    await options.handshake(socket, limit.signal);
  } catch (err) {
    const closed = await Promise.race([socket.closed, Promise.resolve(undefined)]);
    await socket.close();
    if (signal?.aborted) throw signal.reason;
    if (limit.expired) {
      const { service, safeUrl: url, connectTimeoutMs: timeoutMs } = options;
      throw new ServiceTimeoutError(`${service}: ${url} did not ${options.started.replace("…", `within ${timeoutMs} ms`)}`, { service, url, timeoutMs });
    }
    throw options.failure ? options.failure(err, closed, socket.ctx) : err;
  } finally {
    limit.clear();
  }
  return socket;
}

/** One started session socket: its input side, its pump, its close. */
export abstract class SessionConnection<E> {
  readonly ctx: WireContext;
  protected readonly socket: MessageSocket<E>;
  /** The input side: the user's words and the markers flushes wait for, in order. */
  protected readonly stt = new AsyncQueue<SttEvent>();
  #markers = 0;
  /** close() was called: the socket's end is ours, not a failure. */
  protected closing = false;

  protected constructor(socket: MessageSocket<E>) {
    this.socket = socket;
    this.ctx = socket.ctx;
  }

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  get isOpen(): boolean {
    return this.socket.isOpen;
  }

  sttEvents(signal?: AbortSignal): AsyncIterable<SttEvent> {
    return this.stt.iterate(signal);
  }

  close(): Promise<void> {
    this.closing = true;
    return this.socket.close();
  }

  protected send(message: Readonly<Record<string, unknown>>): void {
    this.socket.send(JSON.stringify(message));
  }

  protected marker(): void {
    this.stt.push({ kind: "marker", id: ++this.#markers });
  }

  /** Routes one decoded server message. */
  protected abstract receive(message: E): void;
  /** The socket ended with `failure`: every reader waiting fails with it. */
  protected abstract failReaders(failure: unknown): void;
  /** The failure a broken socket stands for (default: the error its stream ended with). */
  protected async failureOf(err: unknown): Promise<unknown> {
    return err;
  }

  /** Starts reading the socket (once, when the connection is built); returns this. */
  protected started(): this {
    void this.#pump();
    return this;
  }

  async #pump(): Promise<void> {
    const { service, url } = this.ctx;
    let failure: unknown;
    try {
      for await (const message of this.socket.messages()) this.receive(message);
      // The service ended the session: a session socket does not end by itself.
      if (!this.closing) failure = new ConnectionClosedError(`${service}: the service closed the session at ${url}; reconnecting opens a new one (the service's conversation starts empty)`, { service, url, closeCode: 1000 });
    } catch (err) {
      failure = await this.failureOf(err);
    }
    failure ??= new ConnectionClosedError(`${service}: the session's socket to ${url} was closed`, { service, url });
    if (this.closing) this.stt.end();
    else this.stt.fail(failure);
    this.failReaders(failure);
  }
}
