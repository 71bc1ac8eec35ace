// ElevenLabs multi-context TTS, as its docs describe it: each sequence of
// test/contract/sequences/elevenlabs.mjs against the emulator over a real local socket, and the
// docs' messages through the SDK's parser (elevenlabs-tts.ts). scripts/check-live.mjs replays the
// sequences against the live service.
//   https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elevenlabsParser } from "../../src/providers/elevenlabs-tts.js";
import server from "../fixtures/elevenlabs/server-messages.json" with { type: "json" };
import { elevenlabsSequences } from "./sequences/elevenlabs.mjs";

const KEY = "contract-elevenlabs-key";
const ctx = { service: "elevenlabs", url: "ws://contract" };
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY, recogniser: false });
});
afterAll(() => backend?.close());

const emulator = () => ({ url: `${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input?model_id=eleven_flash_v2_5&output_format=pcm_16000&pace=0`, auth: { headers: { "xi-api-key": KEY } } });

describe("ElevenLabs: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(elevenlabsSequences)) {
    test(name, async () => {
      const { checks, messages } = await run(emulator());
      expect(checks.filter((c) => !c.ok)).toEqual([]);
      const parse = elevenlabsParser("ctx_a", 16000);
      for (const m of messages) expect(() => parse(JSON.stringify(m), ctx)).not.toThrow();
    });
  }
});

describe("ElevenLabs: the SDK reads the documented messages", () => {
  test("the alignment's durations in either spelling: charsDurationsMs (the reference) and charDurationsMs (the service as clients see it)", () => {
    for (const example of [server.audioOutput, server.audioOutputDocumented]) {
      const parse = elevenlabsParser("conv_1", 16000);
      const events = [...(parse(JSON.stringify(example), ctx) ?? []), ...(parse(JSON.stringify(server.finalOutput), ctx) ?? [])];
      expect(events.filter((e) => e.kind === "audio")).toHaveLength(1);
      expect(events.filter((e) => e.kind === "text").map((e) => (e as { text: string }).text)).toEqual(["Hell"]);
      expect(events.at(-1)).toEqual({ kind: "done" });
    }
  });
});
