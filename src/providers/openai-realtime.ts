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
import { ConfigError } from "../errors.js";
import { RealtimeConnection, SERVICE } from "./realtime-connection.js";
import { DEFAULT_REALTIME_MAX_BYTES, REALTIME_RATE, type TurnDetection } from "./realtime-wire.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { spokenTurns } from "./spoken-turns.js";
import { ReplyAudio, SpeechToSpeechBase, pendingTurn as withNames, type PendingTurn } from "./speech-to-speech.js";
import type { ChatMessage, SpeechToSpeechProvider } from "./types.js";

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

export function openaiRealtime(options: OpenaiRealtimeOptions): SpeechToSpeechProvider {
  return new OpenaiRealtime(options);
}

/** The adapter: a RealtimeConnection per socket, the earlier turns seeded, a cut as a truncate. */
class OpenaiRealtime extends SpeechToSpeechBase<RealtimeConnection> {
  readonly #o: OpenaiRealtimeOptions;
  /** The socket that has the conversation so far (see seedHistory). */
  #seeded: RealtimeConnection | undefined;

  constructor(options: OpenaiRealtimeOptions) {
    super(SERVICE, { sampleRate: REALTIME_RATE, encoding: "s16" }, "a response");
    if (!options?.url || !options.model || typeof options.token !== "function") {
      throw new ConfigError("openaiRealtime(): give `url` (the wss:// Realtime endpoint), `model` and `token` (a function that returns an ephemeral key from your server)");
    }
    const detection = options.turnDetection ?? DEFAULTS.providers.openaiRealtime.turnDetection;
    if (!["client", "server_vad", "semantic_vad"].includes(detection)) {
      throw new ConfigError(`openaiRealtime(): \`turnDetection\` must be "client", "server_vad" or "semantic_vad", not ${JSON.stringify(detection)}`);
    }
    this.#o = { ...options, turnDetection: detection };
  }

  protected async open(signal?: AbortSignal): Promise<RealtimeConnection> {
    const key = await fetchToken(this.#o.token, signal);
    if (!key) throw new ConfigError("openaiRealtime(): the token function returned no key");
    const { url, safeUrl } = serviceUrl(this.#o.url, "", { model: this.#o.model }, { websocket: true });
    return RealtimeConnection.open(
      {
        url,
        safeUrl,
        key,
        config: { instructions: this.#o.instructions, voice: this.#o.voice, turnDetection: this.#o.turnDetection ?? DEFAULTS.providers.openaiRealtime.turnDetection, transcriptionModel: this.#o.transcriptionModel ?? DEFAULTS.providers.openaiRealtime.transcriptionModel },
        maxMessageBytes: this.#o.maxMessageBytes ?? DEFAULT_REALTIME_MAX_BYTES,
        connectTimeoutMs: this.#o.connectTimeoutMs ?? DEFAULTS.providers.openaiRealtime.connectTimeoutMs,
        onError: (error) => this.reportError(error),
      },
      signal,
    );
  }

  protected newReply(connection: RealtimeConnection): ReplyAudio<RealtimeConnection> {
    return new TruncatedReply(connection, REALTIME_RATE, "response.output_audio.delta");
  }

  protected override pending(messages: readonly ChatMessage[]): PendingTurn {
    return pendingTurn(messages);
  }

  /** A socket's first response: the service has none of the earlier turns (a reconnect's new conversation, or the session's seeded history). */
  protected override prepare(connection: RealtimeConnection, messages: readonly ChatMessage[]): void {
    if (this.#seeded === connection) return;
    this.#seeded = connection;
    connection.seedHistory(earlierTurns(messages));
  }
}

/** The turns before the pending one, as a new conversation needs them (spoken-turns.ts): the pending user turn is sent by respond(). */
export function earlierTurns(messages: readonly ChatMessage[]): Array<{ role: "user" | "assistant"; text: string }> {
  return spokenTurns(messages.at(-1)?.role === "user" ? messages.slice(0, -1) : messages);
}

/** The pending turn (speech-to-speech.ts) as OpenAI's wire takes it: a function_call_output carries no name. */
export function pendingTurn(messages: readonly ChatMessage[]): PendingTurn {
  const { toolOutputs, ...rest } = withNames(messages);
  return { toolOutputs: toolOutputs.map(({ callId, output }) => ({ callId, output })), ...rest };
}

/** A reply whose cut is the truncate (see the header). */
class TruncatedReply extends ReplyAudio<RealtimeConnection> {
  protected cut(heardS: number): () => void {
    // Also once all its audio arrived (the stream ended): the item is still being heard.
    const truncates = this.timeline.truncates(heardS);
    const heard = this.timeline.heardText(heardS);
    const connection = this.connection;
    // After the session's flush and fence, which run in the same turn-machine step.
    return () =>
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
  }
}

