/**
 * The speech-to-speech base that openaiRealtime and geminiLive share: the
 * provider that presents the cascaded ports (stt, llm, tts) over one session
 * socket, the reply's audio stream, and the pending turn. A provider file
 * is its service's adapter: how to open its connection (a SessionConnection,
 * s2s-connection.ts, whose router speaks its wire) and what a cut tells it.
 *
 * - stt: `connect` opens the connection and is the uplink and the input
 *   transcripts; a dead socket fails it, and the session's STT link
 *   reconnects under its ReconnectPolicy (a new, empty conversation).
 * - llm: a response on the open connection, for what the service does not
 *   have yet (`pendingTurn`), with its audio to the reply's stream.
 * - tts: the reply's audio (`ReplyAudio`): text sent to it is ignored (the
 *   service speaks its own words); `interrupted(heardS)` ends it and tells
 *   the service where the user cut it, the adapter's way.
 */
import { ConfigError, type BargeinError } from "../errors.js";
import { AsyncQueue } from "../util/async-queue.js";
import { Emitter } from "../util/emitter.js";
import { PcmAssembler } from "./pcm-base64.js";
import { ReplyTimeline, type TimedText } from "./realtime-timeline.js";
import type { ChatMessage, LlmOutput, LlmProvider, LlmRequest, ProviderEvents, SpeechToSpeechProvider, SttAudioFormat, SttConnectContext, SttEvent, SttProvider, SttStream, ToolDefinition, TtsEvent, TtsProvider, TtsStream } from "./types.js";
import type { WireContext } from "./wire.js";

/** Wire bytes per input sample: s16 as base64 (8/3) plus the JSON envelope of a 20 ms frame. */
const BYTES_PER_SAMPLE = 2.75;

/** What the service does not have yet: the tool results after the last assistant message, or a typed user turn. */
export interface PendingTurn {
  userText?: string;
  /** With the tool's name where the wire carries it (a Gemini FunctionResponse does). */
  toolOutputs: Array<{ callId: string; name?: string; output: string }>;
}

/**
 * The pending turn, from the session's chat: the tool results after the last
 * assistant message, or a typed user turn (the user's speech is on the
 * service already, committed from its input).
 */
export function pendingTurn(messages: readonly ChatMessage[]): PendingTurn & { toolOutputs: Array<{ name: string }> } {
  const toolOutputs: Array<{ callId: string; name: string; output: string }> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "tool") break;
    toolOutputs.unshift({ callId: m.toolCallId, name: m.name, output: m.content });
  }
  const last = messages.at(-1);
  return { toolOutputs, ...(last?.role === "user" ? { userText: last.content } : {}) };
}

/** Where a response's audio goes: the reply's audio stream. `key` names what the audio belongs to (an item, a generation). */
export interface AudioSink {
  transcript(delta: string): void;
  audio(key: string, pcm: Uint8Array): void;
  /** The response (the model's turn) is over. */
  done(): void;
  fail(error: unknown): void;
}

/** What the provider and its reply stream need of a connection. */
export interface S2sConnection {
  readonly ctx: WireContext;
  readonly isOpen: boolean;
  readonly bufferedAmount: number;
  sendAudio(pcm: Float32Array | Int16Array): number;
  flush(signal?: AbortSignal): Promise<void>;
  sttEvents(signal?: AbortSignal): AsyncIterable<SttEvent>;
  /** Optional: a user turn begins (client turn detection that opens the service's activity). */
  startActivity?(sinceS: number): void;
  respond(turn: PendingTurn & { tools: readonly ToolDefinition[] }, sink: AudioSink | undefined, signal?: AbortSignal): AsyncGenerator<LlmOutput, void, undefined>;
  /** A response is in progress (or awaited) whose audio goes to `sink`. */
  feeds(sink: AudioSink): boolean;
  close(): Promise<void>;
}

/**
 * One reply's audio stream (the session's "tts" quest): every audio chunk of
 * the reply's responses, as float PCM at the service's rate, in order. The
 * adapter's `cut` says what `interrupted` tells the service.
 */
export abstract class ReplyAudio<C extends S2sConnection> implements TtsStream, AudioSink {
  readonly #queue = new AsyncQueue<TtsEvent>();
  protected readonly timeline: ReplyTimeline;
  readonly #pcm = new PcmAssembler("s16le");
  readonly #rate: number;
  /** The audio's name on the wire, for a ProtocolError. */
  readonly #what: string;
  protected connection: C;
  #ended = false;
  /** The reply was cut (interrupted): nothing more of it is taken or sent. */
  #cut = false;
  closed = false;

  constructor(connection: C, rate: number, what: string) {
    this.connection = connection;
    this.#rate = rate;
    this.#what = what;
    this.timeline = new ReplyTimeline(rate);
  }

  /**
   * The reply was cut after `heardS` (`words`: its words so far). Reads what
   * it needs now, and returns what tells the service, run once the stream ended.
   */
  protected abstract cut(heardS: number, words: TimedText[]): () => void;

  bind(connection: C): void {
    this.connection = connection;
  }

  sendText(): void {}

  end(): void {
    this.#ended = true;
    if (!this.connection.feeds(this)) this.#queue.end();
  }

  events(signal?: AbortSignal): AsyncIterable<TtsEvent> {
    return this.#queue.iterate(signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.#queue.end();
  }

  interrupted(heardS: number): TimedText[] {
    const words = this.timeline.words();
    if (this.#cut) return words;
    const tell = this.cut(heardS, words);
    this.#cut = true;
    this.#queue.end();
    tell();
    return words;
  }

  // ─── AudioSink: the connection's routing ──────────────────────────────────

  transcript(delta: string): void {
    this.timeline.transcript(delta);
  }

  audio(key: string, bytes: Uint8Array): void {
    if (this.#cut || this.closed) return;
    const pcm = this.#pcm.push(bytes, this.connection.ctx, this.#what);
    this.timeline.audio(key, pcm.length);
    this.#queue.push({ kind: "audio", pcm, sampleRate: this.#rate });
  }

  done(): void {
    this.timeline.complete();
    if (this.#ended) this.#queue.end();
  }

  fail(error: unknown): void {
    if (!this.#queue.closed) this.#queue.fail(error);
  }
}

/** The provider: the ports over the one connection it holds at a time. */
export abstract class SpeechToSpeechBase<C extends S2sConnection> implements SpeechToSpeechProvider {
  readonly name: string;
  readonly stt: SttProvider;
  readonly llm: LlmProvider;
  readonly tts: TtsProvider;
  readonly #events = new Emitter<ProviderEvents>();
  #connection: C | undefined;
  /** The audio stream of the reply being built: the next response's audio goes there. */
  #reply: ReplyAudio<C> | undefined;
  /** How a response is named in the error when there is no socket ("a response", "a reply"). */
  readonly #responseWhat: string;

  constructor(name: string, audioFormat: SttAudioFormat, responseWhat: string) {
    this.name = name;
    this.#responseWhat = responseWhat;
    this.stt = { name, audioFormat, supportsGap: false, connect: (signal, context) => this.#connect(signal, context) };
    this.llm = { name, stream: (messages, signal, request) => this.#respond(messages, signal, request) };
    this.tts = { name, connect: async () => (this.#reply = this.newReply(this.#live("the reply's audio"))) };
  }

  on<K extends keyof ProviderEvents & string>(name: K, fn: (payload: ProviderEvents[K]) => void): () => void {
    return this.#events.on(name, fn);
  }

  /** Opens and starts a connection (a token per attempt); `context` holds the conversation so far. */
  protected abstract open(signal: AbortSignal | undefined, context: SttConnectContext | undefined): Promise<C>;
  protected abstract newReply(connection: C): ReplyAudio<C>;
  /** Before a response on `connection` (OpenAI puts the earlier turns into a new socket's conversation here). */
  protected prepare(_connection: C, _messages: readonly ChatMessage[]): void {}
  /** What the service does not have yet, as its wire takes it. */
  protected pending(messages: readonly ChatMessage[]): PendingTurn {
    return pendingTurn(messages);
  }

  /** A service error that answers no call: the provider's `error` event. */
  protected reportError(error: BargeinError): void {
    this.#events.emit("error", { service: this.name, error });
  }

  async #connect(signal?: AbortSignal, context?: SttConnectContext): Promise<SttStream> {
    const connection = await this.open(signal, context);
    this.#connection = connection;
    const startActivity = connection.startActivity?.bind(connection);
    return {
      bytesPerSample: BYTES_PER_SAMPLE,
      get bufferedAmount() {
        return connection.bufferedAmount;
      },
      sendAudio: (pcm) => connection.sendAudio(pcm),
      ...(startActivity ? { turnStarted: (sinceS: number) => startActivity(sinceS) } : {}),
      flush: (s) => connection.flush(s),
      events: (s) => connection.sttEvents(s),
      close: async () => {
        if (this.#connection === connection) this.#connection = undefined;
        await connection.close();
      },
    };
  }

  #live(what: string): C {
    const connection = this.#connection;
    if (connection?.isOpen) return connection;
    throw new ConfigError(`${this.name}: ${what} needs the session's socket, which is not open (the session's start() opens it; it reconnects after a drop)`);
  }

  async *#respond(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncGenerator<LlmOutput, void, undefined> {
    const connection = this.#live(this.#responseWhat);
    this.prepare(connection, messages);
    const reply = this.#reply?.closed ? undefined : this.#reply;
    reply?.bind(connection);
    yield* connection.respond({ ...this.pending(messages), tools: request?.tools ?? [] }, reply, signal);
  }
}
