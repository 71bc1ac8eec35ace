import { raceAbort } from "../util/abort.js";

/**
 * Builds a service endpoint URL from an instance URL, and keeps a copy that
 * is safe to put in errors: query parameters that carry secrets are redacted.
 */

export interface ServiceUrl {
  /** The URL to connect to; may hold a token. Never log it. */
  readonly url: string;
  /** The same URL with secret parameters replaced by "***", for errors and logs. */
  readonly safeUrl: string;
}

/**
 * Joins `path` onto `base` unless base already ends with it, maps http(s) to
 * ws(s) when `websocket` is set, and appends `params` (undefined values are
 * left out). Parameters named in `secrets` are redacted in `safeUrl`.
 */
export function serviceUrl(
  base: string,
  path: string,
  params: Record<string, string | undefined>,
  options: { websocket?: boolean; secrets?: readonly string[] } = {},
): ServiceUrl {
  // Join on the pathname so a base with a query ("ws://h:1?capacity=2") keeps it.
  const url = new URL(base);
  const pathname = url.pathname.replace(/\/+$/, "");
  url.pathname = path === "" || pathname.endsWith(path) ? pathname || "/" : pathname + path;
  if (options.websocket) {
    if (url.protocol === "http:") url.protocol = "ws:";
    else if (url.protocol === "https:") url.protocol = "wss:";
  }
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(key, value);
  }
  const safe = new URL(url);
  for (const key of options.secrets ?? []) {
    if (safe.searchParams.has(key)) safe.searchParams.set(key, "***");
  }
  return { url: url.toString(), safeUrl: safe.toString() };
}

/** The URL list an option takes as one URL or many, checked to be non-empty. */
export function urlList(urls: string | readonly string[]): string[] {
  return typeof urls === "string" ? [urls] : [...urls];
}

/**
 * Calls a token function, giving up as soon as `signal` aborts (a token
 * function takes no signal, and may be a slow request to the app's server).
 */
export async function fetchToken(token: (() => Promise<string>) | undefined, signal?: AbortSignal): Promise<string | undefined> {
  signal?.throwIfAborted();
  if (!token) return undefined;
  return raceAbort(token(), signal);
}
