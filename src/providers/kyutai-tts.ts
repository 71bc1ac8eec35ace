/**
 * kyutaiTts: Kyutai moshi-server's streaming TTS (`/api/tts_streaming`).
 *
 * Wire: msgpack maps tagged by `type`.
 *   client → `Text{text}` (as many as needed), then `Eos`
 *   server → `Ready`, `Audio{pcm}` (24 kHz float32, 1920-sample frames),
 *            `Text{text,start_s,stop_s}`, `Error{message}`
 * The end of the audio is the server's normal close. Query: format=PcmMessagePack,
 * voice, auth_id (the token).
 *
 * Start-up: discovery (shuffled instances, ≤ 3 tries, 0.5 s each) wrapped in
 * Unmute's backoff (0.05 s, ×1.5, ≤ 1 s, 5 tries). Each miss emits a `warning`
 * event on the provider ("looking for resources"): a provider has no session,
 * so it carries its own small typed emitter and the session forwards it.
 */
import { DEFAULTS } from "../defaults.js";
import { Encoder } from "@msgpack/msgpack";
import { ConfigError } from "../errors.js";
import { Emitter } from "../util/emitter.js";
import { findInstance, retryWithBackoff, type BackoffOptions } from "./discovery.js";
import { KYUTAI_SAMPLE_RATE, kyutaiServerError, openKyutaiSocket, type KyutaiServiceOptions } from "./kyutai-socket.js";
import type { MessageSocket } from "./message-socket.js";
import { fetchToken, serviceUrl, urlList } from "./service-url.js";
import type { ProviderEvents, TtsEvent, TtsProvider, TtsStream } from "./types.js";
import { numberField, pcmField, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** A 1920-sample audio frame is about 10 kB, well inside the default 1 MiB message limit. */
export interface KyutaiTtsOptions extends KyutaiServiceOptions {
  /** The voice, passed as the `voice` query parameter (server default when absent). */
  voice?: string;
  /** The start-up backoff (default 50 ms, ×1.5, ≤ 1000 ms, 5 tries). */
  backoff?: BackoffOptions;
}

const SERVICE = "tts";
const encoder = new Encoder();

/** A TtsProvider that also reports start-up retries as `warning` events. */
export interface KyutaiTtsProvider extends TtsProvider {
  on<K extends keyof ProviderEvents & string>(name: K, fn: (payload: ProviderEvents[K]) => void): () => void;
}

export function kyutaiTts(options: KyutaiTtsOptions): KyutaiTtsProvider {
  const urls = urlList(options.urls);
  if (urls.length === 0) throw new ConfigError("kyutaiTts: `urls` is empty; give at least one instance URL", { service: SERVICE });
  const path = options.path ?? DEFAULTS.providers.kyutaiTts.path;
  const emitter = new Emitter<ProviderEvents>();
  return {
    name: "kyutai-tts",
    on: (name, fn) => emitter.on(name, fn),
    async connect(signal?: AbortSignal): Promise<TtsStream> {
      const token = await fetchToken(options.token, signal);
      const startUp = async (base: string, attemptSignal: AbortSignal) => {
        const endpoint = serviceUrl(
          base,
          path,
          { format: "PcmMessagePack", voice: options.voice, auth_id: token },
          { websocket: true, secrets: ["auth_id"] },
        );
        const socket = await openKyutaiSocket(SERVICE, endpoint, options.maxMessageBytes ?? DEFAULTS.providers.kyutaiTts.maxMessageBytes, attemptSignal);
        return new KyutaiTtsStream(socket.map(toTtsEvent));
      };
      return retryWithBackoff(
        () =>
          findInstance(
            { service: SERVICE, urls, maxTries: options.maxTries, startupTimeoutMs: options.startupTimeoutMs ?? DEFAULTS.providers.kyutaiTts.startupTimeoutMs, random: options.random, signal },
            startUp,
          ),
        {
          ...options.backoff,
          signal,
          onRetry: ({ attempt, delayMs, error }) =>
            emitter.emit("warning", {
              service: SERVICE,
              message: `Looking for TTS resources, expect some latency (attempt ${attempt} missed; retrying in ${delayMs} ms).`,
              attempt,
              delayMs,
              cause: error,
            }),
        },
      );
    },
  };
}

/** Maps one server message to an event, in arrival order. */
function toTtsEvent(msg: TaggedMessage, ctx: WireContext): TtsEvent | undefined {
  switch (msg.type) {
    case "Audio":
      return { kind: "audio", pcm: pcmField(msg, "pcm", ctx), sampleRate: KYUTAI_SAMPLE_RATE };
    case "Text":
      return {
        kind: "text",
        text: stringField(msg, "text", ctx),
        startS: numberField(msg, "start_s", ctx),
        stopS: numberField(msg, "stop_s", ctx),
      };
    case "Error":
      throw kyutaiServerError(msg, ctx);
    default:
      // Ready again, or a message type newer than this client.
      return undefined;
  }
}

class KyutaiTtsStream implements TtsStream {
  readonly #socket: MessageSocket<TtsEvent>;

  constructor(socket: MessageSocket<TtsEvent>) {
    this.#socket = socket;
  }

  sendText(text: string): void {
    this.#socket.send(encoder.encode({ type: "Text", text }));
  }

  end(): void {
    this.#socket.send(encoder.encode({ type: "Eos" }));
  }

  events(signal?: AbortSignal): AsyncIterable<TtsEvent> {
    return this.#socket.messages(signal);
  }

  close(): Promise<void> {
    return this.#socket.close();
  }
}
