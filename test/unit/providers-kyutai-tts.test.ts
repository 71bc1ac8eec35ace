import { afterEach, describe, expect, test } from "vitest";
import { ConnectionClosedError, ProtocolError } from "../../src/errors.js";
import { kyutaiTts } from "../../src/providers/kyutai-tts.js";
import type { TtsEvent } from "../../src/providers/types.js";
import { collect, rejectionOf, startWsServer, type Connection, type TestWsServer } from "./providers-servers.js";

let server: TestWsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function tts(script: (conn: Connection) => void | Promise<void>): Promise<TestWsServer> {
  server = await startWsServer(async (conn) => {
    conn.sendMsgpack({ type: "Ready" });
    await script(conn);
  });
  return server;
}

const ramp = (n: number, scale: number) => Array.from({ length: n }, (_, i) => Math.fround((i / n) * scale));

describe("kyutaiTts", () => {
  test("asks for PcmMessagePack with the voice and token, sends Text then Eos, and ends on the normal close", async () => {
    const frame = ramp(1920, 0.5);
    const srv = await tts(async (conn) => {
      const text = await conn.next();
      expect(await conn.next()).toEqual({ type: "Eos" });
      conn.sendMsgpack({ type: "Text", text: text.text, start_s: 0.1, stop_s: 0.4 });
      conn.sendMsgpack({ type: "Audio", pcm: frame });
      conn.sendMsgpack({ type: "Audio", pcm: frame.map((s) => -s) });
      conn.socket.close(1000);
    });
    const stream = await kyutaiTts({ urls: srv.url, voice: "expresso/ex03.wav", token: async () => "t0k" }).connect();
    const url = new URL(srv.connections[0].request.url!, "ws://x");
    expect(url.pathname).toBe("/api/tts_streaming");
    expect(url.searchParams.get("format")).toBe("PcmMessagePack");
    expect(url.searchParams.get("voice")).toBe("expresso/ex03.wav");
    expect(url.searchParams.get("auth_id")).toBe("t0k");
    stream.sendText("Hello there.");
    stream.end();
    const events = await collect(stream.events());
    expect(srv.connections[0].received[0]).toEqual({ type: "Text", text: "Hello there." });
    expect(events[0]).toEqual<TtsEvent>({ kind: "text", text: "Hello there.", startS: 0.1, stopS: 0.4 });
    const audio = events.slice(1) as Extract<TtsEvent, { kind: "audio" }>[];
    expect(audio.map((e) => [e.kind, e.sampleRate, e.pcm.length])).toEqual([
      ["audio", 24000, 1920],
      ["audio", 24000, 1920],
    ]);
    expect(Array.from(audio[0].pcm)).toEqual(frame);
    expect(audio[1].pcm[1919]).toBeCloseTo(-frame[1919], 6);
  });

  test("an abnormal close after Eos throws ConnectionClosedError after the audio already received", async () => {
    const srv = await tts(async (conn) => {
      await conn.next();
      conn.sendMsgpack({ type: "Audio", pcm: ramp(1920, 0.1) });
      setTimeout(() => conn.socket.terminate(), 20);
    });
    const stream = await kyutaiTts({ urls: srv.url }).connect();
    stream.end();
    const seen: TtsEvent[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const e of stream.events()) seen.push(e);
      })(),
    );
    expect(seen).toHaveLength(1);
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect((err as ConnectionClosedError).closeCode).toBe(1006);
  });

  test("an Audio message without pcm samples is a ProtocolError", async () => {
    const srv = await tts((conn) => conn.sendMsgpack({ type: "Audio", pcm: "loud" }));
    const stream = await kyutaiTts({ urls: srv.url }).connect();
    const err = (await rejectionOf(collect(stream.events()))) as ProtocolError;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/Audio\.pcm/);
    expect(err.service).toBe("tts");
  });

  test("closing mid-stream (barge-in) ends the server's connection and the iteration", async () => {
    const srv = await tts(async (conn) => {
      await conn.next();
      const timer = setInterval(() => conn.sendMsgpack({ type: "Audio", pcm: ramp(1920, 0.2) }), 10);
      conn.socket.on("close", () => clearInterval(timer));
    });
    const stream = await kyutaiTts({ urls: srv.url }).connect();
    stream.sendText("A long answer that the user will interrupt.");
    let frames = 0;
    for await (const e of stream.events()) {
      if (e.kind === "audio" && ++frames === 3) await stream.close();
    }
    expect(frames).toBeGreaterThanOrEqual(3);
    expect(await srv.connections[0].closed).toBe(1000);
    expect(() => stream.sendText("more")).toThrow(ConnectionClosedError);
  });
});
