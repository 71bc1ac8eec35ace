// Gemini Live, as the Live API reference describes it: each sequence of test/contract/sequences/gemini.mjs
// against the emulator over a real local socket. scripts/check-live.mjs replays them against the live service.
//   https://ai.google.dev/api/live
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { geminiSequences } from "./sequences/gemini.mjs";

const KEY = "contract-gemini-key";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY, recogniser: false });
});
afterAll(() => backend?.close());

const PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";

describe("Gemini Live: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(geminiSequences)) {
    test(name, async () => {
      const { checks } = await run({ url: `${backend.wsUrl}${PATH}?key=${KEY}`, auth: {}, model: "models/gemini-live-2.5-flash-preview" });
      expect(checks.filter((c) => !c.ok)).toEqual([]);
    });
  }
});
