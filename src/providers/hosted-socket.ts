/**
 * What the hosted TTS providers (ElevenLabs, Cartesia) share: their sockets
 * send nothing when they open (no Ready message), so start-up is the open
 * itself, bounded by a timeout; their text goes out in pieces that the
 * service concatenates verbatim; their messages are JSON objects.
 */
import { ServiceTimeoutError } from "../errors.js";
import { timeout } from "../util/timeout.js";
import { MessageSocket, type MessageSocketOptions } from "./message-socket.js";
import { fetchToken, serviceUrl } from "./service-url.js";
import { parseJsonFrame, protocolError, type WireContext } from "./wire.js";

/**
 * Opens a socket and resolves once it is open. Rejects with
 * ServiceTimeoutError when it did not open within `connectTimeoutMs`,
 * ConnectionClosedError when the handshake failed (a refused token looks the
 * same to a browser: it cannot read the HTTP status), or the signal's reason.
 */
export async function openHostedSocket<T>(
  options: MessageSocketOptions<T>,
  connectTimeoutMs: number,
  signal?: AbortSignal,
): Promise<MessageSocket<T>> {
  const opening = timeout(connectTimeoutMs, signal);
  try {
    return await MessageSocket.open(options, opening.signal);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (opening.expired) {
      throw new ServiceTimeoutError(`${options.service}: ${options.safeUrl} did not open within ${connectTimeoutMs} ms`, {
        service: options.service,
        url: options.safeUrl,
        timeoutMs: connectTimeoutMs,
      });
    }
    throw err;
  } finally {
    opening.clear();
  }
}

/** The socket options both hosted TTS providers take. */
export interface HostedSocketOptions {
  /** Largest inbound message, in bytes (default 1 MiB: a second of 24 kHz PCM is about 64 kB of base64). */
  maxMessageBytes?: number;
  /** The socket must open within this, in ms (default 5000). */
  connectTimeoutMs?: number;
}

/** Where a hosted TTS socket goes: the token (from the page's token function, once per socket) rides in the query as `secret`. */
export interface TokenSocket {
  base: string;
  path: string;
  query: (token: string | undefined) => Record<string, string | undefined>;
  secret: string;
  token: (() => Promise<string>) | undefined;
  maxMessageBytes: number;
  connectTimeoutMs: number;
}

/** A provider's TokenSocket: its options over its defaults. */
export function tokenSocket(
  options: HostedSocketOptions & { url?: string; token?: () => Promise<string> },
  defaults: { url: string; maxMessageBytes: number; connectTimeoutMs: number },
  where: Pick<TokenSocket, "path" | "secret" | "query">,
): TokenSocket {
  const { url = defaults.url, maxMessageBytes = defaults.maxMessageBytes, connectTimeoutMs = defaults.connectTimeoutMs, token } = options;
  return { ...where, base: url, token, maxMessageBytes, connectTimeoutMs };
}

/** Fetches a token and opens the socket with it, as openHostedSocket does. */
export async function openTokenSocket<T>(
  o: TokenSocket & Pick<MessageSocketOptions<T>, "service" | "decode">,
  signal?: AbortSignal,
): Promise<MessageSocket<T>> {
  const token = await fetchToken(o.token, signal);
  const endpoint = serviceUrl(o.base, o.path, o.query(token), { websocket: true, secrets: [o.secret] });
  const options = { service: o.service, url: endpoint.url, safeUrl: endpoint.safeUrl, maxMessageBytes: o.maxMessageBytes, decode: o.decode };
  return openHostedSocket(options, o.connectTimeoutMs, signal);
}

/**
 * The session sends whole words without spaces; both services concatenate
 * what they get verbatim (ElevenLabs asks for text that ends with a space),
 * so each piece gets one trailing space unless it already ends in whitespace.
 */
export function spokenPiece(text: string): string {
  return /\s$/.test(text) ? text : `${text} `;
}

/** Parses a JSON text frame into a plain object (not an array, not null). */
export function decodeJsonObject(data: ArrayBuffer | string, ctx: WireContext): Readonly<Record<string, unknown>> {
  const value = parseJsonFrame(data, ctx);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw protocolError(ctx, "a message is not a JSON object");
  }
  return value as Record<string, unknown>;
}

/** Reads an optional array of finite numbers; a wrong type is a ProtocolError naming `what`. */
export function finiteNumbers(value: unknown, ctx: WireContext, what: string): number[] {
  if (!Array.isArray(value) || !value.every((x) => typeof x === "number" && Number.isFinite(x))) {
    throw protocolError(ctx, `${what} should be an array of numbers`);
  }
  return value as number[];
}

/** Reads an array of strings; a wrong type is a ProtocolError naming `what`. */
export function strings(value: unknown, ctx: WireContext, what: string): string[] {
  if (!Array.isArray(value) || !value.every((x) => typeof x === "string")) {
    throw protocolError(ctx, `${what} should be an array of strings`);
  }
  return value as string[];
}
