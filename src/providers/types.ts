/**
 * The provider interfaces: the only way a VoiceSession talks to remote
 * services. One provider maps one wire protocol onto one of these interfaces,
 * so a new service is one file that implements `SttProvider`, `LlmProvider`
 * or `TtsProvider`.
 *
 * Contracts shared by every provider:
 * - Cancellation is an AbortSignal. An aborted call rejects with the signal's
 *   reason (an AbortError), never with a BargeinError, and releases its socket
 *   or fetch before it settles; a built-in provider's socket still connecting
 *   is closed once it opens instead (the browser logs an error for one closed
 *   while connecting), and VoiceSession.stop() waits for that.
 * - Failures are BargeinErrors naming the service and the URL:
 *   `AtCapacityError` (the service refused), `ServiceTimeoutError` (no answer
 *   in time), `ProtocolError` (malformed or oversized messages),
 *   `ConnectionClosedError` (the connection ended early).
 * - Secrets come only from token functions, called once per connection, and
 *   are never logged or put in error messages.
 */

/** A warning a provider reports while it keeps working, e.g. a start-up retry. */
export interface ProviderWarning {
  /** The service the warning is about: "stt", "tts" or "llm". */
  service: string;
  /** What happened and what the provider does about it, for people. */
  message: string;
  /** The start-up attempt that missed, counted from 1. */
  attempt: number;
  /** How long the provider waits before the next attempt, in ms. */
  delayMs: number;
  /** The error that caused the retry. */
  cause: unknown;
}

/** Events a provider reports outside any single call. */
export type ProviderEvents = {
  warning: ProviderWarning;
  /**
   * A failure outside any call the session is waiting on (a speech-to-speech
   * service's `error` event about an earlier client event); the provider
   * keeps working. The session reports it as a non-fatal `error`.
   */
  error: { service: string; error: Error };
};

/**
 * Optional for custom providers: a way to hear a provider's warnings (a
 * session forwards them as its own `warning` event). Returns an unsubscribe
 * function.
 */
export interface ProviderEventSource {
  on?<K extends keyof ProviderEvents & string>(name: K, fn: (payload: ProviderEvents[K]) => void): () => void;
}

// ─── Speech to text ─────────────────────────────────────────────────────────

/** The audio a speech-to-text stream takes in: mono, at this rate. */
export interface SttAudioFormat {
  /** Samples per second the service expects (the uplink resamples to it). */
  sampleRate: number;
  /** The sample type `sendAudio` prefers; the other one is converted. */
  encoding: "f32" | "s16";
}

/** What a speech-to-text stream reports, in the order the server sent it. */
export type SttEvent =
  /** A new word; `startS` is its start in the stream's audio timeline, in seconds. */
  | { kind: "word"; text: string; startS: number }
  /** The last word ended at `stopS` seconds. */
  | { kind: "word-end"; stopS: number }
  /**
   * One model step (Kyutai: every 80 ms). `probability` is the service's
   * probability that the user has paused (0..1). A provider may skip steps
   * whose value is meaningless (documented per provider).
   */
  | { kind: "pause"; probability: number; stepIndex: number }
  /** A marker sent by `flush` came back: every sample before it was processed. */
  | { kind: "marker"; id: number }
  /**
   * The service heard speech begin at `startS` (Deepgram `SpeechStarted`,
   * AssemblyAI `SpeechStarted`). Informational: barge-in is the VAD's call.
   */
  | { kind: "speech-start"; startS: number }
  /**
   * The service judged the user's turn over (Deepgram Flux `EndOfTurn`,
   * AssemblyAI `end_of_turn`). `eager` marks a likely end that may still
   * resume (Flux `EagerEndOfTurn`); `confidence` is the service's own (0..1)
   * when it gives one. The session's turn policy decides what to do with it.
   * `text`: an eager end's transcript (Flux EagerEndOfTurn's words), which may still change.
   */
  | { kind: "end-of-turn"; eager: boolean; confidence?: number; text?: string }
  /** The user went on after an eager end of turn (Flux `TurnResumed`). */
  | { kind: "turn-resumed" }
  /**
   * The service will close this stream soon and the provider asks for a new
   * one (Gemini's `goAway`), once the wire is quiet: the session moves to a
   * new stream at its own next quiet moment (no user turn, no reply playing),
   * at the latest within `withinMs`, as after a drop (the speech not yet
   * turned into words is replayed) but with no error and outside the
   * reconnect policy. `message` says why, for the session's warning.
   */
  | { kind: "move"; message: string; withinMs: number };

/** An open speech-to-text stream. One producer sends; one consumer reads `events`. */
export interface SttStream {
  /**
   * Puts one chunk of mono PCM on the wire and returns the bytes it cost.
   * Float32 is in -1..1; Int16 is converted as v/32768. Synchronous: the
   * bytes are in the socket's send buffer (see `bufferedAmount`) when it
   * returns. Throws ConnectionClosedError if the socket is no longer open.
   */
  sendAudio(pcm: Float32Array | Int16Array): number;
  /**
   * Tells the service that `samples` samples were skipped here (the uplink's
   * `gap` policy). Present only when the provider's `supportsGap` is true.
   */
  sendGap?(samples: number): void;
  /** Wire bytes per audio sample, for the uplink's byte budget (e.g. 5 for msgpack float32). */
  readonly bytesPerSample: number;
  /** Bytes queued in the socket and not yet sent (`WebSocket.bufferedAmount`). */
  readonly bufferedAmount: number;
  /**
   * Samples of silence the stream has put into the service's timeline on its
   * own so far (a flush's padding): the service's word times count them, the
   * microphone's audio does not. Undefined or 0 for a stream that pads nothing.
   */
  readonly paddingSamples?: number;
  /**
   * Round trip through the server: resolves once the server has processed
   * every sample sent before the call. Rejects if the stream ends first, or
   * with the signal's reason when it aborts.
   */
  flush(signal?: AbortSignal): Promise<void>;
  /**
   * Optional, for a service whose turns the client opens (geminiLive's
   * activityStart): the user's turn began, `sinceS` seconds ago (the VAD's
   * onset). The session calls it when it gives the user the floor: at the
   * VAD's speech start while listening, or at a confirmed barge-in (after the
   * reply's cut). A VAD misfire over the bot never calls it. May come again
   * while the turn is open (a no-op then); `flush` ends the turn.
   */
  turnStarted?(sinceS: number): void;
  /**
   * The server's events. Single consumer. Ends normally when the server closes
   * normally; throws ConnectionClosedError on an abnormal close, or the
   * service's error. Aborting the signal ends the iteration (not the stream).
   */
  events(signal?: AbortSignal): AsyncIterable<SttEvent>;
  /** Closes the socket normally and resolves once it is closed. Idempotent. */
  close(): Promise<void>;
}

/** A speech-to-text service. */
export interface SttProvider extends ProviderEventSource {
  /** A short name for logs and errors, e.g. "kyutai-stt". */
  readonly name: string;
  /** The audio `sendAudio` expects. */
  readonly audioFormat: SttAudioFormat;
  /** True when the stream implements `sendGap`. */
  readonly supportsGap: boolean;
  /**
   * Finds an instance (service discovery) and resolves once the service said
   * it is ready. Rejects with AtCapacityError or ServiceTimeoutError naming the
   * URLs tried; aborting closes any socket it opened.
   */
  connect(signal?: AbortSignal, context?: SttConnectContext): Promise<SttStream>;
}

/** What the session tells a new STT stream. */
export interface SttConnectContext {
  /**
   * The conversation so far, as the LLM gets it (heard text only). A
   * speech-to-speech provider whose service keeps the context puts it back
   * into a new socket's empty conversation (a reconnect, or a session
   * seeded with `history`); a plain STT ignores it.
   */
  conversation: readonly ChatMessage[];
}

// ─── Language model ─────────────────────────────────────────────────────────

/**
 * One chat message, in the shape OpenAI-compatible APIs take (each provider
 * maps it to its wire: chat completions' `tool_calls` and `role: "tool"`, the
 * Responses API's `function_call` and `function_call_output` items).
 */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  /** `toolCalls`: the tools the model asked for in this message; each is answered by a `tool` message after it. */
  | { role: "assistant"; content: string; toolCalls?: readonly ToolCallRequest[] }
  /** The result of the call `toolCallId` (a JSON text, or the tool's own string). */
  | { role: "tool"; content: string; toolCallId: string; name: string };

// ─── Tools ──────────────────────────────────────────────────────────────────
// Shared by every provider kind that lets a model call the app's functions:
// the cascaded LLMs (openaiChat, websocketLlm) and the speech-to-speech
// streams. A provider only carries calls and results; the session runs them.

/**
 * A function the model may call, in the shape of OpenAI's function tools
 * (https://platform.openai.com/docs/guides/function-calling), which the
 * Responses, Realtime and Gemini Live function declarations share.
 */
export interface ToolDefinition {
  /** The name the model calls it by: letters, digits, "_" and "-", at most 64 characters (OpenAI's rule). */
  name: string;
  /** What it does and when to call it, for the model. */
  description?: string;
  /**
   * A JSON Schema of the arguments, an object schema:
   * `{ type: "object", properties: { city: { type: "string" } }, required: ["city"] }`.
   */
  parameters: Record<string, unknown>;
}

/** A call as the wire gave it, before the session parses its arguments. */
export interface ToolCallRequest {
  /** The model's id for the call (chat completions `tool_calls[].id`; Responses and Realtime `call_id`); the result goes back under it. */
  id: string;
  name: string;
  /** The arguments as the model streamed them: a JSON text ("" when it sent none). */
  rawArguments: string;
}

/** A call the model asked for, as the app's tool handler gets it. */
export interface ToolCall extends ToolCallRequest {
  /** The arguments, parsed: a JSON object (`{}` when the model sent none). */
  arguments: Record<string, unknown>;
}

/**
 * What an LLM stream yields last when the model stopped to call tools
 * (chat completions `finish_reason: "tool_calls"`): every call of the
 * message, in the model's order. The session answers them with `tool`
 * messages and asks again.
 */
export interface LlmToolCalls {
  kind: "toolCalls";
  calls: ToolCallRequest[];
}

/** What `LlmProvider.stream` yields: text deltas, and at most one `LlmToolCalls`, last. */
export type LlmOutput = string | LlmToolCalls;

/** Per-request settings beyond the messages. */
export interface LlmRequest {
  /** The tools the model may call in this reply (none: the request offers none). */
  tools?: readonly ToolDefinition[];
  /**
   * A preemptive reply's request (`turn.preemptive`): made before the user's
   * turn was certainly over, and cancelled if they go on. Providers need not
   * read it; the session's admission queue counts these apart.
   */
  speculative?: boolean;
}

/** A language model that streams text, and the tool calls it asks for. */
export interface LlmProvider extends ProviderEventSource {
  /** A short name for logs and errors, e.g. "openai-chat". */
  readonly name: string;
  /**
   * Streams the reply to `messages` as text deltas, in order. Ends when the
   * reply is complete. When the model stops to call tools, the last item is
   * an `LlmToolCalls` (a provider without tool support never yields one).
   * Aborting `signal` aborts the request on the wire (the fetch, or a cancel
   * message then the socket's close) and the iteration rejects with the
   * signal's reason. Breaking out of the loop cancels too.
   */
  stream(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncIterable<LlmOutput>;
}

// ─── Text to speech ─────────────────────────────────────────────────────────

/** What a text-to-speech stream reports. */
export type TtsEvent =
  /** Mono float32 audio (fresh array, owned by the receiver) at `sampleRate`. */
  | { kind: "audio"; pcm: Float32Array; sampleRate: number }
  /** A word and where it sits in the stream's audio timeline, in seconds. */
  | { kind: "text"; text: string; startS: number; stopS: number };

/**
 * A conversation's connection to a TTS service: `connect` gives one reply's
 * stream on the shared socket (opened, or reopened after it died, as needed);
 * the stream's `close` stops only that reply. `close` ends the connection.
 */
export interface TtsSession {
  /** One reply's stream: a context of its own on the conversation's socket. */
  connect(signal?: AbortSignal): Promise<TtsStream>;
  /** Closes the socket (and any reply still open on it); resolves once closed. */
  close(): Promise<void>;
}

/** An open text-to-speech stream. */
export interface TtsStream {
  /** Sends text to speak; may be called many times, as words arrive. */
  sendText(text: string): void;
  /** Says no more text will come; the server finishes the audio and closes. */
  end(): void;
  /**
   * The server's audio and word timings. Single consumer. Ends normally on
   * the server's normal close after `end()`; throws ConnectionClosedError on
   * an abnormal close. Aborting the signal ends the iteration.
   */
  events(signal?: AbortSignal): AsyncIterable<TtsEvent>;
  /** Closes the socket now (e.g. on barge-in) and resolves once closed. Idempotent. */
  close(): Promise<void>;
  /**
   * Optional, for a speech-to-speech service that keeps the conversation
   * (openaiRealtime): the reply was cut after `heardS` seconds of this
   * stream's audio (rendered, less the output latency). The stream tells its
   * service (a truncate) and returns the reply's words with the timings it
   * knows now, for the history's heard-text cut. Called at most once, before
   * the stream is closed.
   */
  interrupted?(heardS: number): Array<{ text: string; startS: number; stopS: number }>;
}

/** A text-to-speech service. */
export interface TtsProvider extends ProviderEventSource {
  /** A short name for logs and errors, e.g. "kyutai-tts". */
  readonly name: string;
  /**
   * Finds an instance and resolves once the service said it is ready.
   * Start-up may retry with backoff; each retry emits a `warning`.
   */
  connect(signal?: AbortSignal): Promise<TtsStream>;
  /**
   * Optional, for a service that multiplexes replies on one socket
   * (elevenlabsTts, cartesiaTts): one connection for a whole conversation,
   * a context per reply. The VoiceSession opens it at `start()`, takes each
   * reply's stream from it, and closes it at `stop()`.
   */
  session?(): TtsSession;
}

// ─── Speech to speech ───────────────────────────────────────────────────────

/**
 * A speech-to-speech service (one socket: mic PCM in, model PCM out), as the
 * session's `realtime` option takes it. It presents the cascaded ports over
 * its one connection, so the session runs it on the same path: `stt` opens
 * the connection and carries the user's audio and transcripts, `llm` asks
 * for a response and yields its transcript and tool calls, `tts` carries the
 * response's audio (and its truncate, `TtsStream.interrupted`).
 */
export interface SpeechToSpeechProvider extends ProviderEventSource {
  readonly name: string;
  readonly stt: SttProvider;
  readonly llm: LlmProvider;
  readonly tts: TtsProvider;
  /**
   * Optional: the session's settings that a service takes only when the
   * socket opens (Gemini Live's setup holds the tools). The session calls it
   * once, when it is constructed, before any connection.
   */
  configure?(session: { tools: readonly ToolDefinition[] }): void;
}
