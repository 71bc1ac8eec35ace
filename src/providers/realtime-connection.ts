/**
 * One OpenAI Realtime WebSocket (a SessionConnection, s2s-connection.ts): the
 * handshake (browser auth, session.update) and the router of every server
 * event to its one reader:
 * - the input side (`sttEvents`): the user's transcripts as words, and the
 *   marker a `commit` waits for, in order;
 * - the response in progress (`respond`): its transcript deltas and tool calls
 *   to the reply's text stream, its audio to the reply's audio sink;
 * - an `error` event that answers a client event we are waiting on fails that
 *   wait; any other goes to `onError` (the provider's `error` event).
 * A socket that closes, or a frame that breaks the protocol, fails every
 * reader with that error (the STT link then reconnects under its policy).
 *
 * Auth as the docs give it for a browser: the `realtime` subprotocol plus
 * `openai-insecure-api-key.<ephemeral key>` (openai-agents-js
 * docs/src/content/docs/guides/voice-agents/build.mdx); the key comes from
 * the app's server (POST /v1/realtime/client_secrets) through `token`.
 *
 * Thread: main. Owner: the openaiRealtime provider (one connection at a time).
 */
import { BargeinError, ConnectionClosedError, ProtocolError } from "../errors.js";
import { abortable } from "../util/abort.js";
import { AsyncQueue } from "../util/async-queue.js";
import { heardNote } from "./heard-note.js";
import type { MessageSocket } from "./message-socket.js";
import * as wire from "./realtime-wire.js";
import { SessionConnection, openSession } from "./s2s-connection.js";
import type { AudioSink, PendingTurn } from "./speech-to-speech.js";
import type { LlmOutput, ToolCallRequest } from "./types.js";
import type { WireContext } from "./wire.js";

export const SERVICE = "openai-realtime";
/** How long a new response waits for the service to close the cancelled one. */
const PREVIOUS_RESPONSE_WAIT_MS = 2000;

export interface ConnectionOptions {
  url: string;
  safeUrl: string;
  key: string;
  config: wire.SessionConfig;
  maxMessageBytes: number;
  connectTimeoutMs: number;
  onError(error: BargeinError): void;
}

interface Run {
  id: string | undefined;
  eventId: string;
  text: AsyncQueue<LlmOutput>;
  sink: AudioSink | undefined;
  calls: ToolCallRequest[];
  cancelled: boolean;
  done: Promise<void>;
  settle(): void;
}

let nextId = 0;
const eventId = (what: string) => `bargein_${what}_${++nextId}`;

/** A server `error` event as a BargeinError that quotes the service. */
export function serviceError(e: Extract<wire.RealtimeServerEvent, { type: "error" }>, ctx: WireContext, what: string): BargeinError {
  const Kind = e.errorType === "invalid_request_error" ? ProtocolError : BargeinError;
  const code = e.code ? ` (${e.errorType}, ${e.code})` : ` (${e.errorType})`;
  return new Kind(`${ctx.service} at ${ctx.url}: the service refused ${what}: "${e.message}"${code}`, { service: ctx.service, url: ctx.url });
}

export class RealtimeConnection extends SessionConnection<wire.RealtimeServerEvent> {
  readonly #o: ConnectionOptions;
  /** commit()s waiting for their item's transcript, by commit event id, then by item id. */
  readonly #commits = new Map<string, { resolve(): void; reject(e: unknown): void; itemId?: string }>();
  /** Server turn detection: an utterance the server heard start and has not transcribed yet. */
  #serverSpeech: string | undefined;
  #run: Run | undefined;
  /** A user item was committed since the last response: the next one answers it. */
  #userAudio = false;
  #tools = "";
  readonly #sentOutputs = new Set<string>();
  #audioMs = 0;

  private constructor(socket: MessageSocket<wire.RealtimeServerEvent>, options: ConnectionOptions) {
    super(socket);
    this.#o = options;
    this.#tools = JSON.stringify(options.config.tools ?? []);
  }

  /** Opens the socket, waits for session.created, applies the session config and waits for session.updated. */
  static async open(options: ConnectionOptions, signal?: AbortSignal): Promise<RealtimeConnection> {
    const socket = await openSession<wire.RealtimeServerEvent>(
      {
        ...options,
        service: SERVICE,
        protocols: ["realtime", `openai-insecure-api-key.${options.key}`],
        decode: wire.decodeRealtimeEvent,
        started: "start the session … (session.created, session.updated)",
        async handshake(socket, signal) {
          await expect(socket, "session.created", signal);
          // A frame that broke the protocol may have closed the socket already: the next read throws its ProtocolError.
          if (socket.isOpen) socket.send(JSON.stringify(wire.sessionUpdate(options.config)));
          await expect(socket, "session.updated", signal);
        },
      },
      signal,
    );
    return new RealtimeConnection(socket, options).started();
  }

  /** Milliseconds of input audio sent on this socket. */
  get audioSentMs(): number {
    return this.#audioMs;
  }

  sendAudio(pcm: Float32Array | Int16Array): number {
    this.#audioMs += (pcm.length / wire.REALTIME_RATE) * 1000;
    return this.socket.send(JSON.stringify(wire.appendAudio(pcm)));
  }

  /**
   * The turn's words, then a marker. Client turn detection: commits the
   * buffer and resolves once its transcript was read out. Server turn
   * detection: the server commits; this waits for the transcript of an
   * utterance it heard start, if any.
   */
  flush(signal?: AbortSignal): Promise<void> {
    if (this.#o.config.turnDetection !== "client" && this.#serverSpeech === undefined) {
      this.marker();
      return Promise.resolve();
    }
    const id = eventId("commit");
    return abortable<void>((resolve, reject) => {
      this.#commits.set(id, { resolve, reject, itemId: this.#o.config.turnDetection === "client" ? undefined : this.#serverSpeech });
      if (this.#o.config.turnDetection === "client") this.send(wire.commitInput(id));
      return () => this.#commits.delete(id);
    }, signal);
  }

  /**
   * One response: sends what the service does not have yet (tool results;
   * a typed user turn), the tools when they changed, then response.create.
   * Yields the output transcript deltas and, last, the tool calls; the audio
   * goes to `sink`. Aborting cancels the response on the wire.
   */
  async *respond(
    turn: PendingTurn & { tools: readonly import("./types.js").ToolDefinition[] },
    sink: AudioSink | undefined,
    signal?: AbortSignal,
  ): AsyncGenerator<LlmOutput, void, undefined> {
    const previous = this.#run;
    if (previous) await Promise.race([previous.done, new Promise((r) => setTimeout(r, PREVIOUS_RESPONSE_WAIT_MS))]);
    signal?.throwIfAborted();
    const tools = JSON.stringify(turn.tools);
    if (tools !== this.#tools) {
      this.#tools = tools;
      this.send(wire.sessionUpdate({ ...this.#o.config, tools: turn.tools }));
    }
    for (const out of turn.toolOutputs) {
      if (this.#sentOutputs.has(out.callId)) continue;
      this.#sentOutputs.add(out.callId);
      this.send(wire.functionCallOutput(out.callId, out.output));
    }
    if (turn.userText && !this.#userAudio) this.send(wire.userText(turn.userText));
    this.#userAudio = false;
    let settle = () => {};
    const done = new Promise<void>((r) => (settle = r));
    const run: Run = { id: undefined, eventId: eventId("response"), text: new AsyncQueue(), sink, calls: [], cancelled: false, done, settle };
    this.#run = run;
    this.send(wire.createResponse(run.eventId));
    try {
      yield* run.text.iterate(signal);
      signal?.throwIfAborted();
    } finally {
      if (!run.text.closed || signal?.aborted) this.cancel(run);
    }
  }

  /**
   * Puts the conversation so far at the start of this socket's conversation,
   * in order: a new socket (after a drop, or for a session seeded with
   * history) starts empty, and the model would answer with no memory of it.
   * Inserted at the root, so it stays before a user turn already committed.
   */
  seedHistory(messages: ReadonlyArray<{ role: "user" | "assistant"; text: string }>): void {
    let previous = "root";
    for (const m of messages) {
      const id = eventId("item");
      this.send(wire.historyItem(id, m.role, m.text, previous));
      previous = id;
    }
  }

  /** Cancels the response in progress if its audio goes to `sink` (a cut reply). */
  cancelFor(sink: AudioSink): void {
    if (this.#run?.sink === sink) this.cancel(this.#run);
  }

  /** Sends response.cancel for `run` once, if it is still the one in progress. */
  cancel(run: Run | undefined): void {
    if (!run || run.cancelled || run !== this.#run) return;
    run.cancelled = true;
    run.text.end();
    run.sink = undefined;
    if (run.id !== undefined) this.send(wire.cancelResponse(run.id));
    // Before response.created: sent when it comes (#route).
  }

  /** A response is in progress whose audio goes to `sink`. */
  feeds(sink: AudioSink): boolean {
    return this.#run?.sink === sink && !this.#run.cancelled;
  }

  truncate(itemId: string, audioEndMs: number): void {
    this.send(wire.truncateItem(itemId, audioEndMs));
  }

  /** Tells the model what the user heard of a cut reply, after its last truncated item (heard-note.ts). */
  noteHeard(heard: string, afterItemId: string): void {
    this.send(wire.heardNoteItem(heardNote(heard), afterItemId));
  }

  protected failReaders(failure: unknown): void {
    for (const c of this.#commits.values()) c.reject(failure);
    this.#commits.clear();
    const run = this.#run;
    if (run && !run.text.closed) run.text.fail(failure);
    run?.sink?.fail(failure);
    run?.settle();
  }

  protected receive(e: wire.RealtimeServerEvent): void {
    const run = this.#run;
    switch (e.type) {
      case "input_audio_buffer.committed":
        this.#userAudio = true;
        for (const c of this.#commits.values()) if (c.itemId === undefined) return void (c.itemId = e.itemId);
        return;
      case "input_audio_buffer.speech_started":
        this.#serverSpeech = e.itemId;
        return this.stt.push({ kind: "speech-start", startS: e.audioStartMs / 1000 });
      case "input_audio_buffer.speech_stopped":
        return this.stt.push({ kind: "end-of-turn", eager: false });
      case "input_transcript":
      case "input_transcript_failed": {
        if (e.type === "input_transcript") {
          const startS = this.#audioMs / 1000;
          for (const text of e.transcript.split(/\s+/).filter(Boolean)) this.stt.push({ kind: "word", text, startS });
        } else {
          this.#o.onError(new BargeinError(`${SERVICE} at ${this.ctx.url}: the service could not transcribe the user's audio: "${e.message}"`, { service: SERVICE, url: this.ctx.url }));
        }
        if (this.#serverSpeech === e.itemId) this.#serverSpeech = undefined;
        for (const [id, c] of this.#commits) {
          if (c.itemId !== e.itemId) continue;
          this.#commits.delete(id);
          this.marker();
          c.resolve();
        }
        return;
      }
      case "error": {
        const commit = e.clientEventId ? this.#commits.get(e.clientEventId) : undefined;
        if (commit && e.clientEventId) {
          this.#commits.delete(e.clientEventId);
          return commit.reject(serviceError(e, this.ctx, "input_audio_buffer.commit"));
        }
        if (run && e.clientEventId === run.eventId) {
          const error = serviceError(e, this.ctx, "response.create");
          if (!run.text.closed) run.text.fail(error);
          this.#run = undefined;
          return run.settle();
        }
        // A cancel that crossed its response's end on the wire (the service finished it, or, stalled, had not begun
        // it, while the cancel was in flight): what the cancel wanted holds, so it is no error of the session's.
        if (e.code === "response_cancel_not_active") return;
        return this.#o.onError(serviceError(e, this.ctx, "a client event"));
      }
      case "response.created":
        if (!run || run.id !== undefined) return;
        run.id = e.responseId;
        if (run.cancelled) this.send(wire.cancelResponse(run.id));
        return;
      case "response.output_audio_transcript.delta":
        if (!run || run.id !== e.responseId || run.cancelled) return;
        run.sink?.transcript(e.delta);
        return run.text.push(e.delta);
      case "response.output_audio.delta":
        // Audio of a cancelled or older response is stale: it never reaches the player.
        if (!run || run.id !== e.responseId || run.cancelled) return;
        return run.sink?.audio(e.itemId, e.pcm);
      case "function_call":
        if (run && run.id === e.responseId && !run.cancelled) run.calls.push({ id: e.call.callId, name: e.call.name, rawArguments: e.call.arguments });
        return;
      case "response.done":
        if (!run || run.id !== e.responseId) return;
        this.#run = undefined;
        if (!run.cancelled) {
          run.sink?.done();
          if (run.calls.length) run.text.push({ kind: "toolCalls", calls: run.calls });
          run.text.end();
        }
        return run.settle();
      default:
        return;
    }
  }
}

/** The next event of the handshake must be `type`; an `error` event there fails the connection with the service's words. */
async function expect(socket: MessageSocket<wire.RealtimeServerEvent>, type: "session.created" | "session.updated", signal?: AbortSignal): Promise<void> {
  for (;;) {
    const next = await socket.next(signal);
    if (next.done) throw new ConnectionClosedError(`${SERVICE}: ${socket.ctx.url} closed before ${type}`, { service: SERVICE, url: socket.ctx.url });
    const e = next.value;
    if (e.type === type) return;
    if (e.type === "error") throw serviceError(e, socket.ctx, type === "session.created" ? "the connection" : "session.update");
  }
}
