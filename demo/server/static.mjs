// Static file handler shared by the demo server and the browser tests.
// Every response carries COOP/COEP/CORP so pages are crossOriginIsolated
// (SharedArrayBuffer works), and every HTML page is served under a strict
// Content-Security-Policy: the SDK must work with no 'unsafe-eval' and no blob:.
// A file with a pre-compressed copy beside it (FILE.br, FILE.gz: scripts/precompress.mjs) is sent
// as that copy to a browser that accepts its encoding, as nginx's gzip_static and brotli_static do.
import { createReadStream, statSync } from "node:fs";
import { pickVariant } from "./content-encoding.mjs";
import { extname, join, normalize, resolve, sep } from "node:path";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".onnx": "application/octet-stream",
  ".wav": "audio/wav",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".txt": "text/plain; charset=utf-8",
};

/** Large binary assets the browser may cache and revalidate by ETag. */
const CACHEABLE = new Set([".onnx", ".wasm"]);

export const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
].join("; ");

/** Headers every response gets, so that the page is crossOriginIsolated. */
export function isolationHeaders() {
  return {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

/**
 * Returns a request handler that serves files under `root`, limited to the
 * top-level folders in `allow`. Returns false when it did not handle the request.
 * A page can opt out of isolation with `?isolated=0`, to test the MessagePort path.
 * `precompressed: false` never sends a pre-compressed copy (the cold-start bench's baseline).
 * `onSent(pathname, bytes)`: each answer's body size as sent (0 for a 304 or a HEAD).
 */
export function createStaticHandler(root, allow = ["dist", "demo", "test", "bench"], { precompressed = true, onSent = undefined } = {}) {
  const rootDir = resolve(root);
  return function handleStatic(req, res) {
    const url = new URL(req.url ?? "/", "http://localhost");
    let pathname = decodeURIComponent(url.pathname);
    if (pathname === "/") pathname = "/demo/index.html";
    if (pathname.endsWith("/")) pathname += "index.html";
    const top = pathname.split("/")[1];
    if (!allow.includes(top)) return false;
    const file = normalize(join(rootDir, pathname));
    if (!file.startsWith(rootDir + sep)) return false;
    let stat;
    try {
      stat = statSync(file);
    } catch {
      return false;
    }
    if (!stat.isFile()) return false;
    const type = MIME[extname(file)] ?? "application/octet-stream";
    const isolation = url.searchParams.get("isolated") === "0" ? {} : isolationHeaders();
    // The VAD's model and onnxruntime's wasm (~16 MB) may be kept by the browser and revalidated
    // (a 304 costs a few hundred bytes), so that a second start is warm, as on a real site. Code
    // stays no-store: a rebuilt bundle is always fetched anew.
    const revalidated = CACHEABLE.has(extname(file));
    // A copy older than its file is from an earlier build (a rebuild is under way): not sent.
    const copyOf = (suffix) => {
      if (!precompressed) return false;
      try {
        return statSync(file + suffix).mtimeMs >= stat.mtimeMs;
      } catch {
        return false;
      }
    };
    const hasCopies = copyOf(".br") || copyOf(".gz");
    const variant = pickVariant(req.headers["accept-encoding"], copyOf);
    const body = variant ? file + variant.suffix : file;
    const size = variant ? statSync(body).size : stat.size;
    // One ETag per representation (RFC 9110 §8.8.3): the compressed copy is not the file's bytes.
    const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}${variant ? `-${variant.encoding}` : ""}"`;
    const vary = hasCopies ? { Vary: "Accept-Encoding" } : {};
    if (revalidated && req.headers["if-none-match"] === etag) {
      res.writeHead(304, { ETag: etag, "Cache-Control": "no-cache", ...vary, ...isolation });
      res.end();
      onSent?.(pathname, 0);
      return true;
    }
    const headers = {
      "Content-Type": type,
      "Content-Length": String(size),
      ...(variant ? { "Content-Encoding": variant.encoding } : {}),
      ...vary,
      "Cache-Control": revalidated ? "no-cache" : "no-store",
      ...(revalidated ? { ETag: etag } : {}),
      ...isolation,
    };
    if (type.startsWith("text/html")) headers["Content-Security-Policy"] = STRICT_CSP;
    res.writeHead(200, headers);
    if (req.method === "HEAD") res.end();
    else createReadStream(body).pipe(res);
    onSent?.(pathname, req.method === "HEAD" ? 0 : size);
    return true;
  };
}
