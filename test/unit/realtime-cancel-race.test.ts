// OpenAI Realtime answers a response.cancel that finds no response in progress with an `error` event,
// code response_cancel_not_active (https://platform.openai.com/docs/api-reference/realtime-server-events/error;
// the reference emulator sends the same, demo/server/emulators/openai-realtime.mjs). A cancel crosses its
// response's end on the wire whenever the service finishes it, or (stalled) had not begun it, while the
// cancel is in flight: what the cancel asked for holds, so the session gets no error for it. Any other
// error event still reaches the app. A scripted server on a real local socket (`ws`), speaking just the
// events this needs.
import { afterEach, expect, test } from "vitest";
import { WebSocketServer } from "ws";
import { openaiRealtime } from "../../src/providers/openai-realtime.js";

let server: WebSocketServer | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

const serverError = (code: string, message: string) =>
  JSON.stringify({ type: "error", event_id: "event_890", error: { type: "invalid_request_error", code, message, param: null, event_id: "bargein_cancel_7" } });

test("a response_cancel_not_active error is not the session's error; another error event is", async () => {
  server = new WebSocketServer({ port: 0, handleProtocols: (protocols) => [...protocols][0] ?? false });
  server.on("connection", (ws) => {
    ws.send(JSON.stringify({ type: "session.created", event_id: "event_1", session: {} }));
    ws.on("message", (data) => {
      if (JSON.parse(String(data)).type !== "session.update") return;
      ws.send(JSON.stringify({ type: "session.updated", event_id: "event_2", session: {} }));
      ws.send(serverError("response_cancel_not_active", "Cancellation failed: no active response found"));
      ws.send(serverError("invalid_value", "Invalid value: 'x'."));
    });
  });
  await new Promise((resolve) => server!.once("listening", resolve));
  const port = (server.address() as { port: number }).port;
  const provider = openaiRealtime({ url: `ws://127.0.0.1:${port}/v1/realtime`, model: "gpt-realtime", token: async () => "ek_test" });
  const errors: string[] = [];
  provider.on!("error", (e) => errors.push(e.error.message));
  const stream = await provider.stt.connect();
  try {
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toMatch(/refused a client event: "Invalid value: 'x'\." \(invalid_request_error, invalid_value\)/);
    expect(errors.join()).not.toMatch(/no active response/);
  } finally {
    await stream.close();
  }
});
