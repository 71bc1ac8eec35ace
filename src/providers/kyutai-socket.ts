/**
 * What the two Kyutai providers (moshi-server ASR and TTS) share: msgpack maps
 * tagged by `type`, a start-up that waits for `Ready`, and `Error{message}`,
 * where "no free channels" means the instance is at capacity.
 */
import { AtCapacityError, BargeinError, ConnectionClosedError } from "../errors.js";
import { MessageSocket } from "./message-socket.js";
import type { ServiceUrl } from "./service-url.js";
import { decodeMsgpack, protocolError, stringField, type TaggedMessage, type WireContext } from "./wire.js";

/** The sample rate of every Kyutai model's audio. */
export const KYUTAI_SAMPLE_RATE = 24_000;

/** The error a Kyutai `Error{message}` stands for. */
export function kyutaiServerError(msg: TaggedMessage, ctx: WireContext): BargeinError {
  const text = stringField(msg, "message", ctx);
  const options = { service: ctx.service, url: ctx.url };
  if (/no free channels/i.test(text)) {
    return new AtCapacityError(`${ctx.service} at ${ctx.url} is at capacity ("${text}")`, options);
  }
  return new BargeinError(`${ctx.service} at ${ctx.url} reported an error: ${text}`, options);
}

/**
 * Opens a Kyutai socket and resolves once the server sent `Ready`. Rejects
 * with AtCapacityError on "no free channels", ProtocolError on anything else
 * first, and closes the socket whenever it rejects (abort included).
 */
export async function openKyutaiSocket(
  service: string,
  endpoint: ServiceUrl,
  maxMessageBytes: number | undefined,
  signal: AbortSignal | undefined,
): Promise<MessageSocket<TaggedMessage>> {
  const socket = await MessageSocket.open(
    { service, url: endpoint.url, safeUrl: endpoint.safeUrl, maxMessageBytes, decode: decodeMsgpack },
    signal,
  );
  try {
    const first = await socket.next(signal);
    if (first.done) {
      throw new ConnectionClosedError(`${service}: ${endpoint.safeUrl} closed the connection before it was ready`, {
        service,
        url: endpoint.safeUrl,
      });
    }
    if (first.value.type === "Ready") return socket;
    if (first.value.type === "Error") throw kyutaiServerError(first.value, socket.ctx);
    throw protocolError(socket.ctx, `expected Ready or Error first, got ${first.value.type}`);
  } catch (err) {
    await socket.close();
    throw err;
  }
}

/** What every Kyutai service (STT, TTS) takes: where it is, how to authenticate, and discovery limits. */
export interface KyutaiServiceOptions {
  /** Instance base URLs, e.g. "ws://127.0.0.1:8080"; the service's path is appended unless present. */
  urls: string | readonly string[];
  /** Returns a short-lived token, sent as `auth_id`. Called once per `connect()`. */
  token?: () => Promise<string>;
  /** The endpoint path (default: the service's: "/api/asr-streaming" or "/api/tts_streaming"). */
  path?: string;
  /** Largest inbound message, in bytes (default 1 MiB). */
  maxMessageBytes?: number;
  /** Each instance must say Ready within this, in ms (default 500). */
  startupTimeoutMs?: number;
  /** At most this many instances are tried per attempt (default 3). */
  maxTries?: number;
  /** The random source for the instance shuffle (default Math.random). */
  random?: () => number;
}
