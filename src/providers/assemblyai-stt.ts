/**
 * assemblyaiStt: AssemblyAI Universal-Streaming v3
 * (`wss://streaming.assemblyai.com/v3/ws?sample_rate=16000&encoding=pcm_s16le&token=…`).
 * Docs: https://www.assemblyai.com/docs/api-reference/streaming-api/streaming-api (fields, query),
 * https://www.assemblyai.com/docs/streaming/universal-streaming/message-sequence (order),
 * https://www.assemblyai.com/docs/streaming/common-session-errors-and-closures (close codes),
 * https://www.assemblyai.com/docs/streaming/authenticate-with-a-temporary-token (tokens).
 *
 * Wire: binary frames of raw 16-bit little-endian PCM (50–1000 ms each); JSON
 * text frames `ForceEndpoint`, `UpdateConfiguration`, `Terminate`. No
 * keep-alive is sent: the session's audio keeps the stream open.
 * The server sends `Begin`, `SpeechStarted`, `Turn`, `Termination` (mapped in
 * assemblyai-turns.ts: which words are sent when, and the end-of-turn events).
 *
 * Auth: the token function returns a temporary token that the app's server
 * got from `GET https://streaming.assemblyai.com/v3/token?expires_in_seconds=…`
 * with its API key; it goes in the `token` query parameter (browsers cannot
 * set headers on a WebSocket). A token is good for one session (and must be
 * used within its `expires_in_seconds`, 1–600), so the function is called once
 * per connection attempt: a retry on another instance gets a fresh one.
 *
 * We speak the protocol directly rather than through the `assemblyai` SDK: the
 * SDK hides the per-word finality and times the heard-text cut needs, and its
 * Node-oriented bundle is dead weight in a page.
 *
 * Audio: `audioFormat` is 16 kHz s16. The uplink sends 20 ms frames, but the
 * service refuses messages under 50 ms (close 3007), so `sendAudio` coalesces
 * into `chunkMs` chunks (default 50, the docs' advice); the samples it holds
 * count in `bufferedAmount`, so the uplink's budget sees them.
 *
 * flush() is `ForceEndpoint`: the held samples go out first (padded with
 * silence to 50 ms; `PaddedTimeline` takes the padding back out of the word
 * times), then the service ends the open turn and its last words come back in
 * a Turn with `end_of_turn: true`; flush resolves there, and a `marker` event
 * follows the turn's events. How exact: it is exact for the turn the service
 * has open (SpeechStarted or a Turn came, no end of turn yet). When none is
 * open and the service ended a turn by itself since the last flush (the usual
 * case: its end of turn comes before the VAD's), every word is out and flush
 * resolves at once. When none is open and none ended, the service has not
 * reported the speech yet (it lags, or the stream is new after a reconnect):
 * flush waits up to `flushGraceMs` for a turn to begin, then for its end; with
 * still no turn, it resolves. Words the service reports after that come as a
 * new turn (the session takes them as late words).
 *
 * Errors: close 1008 (token refused, account problem) is a ConfigError; 3009
 * (too many concurrent sessions) an AtCapacityError; 3008 (session expired) a
 * ConnectionClosedError; 3005/3006/3007 (the service's own failure, or it
 * refused what we sent) a BargeinError quoting its reason. No Begin within
 * `startupTimeoutMs` is a ServiceTimeoutError.
 */
import { DEFAULTS } from "../defaults.js";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError } from "../errors.js";
import { AsyncQueue } from "../util/async-queue.js";
import { abortable } from "../util/abort.js";
import { AssemblyAiTurns, PaddedTimeline } from "./assemblyai-turns.js";
import { findInstance } from "./discovery.js";
import { MessageSocket } from "./message-socket.js";
import { fetchToken, serviceUrl, urlList, type ServiceUrl } from "./service-url.js";
import type { SttEvent, SttProvider, SttStream } from "./types.js";
import { decodeJson, protocolError, type TaggedMessage, type WireContext } from "./wire.js";

export interface AssemblyaiSttOptions {
  /** The service's base URL(s) (default "wss://streaming.assemblyai.com"; EU: "wss://streaming.eu.assemblyai.com"). `/v3/ws` is appended unless present. */
  urls?: string | readonly string[];
  /** Returns a temporary streaming token from your server (`GET /v3/token`). Called once per connection attempt (a token opens one session). */
  token?: () => Promise<string>;
  /** `speech_model` (default "universal-streaming-english"; "universal-streaming-multilingual" for en, es, fr, de, it, pt). */
  speechModel?: string;
  /** `sample_rate` of the audio sent (default 16000; the uplink resamples to it). */
  sampleRate?: number;
  /** `format_turns` (default false: punctuation and casing arrive after the end of turn, which a voice agent should not wait for). */
  formatTurns?: boolean;
  /** `end_of_turn_confidence_threshold` (service default 0.4); sent only when set. */
  endOfTurnConfidenceThreshold?: number;
  /** `min_turn_silence` in ms, formerly `min_end_of_turn_silence_when_confident` (service default 400); sent only when set. */
  minTurnSilenceMs?: number;
  /** `max_turn_silence` in ms (service default 1280); sent only when set. */
  maxTurnSilenceMs?: number;
  /** `keyterms_prompt`: words and phrases to recognise better. */
  keytermsPrompt?: readonly string[];
  /** Audio per binary message, in ms (default 50; the service takes 50–1000). */
  chunkMs?: number;
  /**
   * How long `flush()` waits for a turn to begin when none is open and the service ended none since
   * the last flush (it may lag behind the audio), in ms (default 800). See the header.
   */
  flushGraceMs?: number;
  /** Largest inbound message, in bytes (default 256 KiB; a Turn of 100 words is about 10 kB). */
  maxMessageBytes?: number;
  /** `Begin` must arrive within this, in ms (default 3000: a cloud service across the internet). */
  startupTimeoutMs?: number;
  /** At most this many of `urls` are tried (default 3). */
  maxTries?: number;
  /** The random source for the URL shuffle (default Math.random). */
  random?: () => number;
}

/** Settings `UpdateConfiguration` can change mid-stream. */
export interface AssemblyaiSttConfiguration {
  endOfTurnConfidenceThreshold?: number;
  minTurnSilenceMs?: number;
  maxTurnSilenceMs?: number;
  keytermsPrompt?: readonly string[];
}

/** An AssemblyAI stream: an SttStream that can also change its turn detection mid-stream. */
export interface AssemblyaiSttStream extends SttStream {
  /** Sends `UpdateConfiguration` with the settings given. Throws ConnectionClosedError once closed. */
  updateConfiguration(config: AssemblyaiSttConfiguration): void;
}

export interface AssemblyaiSttProvider extends SttProvider {
  connect(signal?: AbortSignal): Promise<AssemblyaiSttStream>;
}

const SERVICE = "stt";
const PATH = "/v3/ws";
const MIN_CHUNK_MS = 50;
const MAX_CHUNK_MS = 1000;

export function assemblyaiStt(options: AssemblyaiSttOptions = {}): AssemblyaiSttProvider {
  const urls = urlList(options.urls ?? DEFAULTS.providers.assemblyaiStt.urls);
  if (urls.length === 0) throw new ConfigError("assemblyaiStt: `urls` is empty; leave it out for AssemblyAI's own endpoint", { service: SERVICE });
  const sampleRate = options.sampleRate ?? DEFAULTS.providers.assemblyaiStt.sampleRate;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000) {
    throw new ConfigError(`assemblyaiStt: \`sampleRate\` must be a whole number of Hz, at least 8000; got ${sampleRate}`, { service: SERVICE });
  }
  const chunkMs = options.chunkMs ?? MIN_CHUNK_MS;
  if (!(chunkMs >= MIN_CHUNK_MS && chunkMs <= MAX_CHUNK_MS)) {
    throw new ConfigError(`assemblyaiStt: \`chunkMs\` must be between 50 and 1000 (the service refuses other sizes); got ${chunkMs}`, { service: SERVICE });
  }
  const query = (token: string | undefined): Record<string, string | undefined> => ({
    sample_rate: String(sampleRate),
    encoding: "pcm_s16le",
    speech_model: options.speechModel ?? DEFAULTS.providers.assemblyaiStt.speechModel,
    format_turns: String(options.formatTurns ?? DEFAULTS.providers.assemblyaiStt.formatTurns),
    ...configurationQuery(options),
    token,
  });
  return {
    name: "assemblyai-stt",
    audioFormat: { sampleRate, encoding: "s16" },
    supportsGap: false,
    async connect(signal?: AbortSignal): Promise<AssemblyaiSttStream> {
      return findInstance(
        { service: SERVICE, urls, maxTries: options.maxTries, startupTimeoutMs: options.startupTimeoutMs ?? DEFAULTS.providers.assemblyaiStt.startupTimeoutMs, random: options.random, signal },
        async (base, attemptSignal) => {
          // A token per attempt: a temporary token opens one session, and an attempt that timed
          // out may have spent it on an instance that was slow to send Begin.
          const token = await fetchToken(options.token, attemptSignal);
          const endpoint = withKeyterms(serviceUrl(base, PATH, query(token), { websocket: true, secrets: ["token"] }), options.keytermsPrompt);
          const stream = new AssemblyaiStream(sampleRate, chunkMs, options.maxMessageBytes ?? DEFAULTS.providers.assemblyaiStt.maxMessageBytes, options.flushGraceMs ?? DEFAULTS.providers.assemblyaiStt.flushGraceMs);
          await stream.open(endpoint, attemptSignal);
          return stream;
        },
      );
    },
  };
}

/** The turn-detection settings as query parameters (undefined ones are left out). */
function configurationQuery(c: AssemblyaiSttConfiguration): Record<string, string | undefined> {
  return {
    end_of_turn_confidence_threshold: c.endOfTurnConfidenceThreshold?.toString(),
    min_turn_silence: c.minTurnSilenceMs?.toString(),
    max_turn_silence: c.maxTurnSilenceMs?.toString(),
  };
}

/** `keyterms_prompt` is a JSON list in the query, as the service's own clients send it. */
function withKeyterms(endpoint: ServiceUrl, keyterms: readonly string[] | undefined): ServiceUrl {
  if (!keyterms?.length) return endpoint;
  const add = (u: string) => {
    const url = new URL(u);
    url.searchParams.set("keyterms_prompt", JSON.stringify(keyterms));
    return url.toString();
  };
  return { url: add(endpoint.url), safeUrl: add(endpoint.safeUrl) };
}

interface FlushWaiter {
  id: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** While no turn is open: the timer that gives up waiting for one. */
  grace?: ReturnType<typeof setTimeout>;
}

class AssemblyaiStream implements AssemblyaiSttStream {
  readonly bytesPerSample = 2;
  readonly #chunkSamples: number;
  readonly #minSamples: number;
  readonly #maxMessageBytes: number;
  readonly #timeline: PaddedTimeline;
  readonly #turns: AssemblyAiTurns;
  /** The events for the one consumer, fed as frames arrive (and by flush's markers). */
  readonly #events = new AsyncQueue<SttEvent>();
  #socket: MessageSocket<undefined> | undefined;
  /** Samples waiting to make a whole chunk. */
  #held: Int16Array;
  #heldCount = 0;
  /** Samples sent so far, padding included: the service's timeline. */
  #sentSamples = 0;
  #nextMarkerId = 1;
  /** Flushes waiting for the forced end of turn, in call order. */
  readonly #flushes: FlushWaiter[] = [];
  /** Turns the service ended by itself (no flush waiting) since the last flush. */
  #turnsEndedSinceFlush = 0;
  readonly #flushGraceMs: number;

  constructor(sampleRate: number, chunkMs: number, maxMessageBytes: number, flushGraceMs: number) {
    this.#flushGraceMs = flushGraceMs;
    this.#chunkSamples = Math.round((sampleRate * chunkMs) / 1000);
    this.#minSamples = Math.ceil((sampleRate * MIN_CHUNK_MS) / 1000);
    this.#held = new Int16Array(this.#chunkSamples);
    this.#maxMessageBytes = maxMessageBytes;
    this.#timeline = new PaddedTimeline(sampleRate);
    this.#turns = new AssemblyAiTurns(this.#timeline);
  }

  /** Opens the socket and resolves on `Begin`; rejects (and closes) on anything else first. */
  async open(endpoint: ServiceUrl, signal: AbortSignal): Promise<void> {
    let begun = false;
    let onBegin: (() => void) | undefined;
    // `decode` may run before `open` resolves (a frame in the handshake's TCP segment): it must not touch `socket`.
    const socket: MessageSocket<undefined> = await MessageSocket.open<undefined>(
      {
        service: SERVICE,
        url: endpoint.url,
        safeUrl: endpoint.safeUrl,
        maxMessageBytes: this.#maxMessageBytes,
        decode: (data, ctx) => {
          const msg = decodeJson(data, ctx);
          if (begun) this.#receive(msg, ctx);
          else if (msg.type === "Begin") {
            begun = true;
            onBegin?.();
          } else throw protocolError(ctx, `expected Begin first, got ${msg.type}`);
          return undefined;
        },
      },
      signal,
    );
    this.#socket = socket;
    void socket.closed.then(() => this.#ended(socket));
    try {
      await abortable<void>((resolve, reject) => {
        if (begun) return resolve();
        onBegin = resolve;
        // Before Begin, the socket's end (a 1008 for a refused token, a 3009 when full) is the answer.
        void socket.closed.then(() => socket.next().then(() => reject(closedBeforeBegin(socket)), (err) => reject(mapClose(err, socket))));
      }, signal);
    } catch (err) {
      await socket.close();
      throw err;
    } finally {
      onBegin = undefined;
    }
  }

  get bufferedAmount(): number {
    return (this.#socket?.bufferedAmount ?? 0) + this.#heldCount * this.bytesPerSample;
  }

  sendAudio(pcm: Float32Array | Int16Array): number {
    const socket = this.#live();
    let sent = 0;
    for (let i = 0; i < pcm.length; i++) {
      const v = pcm[i];
      this.#held[this.#heldCount++] = pcm instanceof Int16Array ? v : Math.max(-32768, Math.min(32767, Math.round(v * 32768)));
      if (this.#heldCount === this.#chunkSamples) sent += this.#sendHeld(socket);
    }
    return sent;
  }

  async flush(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const socket = this.#live();
    if (this.#heldCount > 0) {
      // Pad the last chunk to the service's 50 ms minimum with silence, and take it out of the times.
      const padding = Math.max(0, this.#minSamples - this.#heldCount);
      this.#timeline.pad(this.#sentSamples + this.#heldCount, padding);
      this.#held.fill(0, this.#heldCount, this.#heldCount + padding);
      this.#heldCount += padding;
      this.#sendHeld(socket);
    }
    socket.send(JSON.stringify({ type: "ForceEndpoint" }));
    const id = this.#nextMarkerId++;
    const heardTurnEnd = this.#turnsEndedSinceFlush > 0;
    this.#turnsEndedSinceFlush = 0;
    if (!this.#turns.turnOpen && heardTurnEnd) {
      // The service ended the turn itself, and nothing new has begun: every word is out.
      this.#events.push({ kind: "marker", id });
      return;
    }
    return abortable<void>((resolve, reject) => {
      const waiter: FlushWaiter = { id, resolve, reject };
      this.#flushes.push(waiter);
      if (!this.#turns.turnOpen) {
        // No turn open and none ended since the last flush: the service may not have reported the
        // speech yet (it lags, or this stream is new and got a replay). Wait for a turn to begin;
        // after the grace, with still none, there is nothing to end.
        waiter.grace = setTimeout(() => {
          if (this.#turns.turnOpen || !this.#flushes.includes(waiter)) return;
          this.#flushes.splice(this.#flushes.indexOf(waiter), 1);
          this.#events.push({ kind: "marker", id });
          resolve();
        }, this.#flushGraceMs);
      }
      return () => {
        clearTimeout(waiter.grace);
        const at = this.#flushes.indexOf(waiter);
        if (at >= 0) this.#flushes.splice(at, 1);
      };
    }, signal);
  }

  updateConfiguration(config: AssemblyaiSttConfiguration): void {
    const message: Record<string, unknown> = { type: "UpdateConfiguration" };
    if (config.endOfTurnConfidenceThreshold !== undefined) message.end_of_turn_confidence_threshold = config.endOfTurnConfidenceThreshold;
    if (config.minTurnSilenceMs !== undefined) message.min_turn_silence = config.minTurnSilenceMs;
    if (config.maxTurnSilenceMs !== undefined) message.max_turn_silence = config.maxTurnSilenceMs;
    if (config.keytermsPrompt !== undefined) message.keyterms_prompt = [...config.keytermsPrompt];
    this.#live().send(JSON.stringify(message));
  }

  events(signal?: AbortSignal): AsyncIterable<SttEvent> {
    this.#live();
    return this.#events.iterate(signal);
  }

  async close(): Promise<void> {
    const socket = this.#socket;
    if (!socket) return;
    // Streaming is billed while the session is open: say we are done, then close.
    if (socket.isOpen) {
      try {
        socket.send(JSON.stringify({ type: "Terminate" }));
      } catch {
        // Closed in between: nothing left to end.
      }
    }
    await socket.close();
  }

  #live(): MessageSocket<undefined> {
    if (!this.#socket) throw new ConnectionClosedError(`${SERVICE}: the stream is not open`, { service: SERVICE });
    return this.#socket;
  }

  #sendHeld(socket: MessageSocket<undefined>): number {
    const chunk = this.#held.slice(0, this.#heldCount);
    this.#sentSamples += this.#heldCount;
    this.#heldCount = 0;
    return socket.send(new Uint8Array(chunk.buffer));
  }

  /** One server message after Begin: its events go to the consumer; an ended turn answers the oldest flush. */
  #receive(msg: TaggedMessage, ctx: WireContext): void {
    const step = this.#turns.receive(msg, ctx);
    for (const event of step.events) this.#events.push(event);
    if (step.turnEnded) {
      const flush = this.#flushes.shift();
      if (flush) {
        this.#events.push({ kind: "marker", id: flush.id });
        flush.resolve();
      } else this.#turnsEndedSinceFlush++;
    }
  }

  /** The socket ended: the consumer gets its ending (mapped onto the family), waiting flushes fail. */
  #ended(socket: MessageSocket<undefined>): void {
    // Every message went to #events, so the socket's own queue holds only its ending.
    void socket.next().then(
      () => this.#finish(undefined, socket),
      (err) => this.#finish(mapClose(err, socket), socket),
    );
  }

  #finish(error: unknown, socket: MessageSocket<undefined>): void {
    if (error === undefined) this.#events.end();
    else this.#events.fail(error);
    const reason =
      error ?? new ConnectionClosedError(`${SERVICE}: the connection to ${socket.ctx.url} ended before a flush completed`, { service: SERVICE, url: socket.ctx.url });
    for (const flush of this.#flushes.splice(0)) flush.reject(reason);
  }
}

function closedBeforeBegin(socket: MessageSocket<undefined>): ConnectionClosedError {
  return new ConnectionClosedError(`${SERVICE}: ${socket.ctx.url} closed the connection before Begin`, { service: SERVICE, url: socket.ctx.url });
}

/** An abnormal close, by AssemblyAI's documented close codes; other errors pass through. */
function mapClose(err: unknown, socket: MessageSocket<undefined>): unknown {
  if (!(err instanceof ConnectionClosedError) || err.closeCode === undefined) return err;
  const at = { service: SERVICE, url: socket.ctx.url, cause: err };
  const said = err.message.match(/\(code \d+, (.*)\)$/)?.[1] ?? "no reason given";
  switch (err.closeCode) {
    case 1008:
      return new ConfigError(`${SERVICE}: AssemblyAI refused the connection (close 1008: ${said}); check the token function returns a fresh temporary token (GET /v3/token)`, at);
    case 3009:
      return new AtCapacityError(`${SERVICE}: AssemblyAI is at this account's concurrency limit (close 3009: ${said}); try again later or raise the limit`, at);
    case 3005:
    case 3006:
    case 3007:
      return new BargeinError(`${SERVICE}: AssemblyAI ended the session (close ${err.closeCode}: ${said})`, at);
    default:
      return err;
  }
}
