/**
 * openaiRealtime: OpenAI's Realtime API (GA) over a WebSocket, as a
 * speech-to-speech provider. `new VoiceSession({ realtime: openaiRealtime({...}) })`.
 *
 * Design: the provider presents the cascaded ports (stt, llm, tts) over one
 * shared socket, so the whole session is reused as it is — the capture and
 * playback worklets, the VAD worker, the turn machine and barge-in core, the
 * bounded uplink, the history, the tool runner, the metrics and events:
 * - stt: `input_audio_buffer.append` for the uplink; the input transcription
 *   events as words; `flush` (the end of a user turn) is
 *   `input_audio_buffer.commit`, resolved once the item's transcript came;
 * - llm: `response.create` (after the tool outputs or a typed turn the
 *   service does not have yet), yielding the output transcript deltas and,
 *   last, the response's function calls; an abort is `response.cancel`;
 * - tts: the reply's audio: every `response.output_audio.delta` of the
 *   reply's responses, with its item id, to the player. Text sent to it is
 *   ignored (the service speaks its own words).
 * Read against the session (reply.ts, reply-slot.ts, stt-link.ts) this asks
 * for one addition only: the interrupt's step 1 (ReplySlot.cut → Reply.
 * cutToHeard) tells the reply's audio stream where it was cut
 * (`TtsStream.interrupted(heardS)`, heardS = the player's rendered seconds
 * of the reply less the output latency), and the stream answers with its
 * words' timings. The stream then sends, after the session's flush and
 * fence (a microtask later), `response.cancel` if the response is still
 * open and `conversation.item.truncate { item_id, content_index: 0,
 * audio_end_ms }` for the item being heard: its heard ms, never more than
 * its audio received (ReplyTimeline), then a system message with the heard
 * words (heard-note.ts): the truncate deletes the item's transcript, so the
 * service does not keep them. A misfire never reaches step 1, so nothing is
 * sent. A separate session path for speech-to-speech would have
 * copied the reply's ordering, stall watchdog and history semantics; the
 * ports keep one copy.
 *
 * Turn detection: "client" (default) sends `turn_detection: null`, and the
 * session's VAD and turn machine commit and ask for responses.
 * "server_vad"/"semantic_vad" let the service commit the buffer on its own
 * VAD (its speech_started / speech_stopped come as the STT's `speech-start`
 * and `end-of-turn` events, and its transcripts as words), while responses
 * and interruptions stay the client's (`create_response` and
 * `interrupt_response` off): the local VAD still pauses playback at the
 * onset, and a cut is still the exact truncate above.
 *
 * A dead socket fails the STT stream; the session's STT link reconnects
 * under its ReconnectPolicy with a fresh token. The service starts a new,
 * empty conversation: the first response on it puts the earlier turns back
 * first (`conversation.item.create` at the root, heard text only), as for a
 * session seeded with `history`. A server
 * `error` event becomes a ProtocolError (invalid_request_error) or a
 * BargeinError quoting the service: it fails the call it answers (a commit,
 * a response) or else is the provider's `error` event, which the session
 * reports as a non-fatal `error`.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError, type BargeinError } from "../errors.js";
import { AsyncQueue } from "../util/async-queue.js";
import { Emitter } from "../util/emitter.js";
import { PcmAssembler } from "./pcm-base64.js";
import { RealtimeConnection, SERVICE, type AudioSink } from "./realtime-connection.js";
import { ReplyTimeline, type TimedText } from "./realtime-timeline.js";
import { DEFAULT_REALTIME_MAX_BYTES, REALTIME_RATE, type TurnDetection } from "./realtime-wire.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { spokenTurns } from "./spoken-turns.js";
import type { ChatMessage, LlmOutput, LlmProvider, LlmRequest, ProviderEvents, SpeechToSpeechProvider, SttProvider, SttStream, TtsEvent, TtsProvider, TtsStream } from "./types.js";

export interface OpenaiRealtimeOptions {
  /** The Realtime WebSocket endpoint, e.g. "wss://api.openai.com/v1/realtime" (or the app's relay). */
  url: string;
  /** The model, sent as `?model=`. */
  model: string;
  /** Returns an ephemeral key (a client secret from the app's server); called once per connection attempt. */
  token: () => Promise<string>;
  /** The voice of the model's audio (default: the service's). */
  voice?: string;
  /** The system instructions, sent in the service's session configuration. */
  instructions?: string;
  /** Who detects the user's turns; default "client" (bargein's VAD and turn logic). */
  turnDetection?: TurnDetection;
  /** The input transcription model; default "gpt-4o-transcribe". */
  transcriptionModel?: string;
  /** Largest inbound frame, in bytes; default 705,536 (about 0.7 MB: a 10 s audio delta as base64, and its envelope). */
  maxMessageBytes?: number;
  /** Bound on the open and the session start, ms; default 5000. */
  connectTimeoutMs?: number;
}

/** Wire bytes per input sample: s16 as base64 (8/3) plus the JSON envelope of a 20 ms frame. */
const BYTES_PER_SAMPLE = 2.75;

export function openaiRealtime(options: OpenaiRealtimeOptions): SpeechToSpeechProvider {
  return new OpenaiRealtime(options);
}

class OpenaiRealtime implements SpeechToSpeechProvider {
  readonly name = SERVICE;
  readonly stt: SttProvider;
  readonly llm: LlmProvider;
  readonly tts: TtsProvider;
  readonly #o: OpenaiRealtimeOptions;
  readonly #events = new Emitter<ProviderEvents>();
  #connection: RealtimeConnection | undefined;
  /** The audio stream of the reply being built: the next response's audio goes there. */
  #reply: ReplyAudio | undefined;
  /** The socket that has the conversation so far (see seedHistory). */
  #seeded: RealtimeConnection | undefined;

  constructor(options: OpenaiRealtimeOptions) {
    if (!options?.url || !options.model || typeof options.token !== "function") {
      throw new ConfigError("openaiRealtime(): give `url` (the wss:// Realtime endpoint), `model` and `token` (a function that returns an ephemeral key from your server)");
    }
    const detection = options.turnDetection ?? DEFAULTS.providers.openaiRealtime.turnDetection;
    if (!["client", "server_vad", "semantic_vad"].includes(detection)) {
      throw new ConfigError(`openaiRealtime(): \`turnDetection\` must be "client", "server_vad" or "semantic_vad", not ${JSON.stringify(detection)}`);
    }
    this.#o = { ...options, turnDetection: detection };
    const name = SERVICE;
    this.stt = { name, audioFormat: { sampleRate: REALTIME_RATE, encoding: "s16" }, supportsGap: false, connect: (signal) => this.#connect(signal) };
    this.llm = { name, stream: (messages, signal, request) => this.#respond(messages, signal, request) };
    this.tts = { name, connect: async () => (this.#reply = new ReplyAudio(this.#live("the reply's audio"))) };
  }

  on<K extends keyof ProviderEvents & string>(name: K, fn: (payload: ProviderEvents[K]) => void): () => void {
    return this.#events.on(name, fn);
  }

  async #connect(signal?: AbortSignal): Promise<SttStream> {
    const key = await fetchToken(this.#o.token, signal);
    if (!key) throw new ConfigError("openaiRealtime(): the token function returned no key");
    const { url, safeUrl } = serviceUrl(this.#o.url, "", { model: this.#o.model }, { websocket: true });
    const connection = await RealtimeConnection.open(
      {
        url,
        safeUrl,
        key,
        config: { instructions: this.#o.instructions, voice: this.#o.voice, turnDetection: this.#o.turnDetection ?? DEFAULTS.providers.openaiRealtime.turnDetection, transcriptionModel: this.#o.transcriptionModel ?? DEFAULTS.providers.openaiRealtime.transcriptionModel },
        maxMessageBytes: this.#o.maxMessageBytes ?? DEFAULT_REALTIME_MAX_BYTES,
        connectTimeoutMs: this.#o.connectTimeoutMs ?? DEFAULTS.providers.openaiRealtime.connectTimeoutMs,
        onError: (error: BargeinError) => this.#events.emit("error", { service: SERVICE, error }),
      },
      signal,
    );
    this.#connection = connection;
    return {
      bytesPerSample: BYTES_PER_SAMPLE,
      get bufferedAmount() {
        return connection.bufferedAmount;
      },
      sendAudio: (pcm) => connection.sendAudio(pcm),
      flush: (s) => connection.flush(s),
      events: (s) => connection.sttEvents(s),
      close: async () => {
        if (this.#connection === connection) this.#connection = undefined;
        await connection.close();
      },
    };
  }

  #live(what: string): RealtimeConnection {
    const connection = this.#connection;
    if (connection?.isOpen) return connection;
    throw new ConfigError(`${SERVICE}: ${what} needs the session's socket, which is not open (the session's start() opens it; it reconnects after a drop)`);
  }

  async *#respond(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncGenerator<LlmOutput, void, undefined> {
    const connection = this.#live("a response");
    // A socket's first response: the service has none of the earlier turns (a reconnect's new conversation, or the session's seeded history).
    if (this.#seeded !== connection) {
      this.#seeded = connection;
      connection.seedHistory(earlierTurns(messages));
    }
    const reply = this.#reply?.closed ? undefined : this.#reply;
    reply?.bind(connection);
    yield* connection.respond({ ...pendingTurn(messages), tools: request?.tools ?? [] }, reply, signal);
  }
}

/** The turns before the pending one, as a new conversation needs them (spoken-turns.ts): the pending user turn is sent by respond(). */
export function earlierTurns(messages: readonly ChatMessage[]): Array<{ role: "user" | "assistant"; text: string }> {
  return spokenTurns(messages.at(-1)?.role === "user" ? messages.slice(0, -1) : messages);
}

/**
 * What the service does not have yet, from the session's chat: the tool
 * results after the last assistant message, or a typed user turn (the user's
 * speech is on the service already, committed from the input buffer).
 */
export function pendingTurn(messages: readonly ChatMessage[]): { userText?: string; toolOutputs: Array<{ callId: string; output: string }> } {
  const toolOutputs: Array<{ callId: string; output: string }> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "tool") break;
    toolOutputs.unshift({ callId: m.toolCallId, output: m.content });
  }
  const last = messages.at(-1);
  return { toolOutputs, ...(last?.role === "user" ? { userText: last.content } : {}) };
}

/**
 * One reply's audio stream (the session's "tts" quest): every audio delta of
 * the reply's responses, as float PCM at 24 kHz, in order. See the header:
 * `interrupted` is the truncate.
 */
class ReplyAudio implements TtsStream, AudioSink {
  readonly #queue = new AsyncQueue<TtsEvent>();
  readonly #timeline = new ReplyTimeline();
  readonly #pcm = new PcmAssembler("s16le");
  #connection: RealtimeConnection;
  #ended = false;
  /** The reply was cut (interrupted): nothing more of it is taken or sent. */
  #cut = false;
  closed = false;

  constructor(connection: RealtimeConnection) {
    this.#connection = connection;
  }

  bind(connection: RealtimeConnection): void {
    this.#connection = connection;
  }

  sendText(): void {}

  end(): void {
    this.#ended = true;
    if (!this.#connection.feeds(this)) this.#queue.end();
  }

  events(signal?: AbortSignal): AsyncIterable<TtsEvent> {
    return this.#queue.iterate(signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.#queue.end();
  }

  interrupted(heardS: number): TimedText[] {
    const words = this.#timeline.words();
    if (this.#cut) return words;
    // Also once all its audio arrived (the stream ended): the item is still being heard.
    const truncates = this.#timeline.truncates(heardS);
    const heard = this.#timeline.heardText(heardS);
    this.#cut = true;
    this.#queue.end();
    const connection = this.#connection;
    // After the session's flush and fence, which run in the same turn-machine step.
    queueMicrotask(() => {
      try {
        connection.cancelFor(this);
        for (const t of truncates) connection.truncate(t.itemId, t.audioEndMs);
        // The truncate deletes the item's transcript: the heard words are ours to give the model.
        const last = truncates.at(-1);
        if (last) connection.noteHeard(heard, last.itemId);
      } catch {
        // The socket closed meanwhile: the service's conversation went with it.
      }
    });
    return words;
  }

  // ─── AudioSink: the connection's routing ──────────────────────────────────

  transcript(delta: string): void {
    this.#timeline.transcript(delta);
  }

  audio(itemId: string, bytes: Uint8Array): void {
    if (this.#cut || this.closed) return;
    const pcm = this.#pcm.push(bytes, this.#connection.ctx, "response.output_audio.delta");
    this.#timeline.audio(itemId, pcm.length);
    this.#queue.push({ kind: "audio", pcm, sampleRate: REALTIME_RATE });
  }

  responseDone(): void {
    this.#timeline.complete();
    if (this.#ended) this.#queue.end();
  }

  fail(error: unknown): void {
    if (!this.#queue.closed) this.#queue.fail(error);
  }
}
