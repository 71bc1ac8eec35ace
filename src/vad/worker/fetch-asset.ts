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

export type ProgressFn = (loaded: number, total: number) => void;

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
  const total = Number(response.headers.get("content-length") ?? 0) || 0;
  if (!response.body) {
    const bytes = await response.arrayBuffer();
    onProgress(bytes.byteLength, total);
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
    onProgress(loaded, total);
  }
  const out = new Uint8Array(loaded);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out.buffer;
}

/** True when `bytes` starts with the WebAssembly magic number "\0asm". */
export function looksLikeWasm(bytes: ArrayBuffer): boolean {
  const b = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  return b.length === 4 && b[0] === 0x00 && b[1] === 0x61 && b[2] === 0x73 && b[3] === 0x6d;
}
