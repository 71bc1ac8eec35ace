/**
 * The reference server sends a file's pre-compressed copy (scripts/precompress.mjs: FILE.br,
 * FILE.gz) to a browser that accepts its encoding, with the file's own Content-Type and caching,
 * and the file as it is to one that does not; either way the bytes the browser ends up with are
 * the file's, byte for byte.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createStaticHandler } from "../../demo/server/static.mjs";
import { precompress } from "../../scripts/precompress.mjs";

const MODEL = "node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let root: string;
let servers: Server[] = [];
let model: Buffer;
let wasm: Buffer;

/** GET (or HEAD) `path` with these request headers, from a static handler over `root`. */
async function ask(path: string, headers: Record<string, string> = {}, { method = "GET", precompressed = true } = {}): Promise<Answer> {
  const handle = createStaticHandler(root, ["dist"], { precompressed });
  const server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The body as the browser decodes it, by its Content-Encoding. */
function decoded(a: Answer): Buffer {
  const encoding = a.headers["content-encoding"];
  if (encoding === "br") return brotliDecompressSync(a.body);
  if (encoding === "gzip") return gunzipSync(a.body);
  expect(encoding).toBeUndefined();
  return a.body;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "bargein-static-"));
  mkdirSync(join(root, "dist"));
  copyFileSync(MODEL, join(root, "dist/silero_vad_v5.onnx"));
  // A wasm file's header and a body that compresses, like onnxruntime's (the real one takes seconds to compress).
  wasm = Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), readFileSync(MODEL).subarray(0, 300_000)]);
  writeFileSync(join(root, "dist/ort.wasm"), wasm);
  writeFileSync(join(root, "dist/plain.wasm"), wasm); // no copies made for this one
  model = readFileSync(join(root, "dist/silero_vad_v5.onnx"));
  precompress(join(root, "dist"), /^(silero_vad_v5\.onnx|ort\.wasm)$/);
});

afterAll(() => {
  for (const s of servers) s.close();
  servers = [];
  rmSync(root, { recursive: true, force: true });
});

describe("content negotiation on Accept-Encoding", () => {
  test("without Accept-Encoding: the file as it is, its own length and type, and Vary (it has copies)", async () => {
    const a = await ask("/dist/silero_vad_v5.onnx");
    expect(a.status).toBe(200);
    expect(a.headers["content-encoding"]).toBeUndefined();
    expect(a.headers["content-type"]).toBe("application/octet-stream");
    expect(a.headers["content-length"]).toBe(String(model.length));
    expect(a.headers.vary).toBe("Accept-Encoding");
    expect(a.headers["cache-control"]).toBe("no-cache");
    expect(a.headers["cross-origin-resource-policy"]).toBe("same-origin");
    expect(a.body.equals(model)).toBe(true);
  });

  test("a browser's Accept-Encoding gets the brotli copy: Content-Encoding br, its length, the file's type and caching, and the same bytes once decoded", async () => {
    const plain = await ask("/dist/silero_vad_v5.onnx");
    const a = await ask("/dist/silero_vad_v5.onnx", { "Accept-Encoding": "gzip, deflate, br, zstd" });
    expect(a.status).toBe(200);
    expect(a.headers["content-encoding"]).toBe("br");
    expect(a.headers["content-type"]).toBe("application/octet-stream");
    expect(a.headers.vary).toBe("Accept-Encoding");
    expect(a.headers["cache-control"]).toBe("no-cache");
    expect(Number(a.headers["content-length"])).toBe(a.body.length);
    expect(a.body.length).toBeLessThan(model.length);
    // Another representation, so another ETag (a cache must not answer one with the other).
    expect(a.headers.etag).toMatch(/-br"$/);
    expect(a.headers.etag).not.toBe(plain.headers.etag);
    expect(decoded(a).equals(model)).toBe(true);
  });

  test("gzip where brotli is not accepted (not named, or q=0); `*` stands for any encoding; identity alone gets the file", async () => {
    for (const header of ["gzip", "gzip, deflate", "br;q=0, gzip", "x-gzip"]) {
      const a = await ask("/dist/ort.wasm", { "Accept-Encoding": header });
      expect(a.headers["content-encoding"], header).toBe("gzip");
      expect(a.headers["content-type"], header).toBe("application/wasm");
      expect(Number(a.headers["content-length"]), header).toBe(a.body.length);
      expect(decoded(a).equals(wasm), header).toBe(true);
    }
    expect((await ask("/dist/ort.wasm", { "Accept-Encoding": "*" })).headers["content-encoding"]).toBe("br");
    for (const header of ["identity", "gzip;q=0, br;q=0", "deflate"]) {
      const a = await ask("/dist/ort.wasm", { "Accept-Encoding": header });
      expect(a.headers["content-encoding"], header).toBeUndefined();
      expect(a.headers["content-length"], header).toBe(String(wasm.length));
      expect(a.body.equals(wasm), header).toBe(true);
    }
  });

  test("HEAD says what GET would send, with no body", async () => {
    const a = await ask("/dist/ort.wasm", { "Accept-Encoding": "br" }, { method: "HEAD" });
    const brSize = readFileSync(join(root, "dist/ort.wasm.br")).length;
    expect(a.headers["content-encoding"]).toBe("br");
    expect(a.headers["content-length"]).toBe(String(brSize));
    expect(a.body.length).toBe(0);
  });

  test("revalidation: the copy's ETag gets a 304 (with Vary); the plain file's ETag does not match the copy", async () => {
    const first = await ask("/dist/silero_vad_v5.onnx", { "Accept-Encoding": "br" });
    const again = await ask("/dist/silero_vad_v5.onnx", { "Accept-Encoding": "br", "If-None-Match": String(first.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.headers.vary).toBe("Accept-Encoding");
    expect(again.body.length).toBe(0);
    const plain = await ask("/dist/silero_vad_v5.onnx");
    const other = await ask("/dist/silero_vad_v5.onnx", { "Accept-Encoding": "br", "If-None-Match": String(plain.headers.etag) });
    expect(other.status).toBe(200);
    expect(decoded(other).equals(model)).toBe(true);
  });

  test("a file with no copies, a copy older than its file (a rebuild under way), and `precompressed: false` are sent as they are", async () => {
    const none = await ask("/dist/plain.wasm", { "Accept-Encoding": "br, gzip" });
    expect(none.headers["content-encoding"]).toBeUndefined();
    expect(none.headers.vary).toBeUndefined();
    expect(none.body.equals(wasm)).toBe(true);
    const off = await ask("/dist/ort.wasm", { "Accept-Encoding": "br, gzip" }, { precompressed: false });
    expect(off.headers["content-encoding"]).toBeUndefined();
    expect(off.body.equals(wasm)).toBe(true);
    const past = new Date(Date.now() - 60_000);
    for (const ext of ["br", "gz"]) utimesSync(join(root, `dist/ort.wasm.${ext}`), past, past);
    const stale = await ask("/dist/ort.wasm", { "Accept-Encoding": "br, gzip" });
    expect(stale.headers["content-encoding"]).toBeUndefined();
    expect(stale.body.equals(wasm)).toBe(true);
  });
});

describe("precompress()", () => {
  test("writes .br and .gz that decode to the file, and rewrites them only when the file changed", () => {
    const dir = join(root, "again");
    mkdirSync(dir);
    writeFileSync(join(dir, "a.js"), "export const a = 1;\n".repeat(500));
    const [first] = precompress(dir);
    expect(first).toMatchObject({ file: "a.js", bytes: 10_000, rewritten: true });
    expect(brotliDecompressSync(readFileSync(join(dir, "a.js.br"))).toString()).toBe(readFileSync(join(dir, "a.js"), "utf8"));
    expect(gunzipSync(readFileSync(join(dir, "a.js.gz"))).toString()).toBe(readFileSync(join(dir, "a.js"), "utf8"));
    expect(precompress(dir)[0].rewritten).toBe(false);
    writeFileSync(join(dir, "a.js"), "export const a = 2;\n".repeat(500));
    expect(precompress(dir)[0].rewritten).toBe(true);
    expect(gunzipSync(readFileSync(join(dir, "a.js.gz"))).toString()).toContain("a = 2");
  });
});
