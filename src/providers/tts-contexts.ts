/**
 * The streaming-TTS base that ElevenLabs and Cartesia share: both multiplex
 * contexts on one WebSocket, a context per generation, each message tagged
 * with its context id (ElevenLabs multi-stream-input, "establish one WebSocket
 * connection for each end-user session",
 * https://elevenlabs.io/docs/eleven-api/guides/how-to/websockets/multi-context-web-socket;
 * Cartesia, "do many generations over a single WebSocket … a separate context
 * for each generation", https://docs.cartesia.ai/api-reference/tts/websocket).
 *
 * A `ContextSocket` owns one socket and routes each frame to the open
 * contexts' parsers; a `TtsStream` is one context (one reply). The provider
 * file supplies a `ContextWire`: how to open its socket, parse its messages,
 * and spell a context's open, text, end and cancel.
 *
 * Two lifetimes:
 * - `connect()` of the provider: a socket for the one stream, closed when the
 *   context ends or is closed (what a caller with no session gets).
 * - `session()` of the provider: one socket for the conversation. A reply is a
 *   context; its close (barge-in) cancels that context only, and frames still
 *   on the way for it are dropped, so the next reply hears none of it. A socket
 *   that died (the service's idle timeout, a drop) is reopened by the next reply.
 *
 * Contracts: main thread; the socket fails (and with it every open context) on
 * a malformed message or a service error, as MessageSocket does; a context
 * whose socket ends before its last message fails with ConnectionClosedError.
 */
import { ConnectionClosedError } from "../errors.js";
import { raceAbort } from "../util/abort.js";
import { AsyncQueue } from "../util/async-queue.js";
import { openTokenSocket, spokenPiece, type TokenSocket } from "./hosted-socket.js";
import type { MessageSocket } from "./message-socket.js";
import { randomContextId } from "./pcm-base64.js";
import type { TtsEvent, TtsSession, TtsStream } from "./types.js";
import type { WireContext } from "./wire.js";

/** What one server message becomes for one context: events in order, `done` when the context is over. */
export type ContextEvent = TtsEvent | { kind: "done" };
type Parse = (data: ArrayBuffer | string, ctx: WireContext) => ContextEvent[] | undefined;
/** One frame, parsed by each open context it concerns. */
type Routed = Array<[TtsContext, ContextEvent[]]>;
type Decode = (data: ArrayBuffer | string, ctx: WireContext) => Routed | undefined;

/** One service's spelling of the context protocol. Each method returns the JSON text frames to send. */
export interface ContextWire {
  readonly service: string;
  /** How errors name a context's end: "final" (ElevenLabs' isFinal), "done" (Cartesia). */
  readonly endWord: string;
  /**
   * The service's limit on the contexts of one socket, where it has one
   * (ElevenLabs: 5). A cancelled context counts until its last message (a
   * close_context still ends with isFinal): at the limit, the next reply
   * takes a new socket and the old one is closed (livekit/agents-js#1985).
   */
  readonly maxContexts?: number;
  /** The cancel ends the context at once, with no last message (Cartesia). */
  readonly cancelEnds: boolean;
  /** Where its socket goes (a token per socket). */
  readonly socket: TokenSocket;
  /** A parser of one context's messages; it ignores other contexts' messages. */
  parser(contextId: string): Parse;
  opening(contextId: string): string[];
  text(contextId: string, piece: string): string;
  ending(contextId: string): string[];
  cancel(contextId: string): string;
}

/** One socket and the contexts open on it. */
class ContextSocket {
  readonly wire: ContextWire;
  readonly socket: MessageSocket<Routed>;
  readonly #live: Set<TtsContext>;

  private constructor(wire: ContextWire, socket: MessageSocket<Routed>, live: Set<TtsContext>) {
    this.wire = wire;
    this.socket = socket;
    this.#live = live;
    void this.#pump();
  }

  static async open(wire: ContextWire, signal?: AbortSignal): Promise<ContextSocket> {
    const live = new Set<TtsContext>();
    const decode: Decode = (data, ctx) => {
      const routed: Routed = [];
      for (const context of live) {
        const events = context.parse(data, ctx);
        if (events) routed.push([context, events]);
      }
      return routed.length > 0 ? routed : undefined;
    };
    return new ContextSocket(wire, await openTokenSocket({ ...wire.socket, service: wire.service, decode }, signal), live);
  }

  get isOpen(): boolean {
    return this.socket.isOpen;
  }

  /** Opens a context: it takes frames from now on, then its opening messages go out. */
  start(oneShot: boolean): TtsContext {
    const context = new TtsContext(this, randomContextId(), oneShot);
    this.#live.add(context);
    try {
      for (const message of this.wire.opening(context.id)) this.socket.send(message);
    } catch (err) {
      this.#live.delete(context);
      throw err;
    }
    return context;
  }

  forget(context: TtsContext): void {
    this.#live.delete(context);
  }

  /** Another context fits on this socket (the service's limit; cancelled ones count until they end). */
  get hasRoom(): boolean {
    return this.isOpen && (this.wire.maxContexts === undefined || this.#live.size < this.wire.maxContexts);
  }

  async close(): Promise<void> {
    for (const context of [...this.#live]) await context.close();
    await this.socket.close();
  }

  /** Hands each frame's events to its contexts; when the socket ends, the contexts still open end with it. */
  async #pump(): Promise<void> {
    try {
      for await (const batch of this.socket.messages()) for (const [context, events] of batch) context.deliver(events);
    } catch (err) {
      for (const context of this.#live) context.fail(err);
      this.#live.clear();
      return;
    }
    const { byUs } = await this.socket.closed;
    for (const context of this.#live) {
      if (byUs) context.fail(undefined);
      else {
        const { service, url } = this.socket.ctx;
        context.fail(new ConnectionClosedError(`${service}: ${url} closed the socket before the context was ${this.wire.endWord}`, { service, url }));
      }
    }
    this.#live.clear();
  }
}

/** One context: one reply's text in, its audio and word timings out. */
class TtsContext implements TtsStream {
  readonly id: string;
  readonly parse: Parse;
  readonly #owner: ContextSocket;
  /** Its socket is its own: closed with the context. */
  readonly #oneShot: boolean;
  readonly #queue = new AsyncQueue<TtsEvent>();
  #done = false;
  #closed = false;

  constructor(owner: ContextSocket, id: string, oneShot: boolean) {
    this.#owner = owner;
    this.id = id;
    this.#oneShot = oneShot;
    this.parse = owner.wire.parser(id);
  }

  deliver(events: ContextEvent[]): void {
    if (this.#done) {
      // Cancelled: none of its audio is played; its last message frees its place on the socket.
      if (events.some((e) => e.kind === "done")) this.#owner.forget(this);
      return;
    }
    for (const event of events) {
      if (event.kind === "done") {
        this.#done = true;
        this.#owner.forget(this);
        this.#queue.end();
        return;
      }
      this.#queue.push(event);
    }
  }

  /** Ends the events: with `error`, or normally (undefined: we closed the socket). */
  fail(error: unknown): void {
    this.#done = true;
    if (error === undefined) this.#queue.end();
    else this.#queue.fail(error);
  }

  sendText(text: string): void {
    if (text === "") return; // an empty text is a keep-alive to the services, not speech
    this.#send(this.#owner.wire.text(this.id, spokenPiece(text)));
  }

  end(): void {
    for (const message of this.#owner.wire.ending(this.id)) this.#send(message);
  }

  async *events(signal?: AbortSignal): AsyncGenerator<TtsEvent, void, undefined> {
    yield* this.#queue.iterate(signal);
    if (this.#oneShot) await this.#owner.socket.close();
  }

  async close(): Promise<void> {
    if (!this.#done && this.#owner.isOpen) {
      try {
        // Stop the generation (billing, the service's context limit); with a shared socket, only this reply's.
        this.#owner.socket.send(this.#owner.wire.cancel(this.id));
      } catch {
        // Closed in between: nothing left to stop.
      }
    }
    const lingers = !this.#done && !this.#owner.wire.cancelEnds && this.#owner.isOpen;
    this.#done = true;
    this.#closed = true;
    if (!lingers) this.#owner.forget(this);
    this.#queue.end();
    if (this.#oneShot) await this.#owner.socket.close();
  }

  #send(message: string): void {
    if (this.#closed) {
      const { service, url } = this.#owner.socket.ctx;
      throw new ConnectionClosedError(`${service}: cannot send, this context on ${url} is closed`, { service, url });
    }
    this.#owner.socket.send(message);
  }
}

/** A stream on a socket of its own, closed with it (the provider's `connect`). */
export async function connectContext(wire: ContextWire, signal?: AbortSignal): Promise<TtsStream> {
  const owner = await ContextSocket.open(wire, signal);
  try {
    return owner.start(true);
  } catch (err) {
    await owner.socket.close();
    throw err;
  }
}

/** One socket for a conversation, a context per reply (the provider's `session`). */
export function contextSession(wire: ContextWire): TtsSession {
  let current: ContextSocket | undefined;
  let opening: Promise<ContextSocket> | undefined;
  let closed = false;
  /** The socket, opened (again) when there is none or it died. Callers share an opening; each may abort its wait. */
  const socket = (): Promise<ContextSocket> => {
    if (current?.hasRoom) return Promise.resolve(current);
    // Full of cancelled contexts that have not ended: a new socket; closing the old one ends them on the service.
    if (current?.isOpen && !opening) void current.close();
    opening ??= ContextSocket.open(wire)
      .then((owner) => {
        if (closed) void owner.close();
        else current = owner;
        return owner;
      })
      .finally(() => (opening = undefined));
    return opening;
  };
  return {
    async connect(signal?: AbortSignal): Promise<TtsStream> {
      signal?.throwIfAborted();
      if (closed) throw new ConnectionClosedError(`${wire.service}: this TTS session is closed`, { service: wire.service });
      const owner = await raceAbort(socket(), signal);
      signal?.throwIfAborted();
      if (closed) throw new ConnectionClosedError(`${wire.service}: this TTS session is closed`, { service: wire.service });
      return owner.start(false);
    },
    async close(): Promise<void> {
      closed = true;
      const owner = current ?? (await opening?.catch(() => undefined));
      current = undefined;
      await owner?.close();
    },
  };
}
