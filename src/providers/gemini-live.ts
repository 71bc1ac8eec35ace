/**
 * geminiLive: Google's Gemini Live API (the BidiGenerateContent WebSocket) as
 * a speech-to-speech provider. `new VoiceSession({ realtime: geminiLive({...}) })`.
 *
 * Design: as openaiRealtime, the provider presents the cascaded ports (stt,
 * llm, tts) over one shared socket, so the session runs it on its one path:
 * - stt: `realtimeInput.audio` (16 kHz pcm16) for the uplink; the input
 *   transcription as words; `flush` (the end of a user turn) is
 *   `activityEnd`, resolved once the service answers the turn;
 * - llm: the model's turn that answers (the service starts it on its own
 *   after activityEnd; after a typed turn or tool results it is asked for
 *   with clientContent / toolResponse), yielding the output transcription
 *   and, last, the function calls of a toolCall;
 * - tts: the turn's audio (24 kHz pcm16 inlineData) to the player. Text sent
 *   to it is ignored. There are no item ids: each model turn (each round of
 *   it, a toolCall ending one) is a generation, and `serverContent.
 *   interrupted` or `turnComplete` ends the current reply's audio.
 *
 * Turns, "client" detection (the default): automatic activity detection is
 * disabled and bargein opens and closes the user's activity. With
 * START_OF_ACTIVITY_INTERRUPTS (kept, the service's default) an activityStart
 * interrupts the model, so it must mean "a turn really begins": a VAD onset
 * over the reply may still misfire, and a misfire must send nothing. Read
 * against the session (turn-machine.ts), the one moment that means it is the
 * session's move to `user_speaking`: at the VAD's speech start while
 * listening, or at a confirmed barge-in, after the interrupt's cut. The
 * session tells the STT stream then (`SttStream.turnStarted(sinceS)`, the one
 * addition this provider asks of the session), and the stream sends
 * activityStart followed by the audio of the last `sinceS` + 0.3 s, which it
 * kept instead of sending while no activity was open (the service drops
 * audio outside an activity, and the onset of a barge-in came before its
 * confirmation). activityEnd is the turn's flush. A misfire over the reply
 * sends nothing at all; a misfire while listening leaves the activity open
 * until the next turn's end (its noise joins that turn's audio).
 * "server": the service's own detection (its silence ends the turn and it
 * answers by itself), with NO_INTERRUPTION: speech over the reply does not
 * stop the model on the server; bargein's barge-in does, as below.
 *
 * Barge-in: the Live API has no truncate, and it keeps in the model's context
 * what it had sent to the client, heard or not ("only the information already
 * sent to the client is retained in the session history", the capabilities
 * guide). The one way the docs give to add to the context is a clientContent
 * turn; a clientContent also interrupts the model's generation. So at the
 * interrupt's step 1 (`TtsStream.interrupted(heardS)`) the stream drops the
 * rest of the reply locally and sends a user turn with `turnComplete: false`
 * (so the model does not answer it) stating the words the user heard, by the
 * history's own rule (a word is heard when its midpoint was rendered, over
 * the timings estimated from the transcription's arrival, ReplyTimeline).
 * Then the session's activityStart follows. The local history is cut to the
 * same heard words by the session, as for every provider.
 *
 * Auth: `token` returns an ephemeral token from the app's server
 * (`auth_tokens/…`, POST v1alpha/auth_tokens; one use by default), sent as
 * `access_token` on the constrained endpoint
 * (…v1alpha.GenerativeService.BidiGenerateContentConstrained). Any other
 * string is sent as `key` (an API key: for a server-side relay or tests,
 * never in a page). A refused token closes the socket with 1007 and a reason,
 * which start() rejects with, as a ProtocolError. A dead socket fails the STT
 * stream; the session's STT link reconnects under its ReconnectPolicy with a
 * fresh token (a new, empty conversation on the service).
 *   https://ai.google.dev/api/live  https://ai.google.dev/gemini-api/docs/live-guide
 *   https://ai.google.dev/gemini-api/docs/live-tools  https://ai.google.dev/gemini-api/docs/ephemeral-tokens
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError, type BargeinError } from "../errors.js";
import { AsyncQueue } from "../util/async-queue.js";
import { Emitter } from "../util/emitter.js";
import { GeminiConnection, SERVICE, type AudioSink } from "./gemini-connection.js";
import { DEFAULT_GEMINI_MAX_BYTES, GEMINI_INPUT_RATE, GEMINI_OUTPUT_RATE, type GeminiTurnDetection } from "./gemini-wire.js";
import { PcmAssembler } from "./pcm-base64.js";
import { ReplyTimeline, type TimedText } from "./realtime-timeline.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { spokenTurns } from "./spoken-turns.js";
import type { ChatMessage, LlmOutput, LlmProvider, LlmRequest, ProviderEvents, SpeechToSpeechProvider, SttConnectContext, SttProvider, SttStream, ToolDefinition, TtsEvent, TtsProvider, TtsStream } from "./types.js";

export interface GeminiLiveOptions {
  /** The Live API endpoint, e.g. "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained" (or the app's relay). */
  url: string;
  /** The model, e.g. "gemini-live-2.5-flash-preview" ("models/" is added when missing). */
  model: string;
  /** Returns an ephemeral token (auth_tokens/…) from the app's server; called once per connection attempt. */
  token: () => Promise<string>;
  /** A prebuilt voice name (speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName), e.g. "Kore". */
  voice?: string;
  /** The system instruction. */
  instructions?: string;
  /** Who detects the user's turns; default "client" (bargein's VAD and turn logic send activityStart / activityEnd). */
  turnDetection?: GeminiTurnDetection;
  /** Largest inbound frame, in bytes; default about 0.7 MB (10 s of audio in one part). */
  maxMessageBytes?: number;
  /** Bound on the open and the setup, ms; default 5000. */
  connectTimeoutMs?: number;
}

/** Wire bytes per input sample: s16 as base64 (8/3) plus the JSON envelope of a 20 ms frame. */
const BYTES_PER_SAMPLE = 2.75;

export function geminiLive(options: GeminiLiveOptions): SpeechToSpeechProvider {
  return new GeminiLive(options);
}

class GeminiLive implements SpeechToSpeechProvider {
  readonly name = SERVICE;
  readonly stt: SttProvider;
  readonly llm: LlmProvider;
  readonly tts: TtsProvider;
  readonly #o: GeminiLiveOptions;
  readonly #events = new Emitter<ProviderEvents>();
  #connection: GeminiConnection | undefined;
  /** The audio stream of the reply being built: the next generation's audio goes there. */
  #reply: ReplyAudio | undefined;
  #tools: readonly ToolDefinition[] = [];

  constructor(options: GeminiLiveOptions) {
    if (!options?.url || !options.model || typeof options.token !== "function") {
      throw new ConfigError("geminiLive(): give `url` (the wss:// Live API endpoint), `model` and `token` (a function that returns an ephemeral token from your server)");
    }
    const detection = options.turnDetection ?? DEFAULTS.providers.geminiLive.turnDetection;
    if (detection !== "client" && detection !== "server") {
      throw new ConfigError(`geminiLive(): \`turnDetection\` must be "client" or "server", not ${JSON.stringify(detection)}`);
    }
    this.#o = { ...options, turnDetection: detection };
    const name = SERVICE;
    this.stt = { name, audioFormat: { sampleRate: GEMINI_INPUT_RATE, encoding: "s16" }, supportsGap: false, connect: (signal, context) => this.#connect(signal, context) };
    this.llm = { name, stream: (messages, signal, request) => this.#respond(messages, signal, request) };
    this.tts = { name, connect: async () => (this.#reply = new ReplyAudio(this.#live("the reply's audio"))) };
  }

  on<K extends keyof ProviderEvents & string>(name: K, fn: (payload: ProviderEvents[K]) => void): () => void {
    return this.#events.on(name, fn);
  }

  /** The session's tools, for the setup (the Live API takes them there only). */
  configure({ tools }: { tools: readonly ToolDefinition[] }): void {
    this.#tools = tools;
  }

  async #connect(signal?: AbortSignal, context?: SttConnectContext): Promise<SttStream> {
    const token = await fetchToken(this.#o.token, signal);
    if (!token) throw new ConfigError("geminiLive(): the token function returned no token");
    const param = token.startsWith("auth_tokens/") ? { access_token: token } : { key: token };
    const { url, safeUrl } = serviceUrl(this.#o.url, "", param, { websocket: true, secrets: ["access_token", "key"] });
    const connection = await GeminiConnection.open(
      {
        url,
        safeUrl,
        config: { model: this.#o.model, instructions: this.#o.instructions, voice: this.#o.voice, turnDetection: this.#o.turnDetection ?? DEFAULTS.providers.geminiLive.turnDetection, tools: this.#tools },
        maxMessageBytes: this.#o.maxMessageBytes ?? DEFAULT_GEMINI_MAX_BYTES,
        connectTimeoutMs: this.#o.connectTimeoutMs ?? DEFAULTS.providers.geminiLive.connectTimeoutMs,
        onError: (error: BargeinError) => this.#events.emit("error", { service: SERVICE, error }),
      },
      signal,
    );
    this.#connection = connection;
    // A new socket's context is empty: a reconnect (or a session seeded with history) puts the conversation back first.
    connection.restoreContext(contextOf(context?.conversation ?? []));
    return {
      bytesPerSample: BYTES_PER_SAMPLE,
      get bufferedAmount() {
        return connection.bufferedAmount;
      },
      sendAudio: (pcm) => connection.sendAudio(pcm),
      turnStarted: (sinceS) => connection.startActivity(sinceS),
      flush: (s) => connection.flush(s),
      events: (s) => connection.sttEvents(s),
      close: async () => {
        if (this.#connection === connection) this.#connection = undefined;
        await connection.close();
      },
    };
  }

  #live(what: string): GeminiConnection {
    const connection = this.#connection;
    if (connection?.isOpen) return connection;
    throw new ConfigError(`${SERVICE}: ${what} needs the session's socket, which is not open (the session's start() opens it; it reconnects after a drop)`);
  }

  async *#respond(messages: readonly ChatMessage[], signal?: AbortSignal, request?: LlmRequest): AsyncGenerator<LlmOutput, void, undefined> {
    const connection = this.#live("a reply");
    const reply = this.#reply?.closed ? undefined : this.#reply;
    reply?.bind(connection);
    yield* connection.respond({ ...pendingTurn(messages), tools: request?.tools ?? [] }, reply, signal);
  }
}

/** The conversation as the Live API's context takes it (spoken-turns.ts): the assistant is the "model". */
export function contextOf(messages: readonly ChatMessage[]): Array<{ role: "user" | "model"; text: string }> {
  return spokenTurns(messages).map((t) => ({ role: t.role === "user" ? "user" : "model", text: t.text }));
}

/**
 * What the service does not have yet, from the session's chat: the tool
 * results after the last assistant message (with the tool's name, which a
 * FunctionResponse carries), or a typed user turn (the user's speech is on
 * the service already).
 */
export function pendingTurn(messages: readonly ChatMessage[]): { userText?: string; toolOutputs: Array<{ callId: string; name: string; output: string }> } {
  const toolOutputs: Array<{ callId: string; name: string; output: string }> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "tool") break;
    toolOutputs.unshift({ callId: m.toolCallId, name: m.name, output: m.content });
  }
  const last = messages.at(-1);
  return { toolOutputs, ...(last?.role === "user" ? { userText: last.content } : {}) };
}

/** The words of `words` heard by `heardS`: those whose midpoint was rendered (history.ts splitHeard's rule). */
export function heardText(words: readonly TimedText[], heardS: number): string {
  const heard: string[] = [];
  for (const w of words) {
    if ((w.startS + w.stopS) / 2 > heardS) break;
    heard.push(w.text);
  }
  return heard.join(" ");
}

/**
 * One reply's audio stream (the session's "tts" quest): the audio of the
 * reply's generations, as float PCM at 24 kHz, in order. `interrupted` is
 * the heard-text note (see the header).
 */
class ReplyAudio implements TtsStream, AudioSink {
  readonly #queue = new AsyncQueue<TtsEvent>();
  readonly #timeline = new ReplyTimeline(GEMINI_OUTPUT_RATE);
  readonly #pcm = new PcmAssembler("s16le");
  #connection: GeminiConnection;
  #ended = false;
  #cut = false;
  closed = false;

  constructor(connection: GeminiConnection) {
    this.#connection = connection;
  }

  bind(connection: GeminiConnection): void {
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
    this.#cut = true;
    this.#queue.end();
    try {
      this.#connection.drop(this);
      // Sent now, inside the interrupt's step: before the activityStart the session's next effect sends.
      this.#connection.tellHeard(heardText(words, heardS));
    } catch {
      // The socket closed meanwhile: the service's conversation went with it.
    }
    return words;
  }

  // ─── AudioSink: the connection's routing ──────────────────────────────────

  transcript(delta: string): void {
    this.#timeline.transcript(delta);
  }

  audio(generation: number, bytes: Uint8Array): void {
    if (this.#cut || this.closed) return;
    const pcm = this.#pcm.push(bytes, this.#connection.ctx, "serverContent.modelTurn inlineData");
    this.#timeline.audio(String(generation), pcm.length);
    this.#queue.push({ kind: "audio", pcm, sampleRate: GEMINI_OUTPUT_RATE });
  }

  turnDone(): void {
    this.#timeline.complete();
    if (this.#ended) this.#queue.end();
  }

  fail(error: unknown): void {
    if (!this.#queue.closed) this.#queue.fail(error);
  }
}
