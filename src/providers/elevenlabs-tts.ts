/**
 * elevenlabsTts: ElevenLabs' multi-context TTS WebSocket,
 * `…/v1/text-to-speech/{voice_id}/multi-stream-input`
 * (https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input,
 * https://elevenlabs.io/docs/eleven-api/guides/how-to/websockets/multi-context-web-socket).
 *
 * A context per reply (tts-contexts.ts): `connect()` gives a socket of the
 * reply's own, `session()` one socket for the conversation ("one WebSocket
 * connection for each end-user session", the multi-context guide). JSON text frames:
 *   client → `{text:" ", context_id, voice_settings?}` (opens the context),
 *            `{text, context_id}` (each word, ending in a space),
 *            `{context_id, flush:true}` then `{context_id, close_context:true}` (end()),
 *            `{context_id, close_context:true}` (close(), barge-in; then the socket's
 *            close unless it is the session's)
 *   server → `{audio (base64 PCM), alignment?, normalizedAlignment?, contextId}`,
 *            `{isFinal:true, contextId}` (the context is done: events() ends),
 *            `{message, error, code}` (an error; the socket then closes with 1008)
 * Audio is `pcm_<rate>` (signed 16-bit little-endian, mono). Alignment gives
 * each character's start and duration in ms from the start of its own
 * chunk's audio; `alignWords` turns that into words on the stream's timeline.
 * `alignment` is preferred over `normalizedAlignment`: it spells the text we
 * sent ("3" stays "3"), so its words match the reply's words one to one.
 *
 * Auth: a single-use token (type `tts_websocket`, minted by your server with
 * `POST /v1/single-use-token/tts_websocket`, the API reference's "Create Single
 * Use Token": valid 15 minutes, consumed on first use) in the `single_use_token`
 * query parameter; the page never holds the API key.
 *
 * Not built on `@elevenlabs/elevenlabs-js`: that SDK is for servers (it takes
 * the API key) and would hide the per-chunk alignment and the socket's close,
 * which the heard-text cut and the barge-in need.
 */
import { DEFAULTS } from "../defaults.js";
import { AtCapacityError, BargeinError, ConfigError } from "../errors.js";
import { alignWords, flushWord, type AlignedWord, type CharAlignment } from "./char-alignment.js";
import { decodeJsonObject, finiteNumbers, strings, tokenSocket, type HostedSocketOptions } from "./hosted-socket.js";
import { PcmAssembler, base64Bytes } from "./pcm-base64.js";
import { connectContext, contextSession, type ContextEvent, type ContextWire } from "./tts-contexts.js";
import type { TtsProvider, TtsSession, TtsStream } from "./types.js";
import { protocolError, type WireContext } from "./wire.js";

/** The raw PCM output formats of the API (signed 16-bit little-endian at the named rate). */
export type ElevenlabsPcmFormat = "pcm_16000" | "pcm_22050" | "pcm_24000" | "pcm_44100";

/** `voice_settings` of the API, sent when the context opens. */
export interface ElevenlabsVoiceSettings {
  stability?: number;
  similarity_boost?: number;
  style?: number;
  use_speaker_boost?: boolean;
  speed?: number;
}

export interface ElevenlabsTtsOptions extends HostedSocketOptions {
  /** The voice, the `{voice_id}` of the path. Required. */
  voiceId: string;
  /** The API's base URL (default "wss://api.elevenlabs.io"; http(s) is mapped to ws(s)). */
  url?: string;
  /** `model_id` (default "eleven_flash_v2_5", the docs' low-latency model for agents). */
  modelId?: string;
  /**
   * `output_format` (default "pcm_24000": a raw format the player takes as is,
   * ample for speech, half the bytes of pcm_44100, and the rate of the SDK's other TTS).
   */
  outputFormat?: ElevenlabsPcmFormat;
  /** `language_code`, ISO 639-1, for the models that take one (default: none, the model decides). */
  languageCode?: string;
  /** `voice_settings`, sent with the message that opens the context (default: the voice's own). */
  voiceSettings?: ElevenlabsVoiceSettings;
  /** `inactivity_timeout` in seconds (the service's default is 20, at most 180). */
  inactivityTimeoutS?: number;
  /** Returns a single-use token (`tts_websocket`) from your server. Called once per socket: per reply with `connect()`, per conversation with `session()`. */
  token?: () => Promise<string>;
}

const SERVICE = "tts";
const FORMATS: Record<ElevenlabsPcmFormat, number> = { pcm_16000: 16000, pcm_22050: 22050, pcm_24000: 24000, pcm_44100: 44100 };

export function elevenlabsTts(options: ElevenlabsTtsOptions): TtsProvider {
  if (!options.voiceId) throw new ConfigError("elevenlabsTts: `voiceId` is required (the voice's id from ElevenLabs)", { service: SERVICE });
  const outputFormat = options.outputFormat ?? DEFAULTS.providers.elevenlabsTts.outputFormat;
  const sampleRate = FORMATS[outputFormat];
  if (!sampleRate) {
    throw new ConfigError(`elevenlabsTts: \`outputFormat\` must be one of ${Object.keys(FORMATS).join(", ")}; got ${String(outputFormat)}`, {
      service: SERVICE,
    });
  }
  const path = `/v1/text-to-speech/${encodeURIComponent(options.voiceId)}/multi-stream-input`;
  const send = (message: Record<string, unknown>) => JSON.stringify(message);
  const wire: ContextWire = {
    service: SERVICE,
    endWord: "final",
    maxContexts: 5,
    cancelEnds: false,
    socket: tokenSocket(options, DEFAULTS.providers.elevenlabsTts, {
      path,
      secret: "single_use_token",
      query: (token) => ({
        model_id: options.modelId ?? DEFAULTS.providers.elevenlabsTts.modelId,
        output_format: outputFormat,
        language_code: options.languageCode,
        inactivity_timeout: options.inactivityTimeoutS === undefined ? undefined : String(options.inactivityTimeoutS),
        single_use_token: token,
      }),
    }),
    parser: (contextId) => elevenlabsParser(contextId, sampleRate),
    opening: (contextId) => [send({ text: " ", context_id: contextId, ...(options.voiceSettings ? { voice_settings: options.voiceSettings } : {}) })],
    text: (contextId, text) => send({ text, context_id: contextId }),
    // Flush makes the service speak the text it still buffers; close_context then lets
    // that audio finish and ends the context with isFinal.
    ending: (contextId) => [send({ context_id: contextId, flush: true }), send({ context_id: contextId, close_context: true })],
    // Alone, close_context stops the context's generation (the buffered text is dropped).
    cancel: (contextId) => send({ context_id: contextId, close_context: true }),
  };
  return {
    name: "elevenlabs-tts",
    connect: (signal?: AbortSignal): Promise<TtsStream> => connectContext(wire, signal),
    session: (): TtsSession => contextSession(wire),
  };
}

/** What one server message becomes: text and audio events, in order, then `done` once the context is final. */
export type ElevenlabsEvent = ContextEvent;

/**
 * The parser of one stream's messages (its state: the audio received so far,
 * the word still open). Exported for the fuzz test; every malformed message
 * throws a ProtocolError, a service error its BargeinError.
 */
export function elevenlabsParser(contextId: string, sampleRate: number): (data: ArrayBuffer | string, ctx: WireContext) => ElevenlabsEvent[] | undefined {
  let samplesSoFar = 0;
  let open: AlignedWord | undefined;
  let final = false;
  const pcmOf = new PcmAssembler("s16le");
  return (data, ctx) => {
    const msg = decodeJsonObject(data, ctx);
    if (final) return undefined;
    if (msg.error !== undefined || (msg.message !== undefined && msg.audio === undefined && msg.isFinal === undefined && msg.is_final === undefined)) {
      if ((msg.error !== undefined && typeof msg.error !== "string") || (msg.message !== undefined && typeof msg.message !== "string")) {
        throw protocolError(ctx, "an error message should have string `error` and `message` fields");
      }
      throw elevenlabsServerError(msg, ctx);
    }
    const context = msg.contextId ?? msg.context_id;
    if (context !== undefined && context !== contextId) {
      if (typeof context !== "string") throw protocolError(ctx, "contextId should be a string");
      return undefined; // another context's message: not ours to play
    }
    const events: ElevenlabsEvent[] = [];
    const audio = msg.audio;
    if (audio !== undefined && audio !== null) {
      if (typeof audio !== "string") throw protocolError(ctx, "audio should be a base64 string");
      const pcm = pcmOf.push(base64Bytes(audio, ctx, "audio"), ctx, "audio");
      const alignment = readAlignment(msg.alignment ?? msg.normalizedAlignment, ctx);
      if (alignment) {
        const step = alignWords(open, alignment, samplesSoFar / sampleRate);
        open = step.open;
        for (const w of step.words) events.push({ kind: "text", ...w });
      }
      if (pcm.length > 0) events.push({ kind: "audio", pcm, sampleRate });
      samplesSoFar += pcm.length;
    }
    // The API reference spells it isFinal; some of the service's own guides show is_final.
    const isFinal = msg.isFinal ?? msg.is_final;
    if (isFinal !== undefined && isFinal !== null && typeof isFinal !== "boolean") {
      throw protocolError(ctx, "isFinal should be a boolean");
    }
    if (isFinal === true) {
      final = true;
      for (const w of flushWord(open)) events.push({ kind: "text", ...w });
      open = undefined;
      events.push({ kind: "done" });
    }
    return events.length > 0 ? events : undefined;
  };
}

function readAlignment(value: unknown, ctx: WireContext): CharAlignment | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw protocolError(ctx, "alignment should be an object");
  const a = value as Record<string, unknown>;
  const chars = strings(a.chars, ctx, "alignment.chars");
  const charStartTimesMs = finiteNumbers(a.charStartTimesMs, ctx, "alignment.charStartTimesMs");
  // The reference spells it charsDurationsMs; the service is seen to send charDurationsMs (clients read that). Either.
  // https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input
  const durationsKey = a.charDurationsMs === undefined && a.charsDurationsMs !== undefined ? "charsDurationsMs" : "charDurationsMs";
  const charDurationsMs = finiteNumbers(a[durationsKey], ctx, `alignment.${durationsKey}`);
  if (charStartTimesMs.length !== chars.length || charDurationsMs.length !== chars.length) {
    throw protocolError(ctx, `alignment has ${chars.length} chars but ${charStartTimesMs.length} start times and ${charDurationsMs.length} durations`);
  }
  return { chars, charStartTimesMs, charDurationsMs };
}

/**
 * `{message, error, code}`: too many concurrent requests or contexts, or a
 * rate limit, is AtCapacityError (try later); a refused key or token
 * ConfigError (fix the token function); anything else, an exhausted quota
 * included, the service's own error quoting its message.
 */
function elevenlabsServerError(msg: Readonly<Record<string, unknown>>, ctx: WireContext): BargeinError {
  const code = typeof msg.error === "string" ? msg.error : "";
  const text = typeof msg.message === "string" ? msg.message : code || "no message";
  const options = { service: ctx.service, url: ctx.url };
  const both = `${code} ${text}`;
  if (/max_active_conversations|concurren|rate.?limit|too.?many|capacity|system_busy/i.test(both)) {
    return new AtCapacityError(`${ctx.service} at ${ctx.url} is at capacity or rate-limited ("${text}"); try again later`, options);
  }
  if (/auth|api.?key|token|unauthori[sz]ed|permission/i.test(both)) {
    return new ConfigError(`${ctx.service} at ${ctx.url} refused the credentials ("${text}"); check the token function (a single-use tts_websocket token)`, options);
  }
  return new BargeinError(`${ctx.service} at ${ctx.url} reported an error: ${text}`, options);
}
