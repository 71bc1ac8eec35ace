/**
 * deepgramStt: Deepgram's live transcription over a WebSocket, both generations.
 *
 * - `/v1/listen` (Nova, the default `model: "nova-3"`): binary linear16 in; `Results` out,
 *   interim and final. Control: `KeepAlive` (sent after `keepAliveMs` without audio: Deepgram
 *   closes a silent stream after 10 s), `Finalize` (flush), `CloseStream` (close).
 * - `/v2/listen` (Flux, any `model` starting with "flux"): binary linear16 in; `Connected`, then
 *   `TurnInfo` events. Control: `ForceEndTurn` (flush), `CloseStream` (close).
 *
 * Auth: the token function's value goes in the WebSocket subprotocols, `["bearer", jwt]` (a JWT
 * your server gets from `POST /v1/auth/grant`, 30 s by default; only the handshake needs it to be
 * valid) or `["token", key]` with `tokenKind: "token"` (an API key: for a server or a test, never a
 * page). Deepgram's official SDK (`@deepgram/sdk`) is not used: it adds a bundle for one socket, and
 * its events hide the `start`/`duration` and word timings the flush and the heard-text cut need.
 *
 * Words. The session treats a `word` as said (it may confirm a barge-in, it joins the user's turn)
 * and the SttEvent stream cannot take one back, so only words Deepgram will not revise are sent:
 * - Nova: the words of `is_final` Results, each as `word` then `word-end` (its `end`). Interim
 *   results are never sent as words: Deepgram revises them, and a final comes soon after a pause
 *   (`endpointing`, Deepgram's default 10 ms), so barge-in confirmation by words waits for the
 *   first final, while the VAD confirms it sooner. `SpeechStarted` (with `vadEvents`, on by
 *   default) becomes `speech-start`. `UtteranceEnd` and `speech_final` are not mapped (the
 *   session's VAD and turn policy end the turn).
 * - Flux: the words of `EndOfTurn`, before its `end-of-turn` event: `Update` and
 *   `EagerEndOfTurn` transcripts may still change (a `TurnResumed` follows then). A Flux word
 *   without `start`/`end` takes the turn's audio window. `StartOfTurn` → `speech-start`,
 *   `EagerEndOfTurn` → `end-of-turn {eager: true}`, `TurnResumed` → `turn-resumed`, `EndOfTurn`
 *   → `end-of-turn {eager: false}`, each with `end_of_turn_confidence`.
 *
 * flush(): every sample sent before it has been processed once a reply covers it. Nova answers
 * `Finalize` with a final Results marked `from_finalize`; a final Results whose `start +
 * duration` reaches the flushed audio counts too (the docs say the `from_finalize` answer is
 * typical, not certain). Flux answers `ForceEndTurn` with an `EndOfTurn`, and every TurnInfo
 * tells how far it transcribed (`audio_window_end`); one that reaches the flushed audio (within
 * FLUSH_TOLERANCE_S, as times come in milliseconds) completes the flush. Each flush then yields
 * a `marker` event after the words it waited for.
 *
 * Errors: a refused handshake (HTTP 401 bad or expired token, 429 over the concurrency limit,
 * 400 a bad parameter: a browser does not say which) is a ConnectionClosedError saying so; a
 * close with 1011 NET-0001 (no audio for 10 s) a ServiceTimeoutError; 1008 (DATA-: the audio
 * could not be decoded) a ProtocolError; 1013 or a Flux Error about limits an AtCapacityError.
 */
import { DEFAULTS } from "../defaults.js";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../errors.js";
import { abortable, raceAbort } from "../util/abort.js";
import { timeout } from "../util/timeout.js";
import { findInstance } from "./discovery.js";
import { MessageSocket } from "./message-socket.js";
import { fetchToken, serviceUrl, urlList, type ServiceUrl } from "./service-url.js";
import type { SttEvent, SttProvider, SttStream } from "./types.js";
import { decodeJson, protocolError, type WireContext } from "./wire.js";
import { parseFluxMessage, parseNovaMessage, type DeepgramWord, type FluxMessage, type NovaMessage } from "./deepgram-wire.js";

export interface DeepgramSttOptions {
  /** Instance base URLs (default "wss://api.deepgram.com"); `/v1/listen` or `/v2/listen` is appended. */
  urls?: string | readonly string[];
  /** Returns a short-lived token (see `tokenKind`), called once per `connect()`. */
  token?: () => Promise<string>;
  /** "bearer" (default): a JWT from `POST /v1/auth/grant`; "token": an API key (never in a page). */
  tokenKind?: "bearer" | "token";
  /** "nova-3" (default, /v1/listen) or a Flux model such as "flux-general-en" (/v2/listen). */
  model?: string;
  /** v1 `language` (default "en"); Flux's English model takes none. */
  language?: string;
  /** Samples per second sent, as linear16 (default 16000). */
  sampleRate?: number;
  /** v1 `endpointing` in ms, or false to turn it off (default: Deepgram's, 10 ms). */
  endpointingMs?: number | false;
  /** v1 `vad_events`: `SpeechStarted` messages, reported as `speech-start` (default true). */
  vadEvents?: boolean;
  /** Flux `eot_threshold` (default: Deepgram's, 0.7). */
  eotThreshold?: number;
  /** Flux `eager_eot_threshold` (0.3–0.9): turns on EagerEndOfTurn and TurnResumed (default off). */
  eagerEotThreshold?: number;
  /** Flux `eot_timeout_ms` (default: Deepgram's, 5000). */
  eotTimeoutMs?: number;
  /** More documented query parameters, e.g. `{ smart_format: "true" }`. */
  query?: Record<string, string>;
  /** A KeepAlive goes after this long without audio (v1; default 5000 ms, Deepgram's limit is 10 s). */
  keepAliveMs?: number;
  /** Largest inbound message, in bytes (default 256 KiB; a Results is a few kB). */
  maxMessageBytes?: number;
  /** Each instance must open (Flux: say Connected) within this, in ms (default 3000: a TLS handshake to the cloud). */
  startupTimeoutMs?: number;
  /** At most this many instances are tried (default 3). */
  maxTries?: number;
  /** The random source for the instance shuffle (default Math.random). */
  random?: () => number;
}

const SERVICE = "stt";
/** Times come in milliseconds; the flushed audio's end is exact. */
const FLUSH_TOLERANCE_S = 0.02;
/** How long close() waits, after CloseStream, for the service's final Results, Metadata and close. */
const CLOSE_STREAM_WAIT_MS = 2000;

export function deepgramStt(options: DeepgramSttOptions = {}): SttProvider {
  const urls = urlList(options.urls ?? DEFAULTS.providers.deepgramStt.urls);
  if (urls.length === 0) throw new ConfigError("deepgramStt: `urls` is empty; give at least one URL or leave it out", { service: SERVICE });
  const model = options.model ?? DEFAULTS.providers.deepgramStt.model;
  const flux = model.startsWith("flux");
  const sampleRate = options.sampleRate ?? DEFAULTS.providers.deepgramStt.sampleRate;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48000) {
    throw new ConfigError(`deepgramStt: sampleRate ${sampleRate} is not a whole number of Hz in 8000–48000`, { service: SERVICE });
  }
  return {
    name: flux ? "deepgram-flux" : "deepgram-stt",
    audioFormat: { sampleRate, encoding: "s16" },
    supportsGap: false,
    async connect(signal?: AbortSignal): Promise<SttStream> {
      const token = await fetchToken(options.token, signal);
      // A subprotocol must be a non-empty HTTP token; the browser's own error ("invalid subprotocol") names neither.
      if (token !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(token)) {
        throw new ConfigError(
          `deepgramStt: the token function returned ${token === "" ? "an empty token" : "a token with characters a WebSocket subprotocol cannot carry"}; return the access_token of POST /v1/auth/grant (or an API key with tokenKind "token")`,
          { service: SERVICE },
        );
      }
      const protocols = token === undefined ? undefined : [options.tokenKind ?? DEFAULTS.providers.deepgramStt.tokenKind, token];
      return findInstance(
        { service: SERVICE, urls, maxTries: options.maxTries, startupTimeoutMs: options.startupTimeoutMs ?? DEFAULTS.providers.deepgramStt.startupTimeoutMs, random: options.random, signal },
        async (base, attemptSignal) => {
          const endpoint = serviceUrl(base, flux ? "/v2/listen" : "/v1/listen", listenQuery(options, model, flux, sampleRate), { websocket: true });
          const stream = new DeepgramSttStream(flux, sampleRate, options);
          await stream.open(endpoint, protocols, attemptSignal);
          return stream;
        },
      );
    },
  };
}

function listenQuery(o: DeepgramSttOptions, model: string, flux: boolean, sampleRate: number): Record<string, string | undefined> {
  const common = { model, encoding: "linear16", sample_rate: String(sampleRate) };
  if (flux) {
    return {
      ...common,
      eot_threshold: o.eotThreshold?.toString(),
      eager_eot_threshold: o.eagerEotThreshold?.toString(),
      eot_timeout_ms: o.eotTimeoutMs?.toString(),
      ...o.query,
    };
  }
  return {
    ...common,
    channels: "1",
    language: o.language ?? DEFAULTS.providers.deepgramStt.language,
    vad_events: String(o.vadEvents ?? DEFAULTS.providers.deepgramStt.vadEvents),
    endpointing: o.endpointingMs === undefined ? undefined : String(o.endpointingMs),
    ...o.query,
  };
}

interface FlushWaiter {
  id: number;
  /** The end of the flushed audio, in seconds of the stream. */
  atS: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

class DeepgramSttStream implements SttStream {
  readonly bytesPerSample = 2;
  #socket: MessageSocket<SttEvent[]> | undefined;
  #sentSamples = 0;
  #lastSendAt = 0;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #nextMarkerId = 1;
  #connected = false;
  /** Flux: a turn is open (StartOfTurn seen, its EndOfTurn not yet). */
  #turnOpen = false;
  readonly #waiters: FlushWaiter[] = [];

  constructor(
    readonly flux: boolean,
    readonly sampleRate: number,
    readonly options: DeepgramSttOptions,
  ) {}

  async open(endpoint: ServiceUrl, protocols: string[] | undefined, signal: AbortSignal): Promise<void> {
    const socket = await MessageSocket.open<SttEvent[]>(
      {
        service: SERVICE,
        url: endpoint.url,
        safeUrl: endpoint.safeUrl,
        protocols,
        maxMessageBytes: this.options.maxMessageBytes ?? DEFAULTS.providers.deepgramStt.maxMessageBytes,
        decode: (data, ctx) => this.#receive(data, ctx),
      },
      signal,
    ).catch((err: unknown) => {
      if (err instanceof ConnectionClosedError) {
        throw new ConnectionClosedError(
          `${SERVICE}: Deepgram refused the WebSocket handshake at ${endpoint.safeUrl}: an expired or wrong token (HTTP 401), the concurrency limit (HTTP 429) or a parameter it rejects (HTTP 400); a browser does not say which. Check the token function and the options.`,
          { service: SERVICE, url: endpoint.safeUrl, closeCode: err.closeCode, cause: err },
        );
      }
      throw err;
    });
    this.#socket = socket;
    if (this.flux) await this.#awaitConnected(socket, signal);
    this.#lastSendAt = Date.now();
    const keepAliveMs = this.options.keepAliveMs ?? DEFAULTS.providers.deepgramStt.keepAliveMs;
    if (!this.flux && keepAliveMs > 0) {
      this.#keepAlive = setInterval(() => {
        if (Date.now() - this.#lastSendAt < keepAliveMs || !socket.isOpen) return;
        socket.send(JSON.stringify({ type: "KeepAlive" }));
        this.#lastSendAt = Date.now();
      }, Math.max(250, keepAliveMs / 4));
    }
    void socket.closed.then(() => {
      clearInterval(this.#keepAlive);
      const err = new ConnectionClosedError(`${SERVICE}: the connection to ${socket.ctx.url} ended before a flush completed`, { service: SERVICE, url: socket.ctx.url });
      for (const waiter of this.#waiters.splice(0)) waiter.reject(err);
    });
  }

  /** Flux says Connected before anything else; until then the stream is not ready. */
  async #awaitConnected(socket: MessageSocket<SttEvent[]>, signal: AbortSignal): Promise<void> {
    try {
      const first = await socket.next(signal);
      if (first.done) throw new ConnectionClosedError(`${SERVICE}: ${socket.ctx.url} closed before it said Connected`, { service: SERVICE, url: socket.ctx.url });
      if (!this.#connected) throw protocolError(socket.ctx, "expected Connected first");
    } catch (err) {
      await socket.close();
      throw err;
    }
  }

  get bufferedAmount(): number {
    return this.#socket?.bufferedAmount ?? 0;
  }

  sendAudio(pcm: Float32Array | Int16Array): number {
    const bytes = new Uint8Array(pcm.length * 2);
    const view = new DataView(bytes.buffer);
    if (pcm instanceof Int16Array) for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i], true);
    else for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, Math.max(-32768, Math.min(32767, Math.round(pcm[i] * 32768))), true);
    const sent = this.#live().send(bytes);
    this.#sentSamples += pcm.length;
    this.#lastSendAt = Date.now();
    return sent;
  }

  async flush(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const socket = this.#live();
    const waiter = { id: this.#nextMarkerId++, atS: this.#sentSamples / this.sampleRate };
    // Send before registering: if the socket is closed, send throws and no waiter is left behind.
    socket.send(JSON.stringify({ type: this.flux ? "ForceEndTurn" : "Finalize" }));
    return abortable<void>((resolve, reject) => {
      const entry = { ...waiter, resolve, reject };
      this.#waiters.push(entry);
      return () => {
        const i = this.#waiters.indexOf(entry);
        if (i >= 0) this.#waiters.splice(i, 1);
      };
    }, signal);
  }

  async *events(signal?: AbortSignal): AsyncGenerator<SttEvent, void, undefined> {
    const socket = this.#live();
    try {
      for await (const batch of socket.messages(signal)) yield* batch;
    } catch (err) {
      throw await this.#closeError(err, socket);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#keepAlive);
    const socket = this.#socket;
    if (!socket) return;
    // CloseStream: Deepgram finishes the audio sent, sends its final Results and the Metadata, then
    // closes (https://developers.deepgram.com/docs/close-stream). Those reach events() while we wait
    // for that close, bounded: a service that never closes is closed from here.
    if (socket.isOpen) {
      socket.send(JSON.stringify({ type: "CloseStream" }));
      const bound = timeout(CLOSE_STREAM_WAIT_MS);
      try {
        await raceAbort(socket.closed, bound.signal);
      } catch {
        // The bound passed: closed below.
      } finally {
        bound.clear();
      }
    }
    await socket.close();
  }

  #live(): MessageSocket<SttEvent[]> {
    if (!this.#socket) throw new ConnectionClosedError(`${SERVICE}: the stream is not open`, { service: SERVICE });
    return this.#socket;
  }

  /** An abnormal close, mapped by Deepgram's close codes (the reason carries NET-/DATA- codes). */
  async #closeError(err: unknown, socket: MessageSocket<SttEvent[]>): Promise<unknown> {
    if (!(err instanceof ConnectionClosedError) || err.closeCode === undefined) return err;
    const { code, reason } = await socket.closed;
    const options = { service: SERVICE, url: socket.ctx.url, cause: err };
    const said = reason ? ` ("${reason}")` : "";
    if (code === 1011 && /NET-0001/.test(reason)) {
      return new ServiceTimeoutError(`${SERVICE}: Deepgram at ${socket.ctx.url} closed the stream: no audio arrived in time${said}`, { ...options, timeoutMs: 10_000 });
    }
    if (code === 1008) return new ProtocolError(`${SERVICE}: Deepgram at ${socket.ctx.url} could not read what was sent${said}; check sampleRate and the audio`, options);
    if (code === 1013) return new AtCapacityError(`${SERVICE}: Deepgram at ${socket.ctx.url} is at capacity${said}; try again later`, options);
    return err;
  }

  /**
   * One text frame → the events it stands for, in order (a flush's marker after the words it
   * waited for); undefined when there are none, except for Flux's Connected, which the opening
   * waits for.
   */
  #receive(data: ArrayBuffer | string, ctx: WireContext): SttEvent[] | undefined {
    const msg = decodeJson(data, ctx);
    if (!this.flux) return nonEmpty(this.#novaEvents(parseNovaMessage(msg, ctx)));
    const message = parseFluxMessage(msg, ctx);
    if (message.type === "Connected" && !this.#connected) {
      this.#connected = true;
      return [];
    }
    return nonEmpty(this.#fluxEvents(message, ctx));
  }

  #novaEvents(m: NovaMessage): SttEvent[] {
    if (m.type === "SpeechStarted") return [{ kind: "speech-start", startS: m.timestampS }];
    if (m.type !== "Results" || !m.isFinal) return [];
    const events = wordEvents(m.words, m.startS, m.startS + m.durationS);
    if (m.fromFinalize) events.push(...this.#settle(() => true, 1));
    return [...events, ...this.#settle((w) => m.startS + m.durationS >= w.atS - FLUSH_TOLERANCE_S)];
  }

  #fluxEvents(m: FluxMessage, ctx: WireContext): SttEvent[] {
    if (m.type === "Error") {
      const text = `${SERVICE}: Deepgram at ${ctx.url} reported an error: ${m.code} ${m.description}`.trim();
      throw /limit|capacity|too many/i.test(`${m.code} ${m.description}`) ? new AtCapacityError(text, ctx) : new BargeinError(text, ctx);
    }
    if (m.type !== "TurnInfo") return [];
    const events: SttEvent[] = [];
    const confidence = m.endOfTurnConfidence;
    if (m.event === "StartOfTurn") {
      this.#turnOpen = true;
      events.push({ kind: "speech-start", startS: m.words[0]?.startS ?? m.windowStartS });
    }
    else if (m.event === "EagerEndOfTurn") events.push({ kind: "end-of-turn", eager: true, confidence, text: m.words.map((w) => w.text).join(" ") });
    else if (m.event === "TurnResumed") events.push({ kind: "turn-resumed" });
    else if (m.event === "EndOfTurn") {
      this.#turnOpen = false;
      events.push(...wordEvents(m.words, m.windowStartS, m.windowEndS), { kind: "end-of-turn", eager: false, confidence });
    }
    // While a turn is open, its words come with the EndOfTurn that ForceEndTurn asks for, so only
    // that completes a flush; with no turn open, any TurnInfo that reached the audio does.
    if (this.#turnOpen && m.event !== "EndOfTurn") return events;
    return [...events, ...this.#settle((w) => m.windowEndS >= w.atS - FLUSH_TOLERANCE_S)];
  }

  /** Completes the oldest waiting flushes that `reached` (at most `limit`), in order; a marker event each. */
  #settle(reached: (w: FlushWaiter) => boolean, limit = Infinity): SttEvent[] {
    const events: SttEvent[] = [];
    while (events.length < limit && this.#waiters.length > 0 && reached(this.#waiters[0])) {
      const waiter = this.#waiters.shift()!;
      waiter.resolve();
      events.push({ kind: "marker", id: waiter.id });
    }
    return events;
  }
}

const nonEmpty = (events: SttEvent[]): SttEvent[] | undefined => (events.length > 0 ? events : undefined);

/** Each word as `word` then `word-end`; a word without its own span takes the result's. */
function wordEvents(words: readonly DeepgramWord[], fallbackStartS: number, fallbackEndS: number): SttEvent[] {
  const events: SttEvent[] = [];
  for (const w of words) {
    events.push({ kind: "word", text: w.text, startS: w.startS ?? fallbackStartS });
    events.push({ kind: "word-end", stopS: w.endS ?? fallbackEndS });
  }
  return events;
}
