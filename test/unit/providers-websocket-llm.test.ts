import { afterEach, describe, expect, test } from "vitest";
import { BargeinError, ConfigError, ConnectionClosedError, ProtocolError } from "../../src/errors.js";
import { websocketLlm } from "../../src/providers/websocket-llm.js";
import { collect, rejectionOf, startWsServer, type Connection, type TestWsServer } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

let server: TestWsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "Hello?" },
];

/** Streams `words` as deltas after response.create, one every `everyMs`, unless cancelled. */
function responder(words: string[], everyMs = 5) {
  return async (conn: Connection) => {
    const create = await conn.next();
    if (create.type !== "response.create") return;
    conn.sendJson({ type: "response.created", response: { id: "r1" } });
    let cancelled = false;
    void conn.next().then((m) => (cancelled = m.type === "response.cancel"));
    for (const delta of words) {
      if (cancelled || conn.socket.readyState !== 1) return;
      conn.sendJson({ type: "response.output_text.delta", delta });
      await sleep(everyMs);
    }
    conn.sendJson({ type: "response.completed", response: { id: "r1" } });
  };
}

describe("websocketLlm", () => {
  test("sends response.create with the messages and yields the deltas until response.completed", async () => {
    server = await startWsServer(responder(["Hi", " there", "."]));
    const llm = websocketLlm({ url: `${server.url}/v1/responses`, model: "eliza", token: async () => "tq" });
    expect(await collect(llm.stream(messages))).toEqual(["Hi", " there", "."]);
    const conn = server.connections[0];
    expect(new URL(conn.request.url!, "ws://x").searchParams.get("auth_id")).toBe("tq");
    expect(conn.received[0]).toEqual({ type: "response.create", response: { model: "eliza", input: messages } });
    expect(await conn.closed).toBe(1000); // one socket per reply, closed once complete
  });

  test("aborting mid-stream sends response.cancel, then closes the socket", async () => {
    server = await startWsServer(responder(Array.from({ length: 100 }, (_, i) => `w${i} `), 10));
    const controller = new AbortController();
    const seen: unknown[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const d of websocketLlm({ url: server!.url }).stream(messages, controller.signal)) {
          seen.push(d);
          if (seen.length === 2) controller.abort();
        }
      })(),
    );
    expect(err).toHaveProperty("name", "AbortError");
    expect(seen).toEqual(["w0 ", "w1 "]);
    const conn = server.connections[0];
    expect(await conn.closed).toBe(1000);
    expect(conn.received.map((m) => m.type)).toEqual(["response.create", "response.cancel"]);
  });

  test("the token can travel as a subprotocol instead of the query", async () => {
    let offered: string[] = [];
    server = await startWsServer(responder(["ok"]), {
      handleProtocols: (protocols) => {
        offered = [...protocols];
        return offered[0] ?? false;
      },
    });
    const llm = websocketLlm({ url: server.url, token: async () => "abc123", tokenIn: "subprotocol" });
    expect(await collect(llm.stream(messages))).toEqual(["ok"]);
    expect(offered).toEqual(["bearer.abc123"]);
    expect(server.connections[0].request.url).toBe("/");
    expect(() => websocketLlm({ url: server!.url, tokenIn: "header" as never })).toThrow(ConfigError);
  });

  test("an error event ends the stream with a BargeinError carrying the server's message", async () => {
    server = await startWsServer(async (conn) => {
      await conn.next();
      conn.sendJson({ type: "response.output_text.delta", delta: "Hmm" });
      conn.sendJson({ type: "error", error: { message: "overloaded, try later" } });
    });
    const seen: unknown[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const d of websocketLlm({ url: server!.url }).stream(messages)) seen.push(d);
      })(),
    );
    expect(seen).toEqual(["Hmm"]);
    expect(err).toBeInstanceOf(BargeinError);
    expect((err as Error).message).toContain("overloaded, try later");
  });

  test("invalid JSON, and a frame above maxMessageBytes, are ProtocolErrors", async () => {
    server = await startWsServer(async (conn) => {
      await conn.next();
      conn.socket.send("{oops");
    });
    expect(await rejectionOf(collect(websocketLlm({ url: server.url }).stream(messages)))).toBeInstanceOf(ProtocolError);
    await server.close();
    server = await startWsServer(async (conn) => {
      await conn.next();
      conn.sendJson({ type: "response.output_text.delta", delta: "z".repeat(3000) });
    });
    const err = await rejectionOf(collect(websocketLlm({ url: server.url, maxMessageBytes: 1024 }).stream(messages)));
    expect(err).toBeInstanceOf(ProtocolError);
  });

  test("a socket dropped before response.completed is a ConnectionClosedError", async () => {
    server = await startWsServer(async (conn) => {
      await conn.next();
      conn.sendJson({ type: "response.output_text.delta", delta: "Half" });
      setTimeout(() => conn.socket.terminate(), 20);
    });
    const err = await rejectionOf(collect(websocketLlm({ url: server.url }).stream(messages)));
    expect(err).toBeInstanceOf(ConnectionClosedError);
  });
});

test("a token that is not a valid subprotocol is a ConfigError that does not quote the token", async () => {
  const err = (await rejectionOf(
    collect(websocketLlm({ url: "ws://127.0.0.1:9", token: async () => "has space/secret", tokenIn: "subprotocol" }).stream(messages)),
  )) as Error;
  expect(err).toBeInstanceOf(ConfigError);
  expect(err.message).not.toContain("secret");
});
