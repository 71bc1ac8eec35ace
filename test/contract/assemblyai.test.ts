// AssemblyAI Universal-Streaming v3, as its docs describe it: the close handshake of
// test/contract/sequences/assemblyai.mjs against the emulator over a real local socket.
// scripts/check-live.mjs replays the sequence against the live service.
//   https://www.assemblyai.com/docs/streaming/universal-streaming/message-sequence
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { assemblyaiSequences } from "./sequences/assemblyai.mjs";

const KEY = "contract-assemblyai-key";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

describe("AssemblyAI: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(assemblyaiSequences)) {
    test(name, async (ctx) => {
      if (!backend.health().stt.recogniser) ctx.skip();
      const { checks } = await run({ base: backend.wsUrl, auth: { headers: { Authorization: KEY } } });
      expect(checks.filter((c) => !c.ok)).toEqual([]);
    });
  }
});
