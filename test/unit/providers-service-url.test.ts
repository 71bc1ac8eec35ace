import { expect, test } from "vitest";
import { serviceUrl } from "../../src/providers/service-url.js";

test("the endpoint path is joined on the pathname, keeping the base's query (the backend's knobs)", () => {
  const { url, safeUrl } = serviceUrl("http://h:1/?capacity=2", "/api/asr-streaming", { auth_id: "s3cr3t", voice: undefined }, {
    websocket: true,
    secrets: ["auth_id"],
  });
  expect(url).toBe("ws://h:1/api/asr-streaming?capacity=2&auth_id=s3cr3t");
  expect(safeUrl).toBe("ws://h:1/api/asr-streaming?capacity=2&auth_id=***");
  expect(safeUrl).not.toContain("s3cr3t");
});

test("a base that already ends with the path is not doubled; https maps to wss", () => {
  expect(serviceUrl("https://x.example/api/tts_streaming/", "/api/tts_streaming", {}, { websocket: true }).url).toBe(
    "wss://x.example/api/tts_streaming",
  );
  expect(serviceUrl("http://h:8080/v1", "/chat/completions", {}).url).toBe("http://h:8080/v1/chat/completions");
});

test("a token function that never answers does not hold up an aborted connect", async () => {
  const { kyutaiStt } = await import("../../src/providers/kyutai-stt.js");
  const controller = new AbortController();
  const connecting = kyutaiStt({ urls: "ws://127.0.0.1:9", token: () => new Promise<string>(() => {}) }).connect(controller.signal);
  setTimeout(() => controller.abort(), 20);
  await expect(connecting).rejects.toHaveProperty("name", "AbortError");
});
