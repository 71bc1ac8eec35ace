import { encode } from "@msgpack/msgpack";
import { afterEach, describe, expect, test } from "vitest";
import { AtCapacityError, BargeinError, ConnectionClosedError, ProtocolError } from "../../src/errors.js";
import { kyutaiStt } from "../../src/providers/kyutai-stt.js";
import type { SttEvent } from "../../src/providers/types.js";
import { collect, rejectionOf, startWsServer, type Connection, type TestWsServer } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

let server: TestWsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A moshi-like ASR: Ready, then `script` for each connection. */
async function asr(script: (conn: Connection) => void | Promise<void> = () => {}): Promise<TestWsServer> {
  server = await startWsServer(async (conn) => {
    conn.sendMsgpack({ type: "Ready" });
    await script(conn);
  });
  return server;
}

describe("kyutaiStt", () => {
  test("connects to /api/asr-streaming with the token as auth_id, and reports 24 kHz float32", async () => {
    const srv = await asr();
    const stt = kyutaiStt({ urls: srv.url, token: async () => "tok-123" });
    expect(stt.audioFormat).toEqual({ sampleRate: 24000, encoding: "f32" });
    expect(stt.supportsGap).toBe(false);
    const stream = await stt.connect();
    const url = new URL(srv.connections[0].request.url!, "ws://x");
    expect(url.pathname).toBe("/api/asr-streaming");
    expect(url.searchParams.get("auth_id")).toBe("tok-123");
    await stream.close();
  });

  test("sendAudio puts Audio{pcm} on the wire as float32 and returns the exact bytes sent", async () => {
    const srv = await asr();
    const stream = await kyutaiStt({ urls: srv.url }).connect();
    const pcm = new Float32Array([0, 0.5, -0.25, 1, 0.1]);
    const bytes = stream.sendAudio(pcm);
    const ints = new Int16Array([16384, -32768, 0]);
    stream.sendAudio(ints);
    const conn = srv.connections[0];
    const first = await conn.next();
    const second = await conn.next();
    expect(first.type).toBe("Audio");
    expect(first.pcm).toEqual(Array.from(pcm)); // 0.1 survives as its float32 value
    expect(second.pcm).toEqual([0.5, -1, 0]);
    expect(bytes).toBe(conn.sizes[0]);
    // Every sample costs 5 bytes (float32 with its type byte), zeros included.
    expect(conn.sizes[0]).toBe(5 * pcm.length + encode({ type: "Audio", pcm: [] }).byteLength);
    expect(stream.bytesPerSample).toBe(5);
    await stream.close();
  });

  test("maps Word, EndWord, Step and Marker to events, with Unmute's pause head prs[2] after the warm-up", async () => {
    const srv = await asr((conn) => {
      conn.sendMsgpack({ type: "Step", step_idx: 0, prs: [0.9, 0.9, 0.9], buffered_pcm: 0 });
      conn.sendMsgpack({ type: "Word", text: "hello", start_time: 0.32 });
      conn.sendMsgpack({ type: "EndWord", stop_time: 0.71 });
      conn.sendMsgpack({ type: "Step", step_idx: 1, prs: [0.1, 0.2, 0.875], buffered_pcm: 1920 });
      conn.sendMsgpack({ type: "Marker", id: 7 });
      conn.socket.close(1000);
    });
    const stream = await kyutaiStt({ urls: srv.url, warmupSteps: 1 }).connect();
    const events = await collect(stream.events());
    expect(events).toEqual<SttEvent[]>([
      { kind: "word", text: "hello", startS: 0.32 },
      { kind: "word-end", stopS: 0.71 },
      { kind: "pause", probability: 0.875, stepIndex: 1 },
      { kind: "marker", id: 7 },
    ]);
  });

  test("flush resolves only once the server echoes its marker, after sending the silence padding", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const srv = await asr(async (conn) => {
      let padding = 0;
      for (;;) {
        const msg = await conn.next();
        if (msg.type === "Marker") {
          // Count the padding that follows the marker before answering.
          while (padding < 0.1 * 24000) padding += ((await conn.next()).pcm as number[]).length;
          await released;
          conn.sendMsgpack({ type: "Marker", id: msg.id });
        }
      }
    });
    const stream = await kyutaiStt({ urls: srv.url, flushPaddingS: 0.1 }).connect();
    stream.sendAudio(new Float32Array(480).fill(0.2));
    let flushed = false;
    const flush = stream.flush().then(() => (flushed = true));
    await sleep(50);
    expect(flushed).toBe(false);
    release();
    await flush;
    const received = srv.connections[0].received;
    expect(received.map((m) => m.type)).toEqual(["Audio", "Marker", "Audio", "Audio"]);
    // The session moves its replay's timeline on by this much (SpeechReplay.pad): word times count it.
    expect(stream.paddingSamples).toBe(2400);
    // 0.1 s of padding = 2400 samples = one 1920 frame + 480, all silence.
    expect(received.slice(2).map((m) => (m.pcm as number[]).length)).toEqual([1920, 480]);
    expect((received[2].pcm as number[]).every((s) => s === 0)).toBe(true);
    await stream.close();
  });

  test("an aborted flush rejects with the abort reason and leaves the stream usable", async () => {
    const srv = await asr();
    const stream = await kyutaiStt({ urls: srv.url, flushPaddingS: 0 }).connect();
    const controller = new AbortController();
    const flush = stream.flush(controller.signal);
    controller.abort();
    expect((await rejectionOf(flush)) as Error).toHaveProperty("name", "AbortError");
    expect(stream.sendAudio(new Float32Array(10))).toBeGreaterThan(50);
    await stream.close();
  });

  test("a flush pending when the connection drops rejects with ConnectionClosedError", async () => {
    const srv = await asr(async (conn) => {
      await conn.next();
      conn.socket.terminate();
    });
    const stream = await kyutaiStt({ urls: srv.url, flushPaddingS: 0 }).connect();
    expect(await rejectionOf(stream.flush())).toBeInstanceOf(ConnectionClosedError);
  });

  test("a malformed message ends the events with a ProtocolError naming the service and URL, never the token", async () => {
    const srv = await asr((conn) => conn.socket.send(Buffer.from([0xc1, 0x00, 0xff])));
    const stream = await kyutaiStt({ urls: srv.url, token: async () => "very-secret" }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.service).toBe("stt");
    expect(err.message).toContain(srv.url.replace("ws://", ""));
    expect(err.message).not.toContain("very-secret");
    expect(err.url).toContain("auth_id=***");
    expect(await srv.connections[0].closed).toBe(4002); // we hang up on a peer we no longer trust
  });

  test("msgpack without a type, or a Word without text, is a ProtocolError", async () => {
    for (const bad of [{ text: "no type" }, { type: "Word", start_time: 1 }]) {
      const srv = await asr((conn) => conn.sendMsgpack(bad));
      const stream = await kyutaiStt({ urls: srv.url }).connect();
      expect(await rejectionOf(collect(stream.events()))).toBeInstanceOf(ProtocolError);
      await srv.close();
    }
  });

  test("a message above maxMessageBytes is a ProtocolError that names the limit", async () => {
    const srv = await asr((conn) => conn.sendMsgpack({ type: "Word", text: "x".repeat(5000), start_time: 0 }));
    const stream = await kyutaiStt({ urls: srv.url, maxMessageBytes: 4096 }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as Error;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/exceeds the limit of 4096/);
    expect(await srv.connections[0].closed).toBe(4009);
  });

  test('"no free channels" at start-up is AtCapacityError, and the socket is closed', async () => {
    server = await startWsServer((conn) => conn.sendMsgpack({ type: "Error", message: "no free channels" }));
    const err = (await rejectionOf(kyutaiStt({ urls: server.url, maxTries: 1 }).connect())) as AtCapacityError;
    expect(err).toBeInstanceOf(AtCapacityError);
    expect(err.message).toContain(server.url);
    expect(await server.connections[0].closed).toBe(1000);
  });

  test("a connection dropped mid-stream (no close frame) throws ConnectionClosedError from events", async () => {
    const srv = await asr((conn) => {
      conn.sendMsgpack({ type: "Word", text: "half", start_time: 0 });
      setTimeout(() => conn.socket.terminate(), 20);
    });
    const stream = await kyutaiStt({ urls: srv.url }).connect();
    const seen: SttEvent[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const e of stream.events()) seen.push(e);
      })(),
    );
    expect(seen).toEqual([{ kind: "word", text: "half", startS: 0 }]);
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(() => stream.sendAudio(new Float32Array(4))).toThrow(ConnectionClosedError);
  });

  test("a server Error mid-stream ends events with a BargeinError carrying its message", async () => {
    const srv = await asr((conn) => conn.sendMsgpack({ type: "Error", message: "model crashed" }));
    const stream = await kyutaiStt({ urls: srv.url }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as Error;
    expect(err).toBeInstanceOf(BargeinError);
    expect(err.message).toContain("model crashed");
  });

  test("aborting the events iteration ends it without closing the stream; close() ends the server's connection", async () => {
    const srv = await asr();
    const stream = await kyutaiStt({ urls: srv.url }).connect();
    const controller = new AbortController();
    const reading = collect(stream.events(controller.signal));
    controller.abort();
    expect(await rejectionOf(reading)).toHaveProperty("name", "AbortError");
    stream.sendAudio(new Float32Array(4));
    expect((await srv.connections[0].next()).type).toBe("Audio");
    await stream.close();
    expect(await srv.connections[0].closed).toBe(1000);
  });

  test("aborting connect while the server has not said Ready closes the socket", async () => {
    server = await startWsServer(() => {});
    const controller = new AbortController();
    const connecting = kyutaiStt({ urls: server.url, startupTimeoutMs: 5000 }).connect(controller.signal);
    while (server.connections.length === 0) await sleep(5);
    // The server has the connection; give the client its open event too (before it, a close is a 1006 by the spec).
    await sleep(50);
    controller.abort();
    expect(await rejectionOf(connecting)).toHaveProperty("name", "AbortError");
    expect(await server.connections[0].closed).toBe(1000);
  });
});

test("flush on a closed stream throws ConnectionClosedError and leaves no pending marker behind", async () => {
  server = await startWsServer((conn) => conn.sendMsgpack({ type: "Ready" }));
  const stream = await kyutaiStt({ urls: server.url }).connect();
  await stream.close();
  expect(await rejectionOf(stream.flush())).toBeInstanceOf(ConnectionClosedError);
});
