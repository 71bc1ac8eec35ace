// The VAD worker's asset fetch: progress in bytes as the body streams, and a
// failure that names the URL. Runs the real fetch against a local HTTP server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetFetchFailure, fetchAsset, looksLikeWasm } from "../../src/vad/worker/fetch-asset.js";

const BODY = Buffer.alloc(300_000, 7);
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/model.onnx") {
      res.writeHead(200, { "Content-Length": String(BODY.length) });
      // Three writes, so the body arrives in more than one chunk.
      res.write(BODY.subarray(0, 100_000));
      setTimeout(() => {
        res.write(BODY.subarray(100_000, 200_000));
        res.end(BODY.subarray(200_000));
      }, 20);
    } else if (req.url === "/model-br.onnx") {
      // Pre-compressed, as the reference server sends it: Content-Length is the compressed body's.
      const br = brotliCompressSync(BODY);
      res.writeHead(200, { "Content-Length": String(br.length), "Content-Encoding": "br" });
      res.write(br.subarray(0, 10));
      setTimeout(() => res.end(br.subarray(10)), 20);
    } else {
      res.writeHead(404).end("nope");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("fetchAsset", () => {
  it("returns every byte and reports rising progress up to the total", async () => {
    const progress: [number, number][] = [];
    const bytes = await fetchAsset(`${base}/model.onnx`, (loaded, total) => progress.push([loaded, total]));
    expect(bytes.byteLength).toBe(BODY.length);
    expect(Buffer.from(bytes).equals(BODY)).toBe(true);
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.at(-1)).toEqual([BODY.length, BODY.length]);
    for (let i = 1; i < progress.length; i++) expect(progress[i][0]).toBeGreaterThanOrEqual(progress[i - 1][0]);
  });

  it("a compressed answer: the file's bytes, no total while they come (Content-Length counts the wire's), and the file's size as the last total", async () => {
    const progress: [number, number][] = [];
    const bytes = await fetchAsset(`${base}/model-br.onnx`, (loaded, total) => progress.push([loaded, total]));
    expect(Buffer.from(bytes).equals(BODY)).toBe(true);
    expect(progress.slice(0, -1).every(([, total]) => total === 0)).toBe(true);
    expect(progress.at(-1)).toEqual([BODY.length, BODY.length]);
  });

  it("rejects with the URL and the HTTP status on a missing file", async () => {
    const err = await fetchAsset(`${base}/silero_vad_v9.onnx`, () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(AssetFetchFailure);
    expect(err.url).toBe(`${base}/silero_vad_v9.onnx`);
    expect(err.message).toContain("404");
  });

  it("rejects with the URL when nothing answers", async () => {
    const err = await fetchAsset("http://127.0.0.1:1/x.wasm", () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(AssetFetchFailure);
    expect(err.url).toBe("http://127.0.0.1:1/x.wasm");
  });
});

describe("looksLikeWasm", () => {
  it("accepts the \\0asm magic and rejects HTML, WAV and short buffers", () => {
    expect(looksLikeWasm(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).buffer)).toBe(true);
    expect(looksLikeWasm(new TextEncoder().encode("<!doctype html>").buffer)).toBe(false);
    expect(looksLikeWasm(new TextEncoder().encode("RIFF....WAVE").buffer)).toBe(false);
    expect(looksLikeWasm(new Uint8Array([0, 0x61]).buffer)).toBe(false);
  });
});
