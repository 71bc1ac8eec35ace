/**
 * kyutaiStt: Kyutai moshi-server's streaming ASR (`/api/asr-streaming`).
 *
 * Wire: msgpack maps tagged by `type`, 24 kHz mono float32.
 *   client → `Audio{pcm}`, `Marker{id}`
 *   server → `Ready`, `Word{text,start_time}`, `EndWord{stop_time}`,
 *            `Step{step_idx,prs,buffered_pcm}` (every 80 ms), `Marker{id}`,
 *            `Error{message}` ("no free channels" = at capacity)
 * The token goes in the `auth_id` query parameter (browsers cannot set headers).
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError, ConnectionClosedError } from "../errors.js";
import { Encoder } from "@msgpack/msgpack";
import { abortable } from "../util/abort.js";
import { findInstance } from "./discovery.js";
import { KYUTAI_SAMPLE_RATE, kyutaiServerError, openKyutaiSocket, type KyutaiServiceOptions } from "./kyutai-socket.js";
import type { MessageSocket } from "./message-socket.js";
import { fetchToken, serviceUrl, urlList } from "./service-url.js";
import type { SttEvent, SttProvider, SttStream } from "./types.js";
import { numberArrayField, numberField, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** A Step is under 100 bytes, so the default 1 MiB message limit is ample. */
export interface KyutaiSttOptions extends KyutaiServiceOptions {
  /**
   * Which of `Step.prs` is the pause probability (default 2, the head Unmute
   * uses; moshi's ASR predicts pauses of several lengths, one per head).
   */
  pauseHead?: number;
  /**
   * Steps to skip before reporting pauses (default 12, about 1 s: as Unmute
   * notes, the prediction is meaningless in the first steps).
   */
  warmupSteps?: number;
  /**
   * Seconds of silence `flush` sends after its marker (default 0.5). The model
   * answers with a delay (0.5 s for stt-1b-en_fr, 2.5 s for stt-2.6b-en) and
   * only steps when audio arrives, so without padding the marker would wait
   * for the next real audio. Unmute pads the same way.
   */
  flushPaddingS?: number;
}

const SERVICE = "stt";
/** msgpack float32: one type byte and four data bytes per sample. */
const BYTES_PER_SAMPLE = 5;
/** Kyutai's frame: 80 ms at 24 kHz. Padding is sent in frames of this size. */
const FRAME_SAMPLES = 1920;

// Audio must go out as float32 even for samples that happen to be integers
// (silence is 0), so the server sees one type and every sample costs 5 bytes.
const audioEncoder = new Encoder({ forceFloat32: true, forceIntegerToFloat: true });
const controlEncoder = new Encoder();

export function kyutaiStt(options: KyutaiSttOptions): SttProvider {
  const urls = urlList(options.urls);
  if (urls.length === 0) throw new ConfigError("kyutaiStt: `urls` is empty; give at least one instance URL", { service: SERVICE });
  const path = options.path ?? DEFAULTS.providers.kyutaiStt.path;
  return {
    name: "kyutai-stt",
    audioFormat: { sampleRate: KYUTAI_SAMPLE_RATE, encoding: "f32" },
    supportsGap: false,
    async connect(signal?: AbortSignal): Promise<SttStream> {
      const token = await fetchToken(options.token, signal);
      return findInstance(
        { service: SERVICE, urls, maxTries: options.maxTries, startupTimeoutMs: options.startupTimeoutMs ?? DEFAULTS.providers.kyutaiStt.startupTimeoutMs, random: options.random, signal },
        async (base, attemptSignal) => {
          const endpoint = serviceUrl(base, path, { auth_id: token }, { websocket: true, secrets: ["auth_id"] });
          const stream = new KyutaiSttStream(options);
          await stream.open(endpoint, attemptSignal);
          return stream;
        },
      );
    },
  };
}

class KyutaiSttStream implements SttStream {
  readonly bytesPerSample = BYTES_PER_SAMPLE;
  readonly #pauseHead: number;
  readonly #flushPaddingS: number;
  #paddingSamples = 0;
  readonly #maxMessageBytes: number | undefined;
  #warmupLeft: number;
  #socket: MessageSocket<SttEvent> | undefined;
  #nextMarkerId = 1;
  /** Flushes waiting for their marker, by id. Settled as markers arrive, or all at once when the socket ends. */
  readonly #markerWaiters = new Map<number, { resolve: () => void; reject: (err: unknown) => void }>();

  constructor(options: KyutaiSttOptions) {
    this.#pauseHead = options.pauseHead ?? DEFAULTS.providers.kyutaiStt.pauseHead;
    this.#warmupLeft = options.warmupSteps ?? DEFAULTS.providers.kyutaiStt.warmupSteps;
    this.#flushPaddingS = options.flushPaddingS ?? DEFAULTS.providers.kyutaiStt.flushPaddingS;
    this.#maxMessageBytes = options.maxMessageBytes;
  }

  async open(endpoint: ReturnType<typeof serviceUrl>, signal: AbortSignal): Promise<void> {
    const socket = await openKyutaiSocket(SERVICE, endpoint, this.#maxMessageBytes, signal);
    // Ready was the first message; from here on frames become SttEvents as they arrive.
    this.#socket = socket.map((msg, ctx) => this.#receive(msg, ctx));
    void this.#socket.closed.then(() => {
      const err = new ConnectionClosedError(`${SERVICE}: the connection to ${socket.ctx.url} ended before a flush completed`, {
        service: SERVICE,
        url: socket.ctx.url,
      });
      for (const waiter of this.#markerWaiters.values()) waiter.reject(err);
      this.#markerWaiters.clear();
    });
  }

  get bufferedAmount(): number {
    return this.#socket?.bufferedAmount ?? 0;
  }

  /** The flushes' silence padding so far, in samples of the stream's timeline. */
  get paddingSamples(): number {
    return this.#paddingSamples;
  }

  sendAudio(pcm: Float32Array | Int16Array): number {
    const samples = new Array<number>(pcm.length);
    if (pcm instanceof Int16Array) for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
    else for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i];
    return this.#live().send(audioEncoder.encode({ type: "Audio", pcm: samples }));
  }

  async flush(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const socket = this.#live();
    const id = this.#nextMarkerId++;
    // Send before registering: if the socket is closed, send throws and no waiter is left behind.
    // The echo cannot overtake the registration, which happens in the same task.
    socket.send(controlEncoder.encode({ type: "Marker", id }));
    // Settled by the marker, by the socket's end, or by the signal; the waiter goes either way.
    const answered = abortable<void>((resolve, reject) => {
      this.#markerWaiters.set(id, { resolve, reject });
      return () => this.#markerWaiters.delete(id);
    }, signal);
    // If the padding below throws (the socket closed), the close still rejects `answered`: not unhandled.
    answered.catch(() => {});
    const padding = Math.round(this.#flushPaddingS * KYUTAI_SAMPLE_RATE);
    for (let sent = 0; sent < padding; sent += FRAME_SAMPLES) {
      const n = Math.min(FRAME_SAMPLES, padding - sent);
      this.sendAudio(new Float32Array(n));
      this.#paddingSamples += n;
    }
    return answered;
  }

  async *events(signal?: AbortSignal): AsyncGenerator<SttEvent, void, undefined> {
    yield* this.#live().messages(signal);
  }

  async close(): Promise<void> {
    await this.#socket?.close();
  }

  /** The open socket; sending on it throws ConnectionClosedError once it has closed. */
  #live(): MessageSocket<SttEvent> {
    if (!this.#socket) throw new ConnectionClosedError(`${SERVICE}: the stream is not open`, { service: SERVICE });
    return this.#socket;
  }

  /** Maps one server message to an event, in arrival order; settles flushes on markers. */
  #receive(msg: TaggedMessage, ctx: WireContext): SttEvent | undefined {
    switch (msg.type) {
      case "Word":
        return { kind: "word", text: stringField(msg, "text", ctx), startS: numberField(msg, "start_time", ctx) };
      case "EndWord":
        return { kind: "word-end", stopS: numberField(msg, "stop_time", ctx) };
      case "Step": {
        const stepIndex = numberField(msg, "step_idx", ctx);
        const prs = numberArrayField(msg, "prs", ctx);
        if (this.#warmupLeft > 0) {
          this.#warmupLeft--;
          return undefined;
        }
        const probability = prs[this.#pauseHead] ?? prs[prs.length - 1];
        if (probability === undefined) return undefined;
        return { kind: "pause", probability, stepIndex };
      }
      case "Marker": {
        const id = numberField(msg, "id", ctx);
        const waiter = this.#markerWaiters.get(id);
        this.#markerWaiters.delete(id);
        waiter?.resolve();
        return { kind: "marker", id };
      }
      case "Error":
        throw kyutaiServerError(msg, ctx);
      default:
        // Ready again, or a message type newer than this client: not ours to judge.
        return undefined;
    }
  }
}
