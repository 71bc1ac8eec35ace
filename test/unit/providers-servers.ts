/**
 * Small real servers for the provider tests: a `ws` WebSocket server and a
 * Node HTTP server on 127.0.0.1, each speaking exactly what a test scripts.
 * They run in the test process; the provider under test talks to them over
 * real loopback sockets through the browser `WebSocket` and `fetch` globals.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decode, encode } from "@msgpack/msgpack";
import { WebSocketServer, type WebSocket as WsSocket } from "ws";

export interface Connection {
  socket: WsSocket;
  request: IncomingMessage;
  /** Every frame received, decoded as msgpack (binary) or JSON (text). */
  received: Record<string, unknown>[];
  /** Raw sizes of the frames received, in bytes. */
  sizes: number[];
  /** Resolves with the close code once the connection ended, either side. */
  closed: Promise<number>;
  /** Resolves with the next decoded frame. */
  next(): Promise<Record<string, unknown>>;
  sendMsgpack(value: unknown): void;
  sendJson(value: unknown): void;
}

export interface TestWsServer {
  url: string;
  connections: Connection[];
  close(): Promise<void>;
}

/** A WebSocket server that calls `onConnection` for each client. */
export async function startWsServer(
  onConnection: (conn: Connection) => void | Promise<void>,
  options: { handleProtocols?: (protocols: Set<string>) => string | false } = {},
): Promise<TestWsServer> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", handleProtocols: options.handleProtocols });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const connections: Connection[] = [];
  wss.on("connection", (socket, request) => {
    const received: Record<string, unknown>[] = [];
    const sizes: number[] = [];
    // `next` reads frames in order through a cursor, whether they arrived before or after the call.
    let cursor = 0;
    let wake: (() => void) | undefined;
    const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
    socket.on("message", (data, isBinary) => {
      const buf = data as Buffer;
      sizes.push(buf.byteLength);
      const value = (isBinary ? decode(buf) : JSON.parse(buf.toString("utf8"))) as Record<string, unknown>;
      received.push(value);
      wake?.();
    });
    const conn: Connection = {
      socket,
      request,
      received,
      sizes,
      closed,
      next: async () => {
        while (cursor >= received.length) await new Promise<void>((resolve) => (wake = resolve));
        return received[cursor++];
      },
      sendMsgpack: (value) => socket.send(encode(value)),
      sendJson: (value) => socket.send(JSON.stringify(value)),
    };
    connections.push(conn);
    void onConnection(conn);
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

export interface TestHttpServer {
  url: string;
  requests: { request: IncomingMessage; body: string; ended: Promise<"finished" | "aborted"> }[];
  close(): Promise<void>;
}

/** An HTTP server; `handler` gets the parsed body. `ended` tells whether the client aborted. */
export async function startHttpServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>,
): Promise<TestHttpServer> {
  const requests: TestHttpServer["requests"] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const ended = new Promise<"finished" | "aborted">((resolve) => {
      res.on("finish", () => resolve("finished"));
      res.on("close", () => resolve(res.writableFinished ? "finished" : "aborted"));
    });
    requests.push({ request: req, body, ended });
    await handler(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Collects an async iterable into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Resolves with the rejection of `promise` (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection, but the promise resolved");
}

