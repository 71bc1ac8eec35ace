import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, test } from "vitest";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { openaiChat } from "../../src/providers/openai-chat.js";
import { collect, rejectionOf, startHttpServer, type TestHttpServer } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

let server: TestHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chunk = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

function sse(res: ServerResponse): void {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
}

const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "Hi!" },
];

describe("openaiChat", () => {
  test("POSTs a streaming chat completion with the bearer token and yields the deltas in order", async () => {
    server = await startHttpServer(async (_req, res) => {
      sse(res);
      for (const word of ["Hello", " there", ",", " friend."]) {
        res.write(chunk(word));
        await sleep(5);
      }
      // A chunk split across writes, and a keep-alive comment, must not confuse the parser.
      const last = chunk("", "stop");
      res.write(": keep-alive\n\n" + last.slice(0, 10));
      res.write(last.slice(10));
      res.end("data: [DONE]\n\n");
    });
    const llm = openaiChat({ url: `${server.url}/v1`, model: "m1", token: async () => "sk-short", temperature: 0.2, maxTokens: 64 });
    const deltas = await collect(llm.stream(messages));
    expect(deltas).toEqual(["Hello", " there", ",", " friend."]);
    const { request, body } = server.requests[0];
    expect(request.url).toBe("/v1/chat/completions");
    expect(request.method).toBe("POST");
    expect(request.headers.authorization).toBe("Bearer sk-short");
    expect(JSON.parse(body)).toEqual({ model: "m1", messages, stream: true, temperature: 0.2, max_tokens: 64 });
  });

  test("aborting mid-stream aborts the fetch: the server sees the request end unfinished", async () => {
    server = await startHttpServer(async (_req, res) => {
      sse(res);
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(chunk(`w${i} `));
        await sleep(10);
      }
      res.end("data: [DONE]\n\n");
    });
    const controller = new AbortController();
    const seen: unknown[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const d of openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages, controller.signal)) {
          seen.push(d);
          if (seen.length === 3) controller.abort();
        }
      })(),
    );
    expect(err).toHaveProperty("name", "AbortError");
    expect(seen).toEqual(["w0 ", "w1 ", "w2 "]);
    expect(await server.requests[0].ended).toBe("aborted");
  });

  test("breaking out of the loop also ends the request on the server", async () => {
    server = await startHttpServer(async (_req, res) => {
      sse(res);
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(chunk("x"));
        await sleep(10);
      }
      res.end();
    });
    for await (const _ of openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages)) break;
    expect(await server.requests[0].ended).toBe("aborted");
  });

  test.each([
    [401, ConfigError, /token was refused/],
    [404, ConfigError, /Check the `url`/],
    [429, AtCapacityError, /at capacity/],
    [503, AtCapacityError, /at capacity/],
    [500, BargeinError, /service failed/],
  ])("HTTP %i becomes a %o naming the URL and the server's message", async (status, type, hint) => {
    server = await startHttpServer((_req, res) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: `server says ${status}` } }));
    });
    const err = (await rejectionOf(
      collect(openaiChat({ url: `${server.url}/v1`, model: "m", token: async () => "secret-tok" }).stream(messages)),
    )) as BargeinError;
    expect(err).toBeInstanceOf(type);
    expect(err.message).toContain(`${server.url}/v1/chat/completions`);
    expect(err.message).toContain(`HTTP ${status}: server says ${status}`);
    expect(err.message).toMatch(hint);
    expect(err.message).not.toContain("secret-tok");
  });

  test("an error payload mid-stream is thrown after the deltas before it", async () => {
    server = await startHttpServer((_req, res) => {
      sse(res);
      res.write(chunk("Partial"));
      res.end(`data: ${JSON.stringify({ error: { message: "context length exceeded" } })}\n\n`);
    });
    const seen: unknown[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const d of openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages)) seen.push(d);
      })(),
    );
    expect(seen).toEqual(["Partial"]);
    expect(err).toBeInstanceOf(BargeinError);
    expect((err as Error).message).toContain("context length exceeded");
  });

  test('a chunk carrying `"error": null` (as some servers send) is not an error', async () => {
    server = await startHttpServer((_req, res) => {
      sse(res);
      const withNullError = (content: string) =>
        `data: ${JSON.stringify({ error: null, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
      res.write(withNullError("Fine"));
      res.write(withNullError(" here."));
      res.end("data: [DONE]\n\n");
    });
    const deltas = await collect(openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages));
    expect(deltas).toEqual(["Fine", " here."]);
  });

  test("malformed JSON in an event is a ProtocolError", async () => {
    server = await startHttpServer((_req, res) => {
      sse(res);
      res.end("data: {not json\n\n");
    });
    const err = await rejectionOf(collect(openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages)));
    expect(err).toBeInstanceOf(ProtocolError);
  });

  test("an event larger than maxEventBytes is a ProtocolError", async () => {
    server = await startHttpServer((_req, res) => {
      sse(res);
      res.end(chunk("y".repeat(10_000)));
    });
    const err = await rejectionOf(collect(openaiChat({ url: `${server.url}/v1`, model: "m", maxEventBytes: 4096 }).stream(messages)));
    expect(err).toBeInstanceOf(ProtocolError);
  });

  test("a response that breaks off before [DONE] is a ConnectionClosedError", async () => {
    server = await startHttpServer((_req, res) => {
      sse(res);
      res.write(chunk("Half"));
      setTimeout(() => res.destroy(), 20);
    });
    const err = await rejectionOf(collect(openaiChat({ url: `${server.url}/v1`, model: "m" }).stream(messages)));
    expect(err).toBeInstanceOf(ConnectionClosedError);
  });

  test("no response headers within responseTimeoutMs is a ServiceTimeoutError, and the request is aborted", async () => {
    server = await startHttpServer(() => {});
    const started = performance.now();
    const err = (await rejectionOf(
      collect(openaiChat({ url: `${server.url}/v1`, model: "m", responseTimeoutMs: 200 }).stream(messages)),
    )) as ServiceTimeoutError;
    expect(err).toBeInstanceOf(ServiceTimeoutError);
    expect(err.timeoutMs).toBe(200);
    expect(performance.now() - started).toBeLessThan(600);
    expect(await server.requests[0].ended).toBe("aborted");
  });

  test("an unreachable server is a ConnectionClosedError naming the URL", async () => {
    server = await startHttpServer(() => {});
    const url = server.url;
    await server.close();
    server = undefined;
    const err = (await rejectionOf(collect(openaiChat({ url: `${url}/v1`, model: "m" }).stream(messages)))) as Error;
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(err.message).toContain(`${url}/v1/chat/completions`);
  });
});
