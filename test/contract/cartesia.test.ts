// Cartesia TTS, as its docs describe it: each sequence of test/contract/sequences/cartesia.mjs against
// the emulator over a real local socket, and the docs' messages through the SDK's parser
// (cartesia-tts.ts). scripts/check-live.mjs replays the sequences against the live service.
//   https://docs.cartesia.ai/api-reference/tts/websocket
//   https://docs.cartesia.ai/use-the-api/api-errors
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { cartesiaParser } from "../../src/providers/cartesia-tts.js";
import server from "../fixtures/cartesia/server-messages.json" with { type: "json" };
import { cartesiaSequences } from "./sequences/cartesia.mjs";

const KEY = "contract-cartesia-key";
const ctx = { service: "cartesia", url: "ws://contract" };
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY, recogniser: false });
});
afterAll(() => backend?.close());

const emulator = () => ({ url: (version: string) => `${backend.wsUrl}/tts/websocket?cartesia_version=${version}&pace=0`, auth: { headers: { "X-API-Key": KEY } } });

describe("Cartesia: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(cartesiaSequences)) {
    test(name, async () => {
      const { checks } = await run(emulator());
      expect(checks.filter((c) => !c.ok)).toEqual([]);
    });
  }
});

describe("Cartesia: the SDK reads the documented errors", () => {
  test("each documented error shape fails the stream with the service's words (title and message, or error), its code and request id", () => {
    const parse = () => cartesiaParser("50dc3b5e-5841-4aa1-9f94-60cfb9aead79", "s16le", 16000);
    expect(() => parse()(JSON.stringify(server.error), ctx)).toThrow(/Invalid model: The model is not valid/);
    expect(() => parse()(JSON.stringify(server.errorV2026), ctx)).toThrow(/Invalid model: The model is not valid.*model_not_found.*request 550e8400/);
  });
});
