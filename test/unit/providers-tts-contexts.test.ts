/**
 * The streaming-TTS base (src/providers/tts-contexts.ts) through both of its
 * providers' `session()`, against a scripted `ws` server that plays the
 * service: one socket carries every reply; a reply closed mid-way (barge-in)
 * cancels its own context only, and what the server still sends for it never
 * reaches the next reply; a socket the server closed between replies is
 * opened again by the next one; the session's close closes the socket.
 */
import { describe, expect, test } from "vitest";
import { cartesiaTts } from "../../src/providers/cartesia-tts.js";
import { elevenlabsTts } from "../../src/providers/elevenlabs-tts.js";
import type { TtsEvent, TtsProvider } from "../../src/providers/types.js";
import { collect, startWsServer, type Connection } from "./providers-servers.js";

const pcm = (value: number, n = 4) => Buffer.from(Int16Array.from({ length: n }, () => value).buffer).toString("base64");

/** Each service's spelling: an audio chunk and the end of a context, from the server; a cancel, from the client. */
const services: Record<string, { provider: (url: string) => TtsProvider; audio: (id: string, value: number) => unknown; last: (id: string) => unknown; isCancel: (m: Record<string, unknown>) => boolean; isEnd: (m: Record<string, unknown>) => boolean }> = {
  elevenlabsTts: {
    provider: (url) => elevenlabsTts({ voiceId: "v", url }),
    audio: (id, value) => ({ audio: pcm(value), contextId: id }),
    last: (id) => ({ isFinal: true, contextId: id }),
    isCancel: (m) => m.close_context === true,
    isEnd: (m) => m.close_context === true,
  },
  cartesiaTts: {
    provider: (url) => cartesiaTts({ voiceId: "v", url }),
    audio: (id, value) => ({ type: "chunk", data: pcm(value), context_id: id }),
    last: (id) => ({ type: "done", context_id: id }),
    isCancel: (m) => m.cancel === true,
    isEnd: (m) => m.continue === false,
  },
};

const levels = (events: TtsEvent[]) => events.flatMap((e) => (e.kind === "audio" ? [...new Set(Array.from(e.pcm, (x) => Math.round(x * 32768)))] : []));

/** The next message of `conn` that `is` picks, skipping others. */
async function until(conn: Connection, is: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const m = await conn.next();
    if (is(m)) return m;
  }
}

describe.each(Object.keys(services))("%s session()", (name) => {
  const s = services[name];

  test("a reply closed mid-way cancels its context only: the socket stays, and the next reply gets none of the cut one's audio", async () => {
    const srv = await startWsServer(async (conn) => {
      const a = (await until(conn, (m) => typeof m.context_id === "string")).context_id as string;
      conn.sendJson(s.audio(a, 1000));
      await until(conn, (m) => m.context_id === a && s.isCancel(m));
      const b = (await until(conn, (m) => typeof m.context_id === "string" && m.context_id !== a)).context_id as string;
      // What the service had already sent for the cut context arrives after the next one opened.
      conn.sendJson(s.audio(a, 1111));
      conn.sendJson(s.audio(b, 2000));
      conn.sendJson(s.audio(a, 1112));
      conn.sendJson(s.last(a));
      await until(conn, (m) => m.context_id === b && s.isEnd(m));
      conn.sendJson(s.audio(b, 2001));
      conn.sendJson(s.last(b));
    });
    try {
      const session = s.provider(srv.url).session!();
      const first = await session.connect();
      first.sendText("A long answer");
      const firstEvents: TtsEvent[] = [];
      for await (const e of first.events()) {
        firstEvents.push(e);
        await first.close(); // the barge-in, after its first chunk
      }
      expect(levels(firstEvents)).toEqual([1000]);
      const second = await session.connect();
      second.sendText("Sure.");
      second.end();
      expect(levels(await collect(second.events()))).toEqual([2000, 2001]);
      expect(srv.connections).toHaveLength(1);
      await session.close();
      expect(await srv.connections[0].closed).toBe(1000);
      await expect(session.connect()).rejects.toThrow(/session is closed/);
    } finally {
      await srv.close();
    }
  });

  test("a socket the service closed between replies (its idle timeout) is opened again by the next reply", async () => {
    const srv = await startWsServer(async (conn) => {
      const id = (await until(conn, (m) => typeof m.context_id === "string")).context_id as string;
      await until(conn, (m) => m.context_id === id && s.isEnd(m));
      conn.sendJson(s.audio(id, 3000 + srv.connections.length));
      conn.sendJson(s.last(id));
      if (srv.connections.length === 1) setTimeout(() => conn.socket.close(1000), 20);
    });
    try {
      const session = s.provider(srv.url).session!();
      for (const expected of [3001, 3002]) {
        const stream = await session.connect();
        stream.sendText("Hi.");
        stream.end();
        expect(levels(await collect(stream.events()))).toEqual([expected]);
        await srv.connections[0].closed;
      }
      expect(srv.connections).toHaveLength(2);
      await session.close();
    } finally {
      await srv.close();
    }
  });
});

test("elevenlabsTts session(): cancelled contexts count until their isFinal; at the service's 5, the next reply takes a new socket and the old one is closed", async () => {
  const srv = await startWsServer(async (conn) => {
    for (;;) {
      const m = await conn.next();
      // Each context's opening gets one chunk; a cut context never gets its isFinal (a slow service).
      if (m.text === " ") conn.sendJson(services.elevenlabsTts.audio(m.context_id as string, 4000));
    }
  });
  try {
    const session = services.elevenlabsTts.provider(srv.url).session!();
    for (let i = 0; i < 6; i++) {
      const stream = await session.connect();
      stream.sendText("Hello");
      const iterator = stream.events()[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toMatchObject({ kind: "audio" });
      await stream.close();
    }
    expect(srv.connections).toHaveLength(2);
    expect(await srv.connections[0].closed).toBe(1000);
    await session.close();
  } finally {
    await srv.close();
  }
});
