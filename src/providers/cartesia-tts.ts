/**
 * cartesiaTts: Cartesia's TTS WebSocket, `…/tts/websocket?cartesia_version=…&access_token=…`
 * (https://docs.cartesia.ai/api-reference/tts/websocket,
 * https://docs.cartesia.ai/api-reference/tts/working-with-web-sockets/contexts).
 *
 * A context per reply (tts-contexts.ts): `connect()` gives a socket of the reply's
 * own, `session()` one socket for the conversation (the docs: "do many generations
 * over a single WebSocket … a separate context for each generation"); input
 * streaming with `continue`. JSON text frames:
 *   client → `{model_id, transcript, voice:{mode:"id",id}, language, context_id,
 *             output_format:{container:"raw",encoding,sample_rate}, add_timestamps:true,
 *             continue:true}` for each word (transcripts are joined verbatim, so each ends
 *            in a space); the same with `transcript:"", continue:false` at end();
 *            `{context_id, cancel:true}` at close() (barge-in; then the socket's close
 *            unless it is the session's)
 *   server → `{type:"chunk", data (base64 PCM), context_id}`,
 *            `{type:"timestamps", word_timestamps:{words,start,end}, context_id}`
 *            (seconds from the start of the context's audio, which is this stream's timeline),
 *            `{type:"done", context_id}` (events() ends), `{type:"flush_done"}`,
 *            `{type:"phoneme_timestamps"}` (ignored), `{type:"error", status_code, error|message}`
 *
 * Auth: an access token from `POST /access-token` with the `tts` grant (your
 * server holds the API key and mints it; at most 1 h) in `access_token`
 * (https://docs.cartesia.ai/api-reference/auth/access-token). The version goes in
 * `cartesia_version`: a browser cannot set the Cartesia-Version header.
 *
 * Not built on `@cartesia/cartesia-js`: we need the socket itself (its close on
 * barge-in, the size limit on what it receives) and the timestamps as they come,
 * and the SDK's bundle would cost more than this file.
 */
import { DEFAULTS } from "../defaults.js";
import { AtCapacityError, BargeinError, ConfigError } from "../errors.js";
import { finiteNumbers, strings, tokenSocket, type HostedSocketOptions } from "./hosted-socket.js";
import { PcmAssembler, base64Bytes, type PcmEncoding } from "./pcm-base64.js";
import { connectContext, contextSession, type ContextEvent, type ContextWire } from "./tts-contexts.js";
import type { TtsProvider, TtsSession, TtsStream } from "./types.js";
import { decodeJson, protocolError, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** The raw encodings the player can take (the telephony µ-law and A-law are left out). */
export type CartesiaEncoding = "pcm_s16le" | "pcm_f32le";
/** The sample rates the API documents for raw output. */
export type CartesiaSampleRate = 8000 | 16000 | 22050 | 24000 | 44100 | 48000;

export interface CartesiaTtsOptions extends HostedSocketOptions {
  /** The voice's id (`voice: {mode: "id", id}`). Required. */
  voiceId: string;
  /** The API's base URL (default "wss://api.cartesia.ai"; http(s) is mapped to ws(s)). */
  url?: string;
  /** `model_id` (default "sonic-3"). */
  modelId?: string;
  /** `cartesia_version`, the API version date (default "2025-04-16"). */
  version?: string;
  /** `language` (default "en"). */
  language?: string;
  /** `output_format.encoding` (default "pcm_s16le": half the bytes of float32, and lossless for speech). */
  encoding?: CartesiaEncoding;
  /** `output_format.sample_rate` (default 24000: ample for speech, and the rate of the SDK's other TTS). */
  sampleRate?: CartesiaSampleRate;
  /** Returns an access token (`tts` grant) from your server. Called once per socket: per reply with `connect()`, per conversation with `session()`. */
  token?: () => Promise<string>;
}

const SERVICE = "tts";
const RATES: readonly number[] = [8000, 16000, 22050, 24000, 44100, 48000];

export function cartesiaTts(options: CartesiaTtsOptions): TtsProvider {
  if (!options.voiceId) throw new ConfigError("cartesiaTts: `voiceId` is required (the voice's id from Cartesia)", { service: SERVICE });
  const encoding = options.encoding ?? DEFAULTS.providers.cartesiaTts.encoding;
  if (encoding !== "pcm_s16le" && encoding !== "pcm_f32le") {
    throw new ConfigError(`cartesiaTts: \`encoding\` must be "pcm_s16le" or "pcm_f32le"; got ${String(encoding)}`, { service: SERVICE });
  }
  const sampleRate = options.sampleRate ?? DEFAULTS.providers.cartesiaTts.sampleRate;
  if (!RATES.includes(sampleRate)) {
    throw new ConfigError(`cartesiaTts: \`sampleRate\` must be one of ${RATES.join(", ")}; got ${String(sampleRate)}`, { service: SERVICE });
  }
  /** Every input of a context repeats the same fields; only transcript and continue change. */
  const request = (contextId: string) => ({
    model_id: options.modelId ?? DEFAULTS.providers.cartesiaTts.modelId,
    voice: { mode: "id", id: options.voiceId },
    language: options.language ?? DEFAULTS.providers.cartesiaTts.language,
    context_id: contextId,
    output_format: { container: "raw", encoding, sample_rate: sampleRate },
    add_timestamps: true,
  });
  const wire: ContextWire = {
    service: SERVICE,
    endWord: "done",
    cancelEnds: true,
    socket: tokenSocket(options, DEFAULTS.providers.cartesiaTts, {
      path: "/tts/websocket",
      secret: "access_token",
      query: (token) => ({ cartesia_version: options.version ?? DEFAULTS.providers.cartesiaTts.version, access_token: token }),
    }),
    parser: (contextId) => cartesiaParser(contextId, encoding === "pcm_s16le" ? "s16le" : "f32le", sampleRate),
    opening: () => [],
    text: (contextId, transcript) => JSON.stringify({ ...request(contextId), transcript, continue: true }),
    ending: (contextId) => [JSON.stringify({ ...request(contextId), transcript: "", continue: false })],
    // Stops the context's generation at once, so the service frees it.
    cancel: (contextId) => JSON.stringify({ context_id: contextId, cancel: true }),
  };
  return {
    name: "cartesia-tts",
    connect: (signal?: AbortSignal): Promise<TtsStream> => connectContext(wire, signal),
    session: (): TtsSession => contextSession(wire),
  };
}

/** What one server message becomes: events in order, or `done` when the context is complete. */
export type CartesiaEvent = ContextEvent;

/**
 * The parser of one stream's messages. Exported for the fuzz test; every
 * malformed message throws a ProtocolError, a service error its BargeinError.
 */
export function cartesiaParser(
  contextId: string,
  encoding: PcmEncoding,
  sampleRate: number,
): (data: ArrayBuffer | string, ctx: WireContext) => CartesiaEvent[] | undefined {
  const pcmOf = new PcmAssembler(encoding);
  return (data, ctx) => {
    const msg = decodeJson(data, ctx);
    if (msg.type === "error") throw cartesiaServerError(msg, ctx);
    const context = msg.context_id;
    if (context !== undefined && context !== contextId) {
      if (typeof context !== "string") throw protocolError(ctx, `${msg.type}.context_id should be a string`);
      return undefined; // another context's message
    }
    switch (msg.type) {
      case "chunk": {
        const pcm = pcmOf.push(base64Bytes(stringField(msg, "data", ctx), ctx, "chunk.data"), ctx, "chunk.data");
        return pcm.length > 0 ? [{ kind: "audio", pcm, sampleRate }] : undefined;
      }
      case "timestamps": {
        const w = msg.word_timestamps;
        if (typeof w !== "object" || w === null || Array.isArray(w)) throw protocolError(ctx, "timestamps.word_timestamps should be an object");
        const t = w as Record<string, unknown>;
        const words = strings(t.words, ctx, "word_timestamps.words");
        const start = finiteNumbers(t.start, ctx, "word_timestamps.start");
        const end = finiteNumbers(t.end, ctx, "word_timestamps.end");
        if (start.length !== words.length || end.length !== words.length) {
          throw protocolError(ctx, `word_timestamps has ${words.length} words but ${start.length} starts and ${end.length} ends`);
        }
        return words.map((text, i) => ({ kind: "text", text, startS: start[i], stopS: Math.max(start[i], end[i]) }));
      }
      case "done":
        return [{ kind: "done" }];
      default:
        // flush_done, phoneme_timestamps, or a type newer than this client.
        return undefined;
    }
  };
}

/**
 * `{type:"error", status_code, error}` before API 2026-03-01, `{type:"error",
 * status_code, error_code, title, message, request_id}` from it: 429 is AtCapacityError (concurrency or
 * rate limit), 401/403 ConfigError (the token), anything else the service's own.
 */
function cartesiaServerError(msg: TaggedMessage, ctx: WireContext): BargeinError {
  const said = [msg.title, msg.message, msg.error].filter((x) => typeof x === "string").join(": ") || "no message";
  // API 2026-03-01 and newer: error_code and request_id too (https://docs.cartesia.ai/use-the-api/api-errors), for a support request.
  const ids = [typeof msg.error_code === "string" ? msg.error_code : "", typeof msg.request_id === "string" ? `request ${msg.request_id}` : ""].filter(Boolean).join(", ");
  const text = ids ? `${said} (${ids})` : said;
  const status = typeof msg.status_code === "number" ? msg.status_code : undefined;
  const options = { service: ctx.service, url: ctx.url };
  if (status === 429 || /concurren|rate.?limit|too many/i.test(text)) {
    return new AtCapacityError(`${ctx.service} at ${ctx.url} is at capacity or rate-limited ("${text}"); try again later`, options);
  }
  if (status === 401 || status === 403) {
    return new ConfigError(`${ctx.service} at ${ctx.url} refused the credentials ("${text}"); check the token function (an access token with the tts grant)`, options);
  }
  return new BargeinError(`${ctx.service} at ${ctx.url} reported an error${status ? ` (${status})` : ""}: ${text}`, options);
}
