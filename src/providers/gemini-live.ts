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
import { ConfigError } from "../errors.js";
import { GeminiConnection, SERVICE } from "./gemini-connection.js";
import { DEFAULT_GEMINI_MAX_BYTES, GEMINI_INPUT_RATE, GEMINI_OUTPUT_RATE, type GeminiTurnDetection } from "./gemini-wire.js";
import type { TimedText } from "./realtime-timeline.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { spokenTurns } from "./spoken-turns.js";
import { ReplyAudio, SpeechToSpeechBase } from "./speech-to-speech.js";
import type { ChatMessage, SpeechToSpeechProvider, SttConnectContext, ToolDefinition } from "./types.js";

export { pendingTurn } from "./speech-to-speech.js";

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

export function geminiLive(options: GeminiLiveOptions): SpeechToSpeechProvider {
  return new GeminiLive(options);
}

/** The adapter: a GeminiConnection per socket (the tools in its setup, the conversation put back), a cut as a heard-text turn. */
class GeminiLive extends SpeechToSpeechBase<GeminiConnection> {
  readonly #o: GeminiLiveOptions;
  #tools: readonly ToolDefinition[] = [];

  constructor(options: GeminiLiveOptions) {
    super(SERVICE, { sampleRate: GEMINI_INPUT_RATE, encoding: "s16" }, "a reply");
    if (!options?.url || !options.model || typeof options.token !== "function") {
      throw new ConfigError("geminiLive(): give `url` (the wss:// Live API endpoint), `model` and `token` (a function that returns an ephemeral token from your server)");
    }
    const detection = options.turnDetection ?? DEFAULTS.providers.geminiLive.turnDetection;
    if (detection !== "client" && detection !== "server") {
      throw new ConfigError(`geminiLive(): \`turnDetection\` must be "client" or "server", not ${JSON.stringify(detection)}`);
    }
    this.#o = { ...options, turnDetection: detection };
  }

  /** The session's tools, for the setup (the Live API takes them there only). */
  configure({ tools }: { tools: readonly ToolDefinition[] }): void {
    this.#tools = tools;
  }

  protected async open(signal?: AbortSignal, context?: SttConnectContext): Promise<GeminiConnection> {
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
        onError: (error) => this.reportError(error),
      },
      signal,
    );
    // A new socket's context is empty: a reconnect (or a session seeded with history) puts the conversation back first.
    connection.restoreContext(contextOf(context?.conversation ?? []));
    return connection;
  }

  protected newReply(connection: GeminiConnection): ReplyAudio<GeminiConnection> {
    return new HeardNoteReply(connection, GEMINI_OUTPUT_RATE, "serverContent.modelTurn inlineData");
  }
}

/** The conversation as the Live API's context takes it (spoken-turns.ts): the assistant is the "model". */
export function contextOf(messages: readonly ChatMessage[]): Array<{ role: "user" | "model"; text: string }> {
  return spokenTurns(messages).map((t) => ({ role: t.role === "user" ? "user" : "model", text: t.text }));
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

/** A reply whose cut is the heard-text turn (see the header). */
class HeardNoteReply extends ReplyAudio<GeminiConnection> {
  protected cut(heardS: number, words: TimedText[]): () => void {
    const connection = this.connection;
    return () => {
      try {
        connection.drop(this);
        // Sent now, inside the interrupt's step: before the activityStart the session's next effect sends.
        connection.tellHeard(heardText(words, heardS));
      } catch {
        // The socket closed meanwhile: the service's conversation went with it.
      }
    };
  }
}
