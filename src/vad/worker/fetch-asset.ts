/**
 * Fetches one asset into memory, reporting bytes as they arrive. Worker thread
 * (uses only fetch and streams, so it also runs on the main thread or in Node).
 * Failures reject with AssetFetchFailure, which names the URL.
 */
export class AssetFetchFailure extends Error {
  constructor(
    readonly url: string,
    message: string,
  ) {
    super(message);
  }
}

/** `cached`: on the last report only, whether the bytes came from the browser's HTTP cache (see fromHttpCache). */
export type ProgressFn = (loaded: number, total: number, cached?: boolean) => void;

export async function fetchAsset(url: string, onProgress: ProgressFn, signal?: AbortSignal): Promise<ArrayBuffer> {
  let response: Response;
  try {
    response = await fetch(url, { signal });
  } catch (err) {
    throw new AssetFetchFailure(url, `could not fetch ${url}: ${(err as Error)?.message ?? err}`);
  }
  if (!response.ok) {
    throw new AssetFetchFailure(url, `${url} answered HTTP ${response.status}`);
  }
  // Dev servers and SPA hosts answer a missing file with their index.html and 200.
  if ((response.headers.get("content-type") ?? "").includes("text/html")) {
    void response.body?.cancel().catch(() => {});
    throw new AssetFetchFailure(url, `${url} answered an HTML page, not the file (a fallback page for a missing file?)`);
  }
  // A compressed answer (Content-Encoding br or gzip): Content-Length counts the bytes on the wire,
  // while the stream gives the file's own, so there is no total until the end. A cross-origin
  // server may hide its Content-Encoding; a stream that outgrows the length says so as well.
  const encoding = response.headers.get("content-encoding");
  let total = encoding && encoding !== "identity" ? 0 : Number(response.headers.get("content-length") ?? 0) || 0;
  if (!response.body) {
    const bytes = await response.arrayBuffer();
    onProgress(bytes.byteLength, bytes.byteLength, await fromHttpCache(response.url || url));
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  onProgress(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    if (loaded > total) total = 0;
    onProgress(loaded, total);
  }
  // The last report has the file's whole size as its total, however it came.
  onProgress(loaded, loaded, await fromHttpCache(response.url || url));
  const out = new Uint8Array(loaded);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out.buffer;
}

/**
 * Whether the browser served `url`'s body from its HTTP cache, by its
 * Resource Timing entry: fewer bytes crossed the network than the body has
 * (0 for a fresh cache hit, a few hundred header bytes for a 304
 * revalidation). Undefined when the browser does not say: no entry (no
 * Resource Timing here, as in Node), or a cross-origin asset served without
 * Timing-Allow-Origin, whose sizes read 0.
 */
async function fromHttpCache(url: string): Promise<boolean | undefined> {
  const perf = (globalThis as { performance?: Performance }).performance;
  if (typeof perf?.getEntriesByName !== "function") return undefined;
  const absolute = new URL(url, (globalThis as { location?: { href: string } }).location?.href).href;
  let entry = perf.getEntriesByName(absolute, "resource").at(-1) as PerformanceResourceTiming | undefined;
  // The entry is queued when the body ends, which can be a task after the stream says done.
  if (!entry) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    entry = perf.getEntriesByName(absolute, "resource").at(-1) as PerformanceResourceTiming | undefined;
  }
  if (!entry || !(entry.encodedBodySize > 0)) return undefined;
  return entry.transferSize < entry.encodedBodySize;
}

/** True when `bytes` starts with the WebAssembly magic number "\0asm". */
export function looksLikeWasm(bytes: ArrayBuffer): boolean {
  const b = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  return b.length === 4 && b[0] === 0x00 && b[1] === 0x61 && b[2] === 0x73 && b[3] === 0x6d;
}
