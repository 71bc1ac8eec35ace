// Deepgram, as its docs describe it: each sequence of test/contract/sequences/deepgram.mjs against the
// emulator over a real local socket, and the SDK's provider (deepgramStt) through the close handshake.
// scripts/check-live.mjs replays the sequences against the live service.
//   https://developers.deepgram.com/docs/flux/configure
//   https://developers.deepgram.com/docs/close-stream
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { deepgramStt } from "../../src/providers/deepgram-stt.js";
import type { SttEvent } from "../../src/providers/types.js";
import { deepgramSequences, helpMe } from "./sequences/deepgram.mjs";

const KEY = "contract-deepgram-key";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

const emulator = () => ({ base: backend.wsUrl, auth: { protocols: ["token", KEY] } });

describe("Deepgram: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(deepgramSequences)) {
    test(name, async (ctx) => {
      if (name.includes("Nova") && !backend.health().stt.recogniser) ctx.skip();
      const { checks } = await run(emulator());
      expect(checks.filter((c) => !c.ok)).toEqual([]);
    });
  }
});

describe("Deepgram: the SDK through the documented close handshake", () => {
  test("deepgramStt's close() waits for the final Results and Metadata that CloseStream promises: the speech's words arrive", async (ctx) => {
    if (!backend.health().stt.recogniser) ctx.skip();
    const stt = deepgramStt({ urls: `${backend.wsUrl}/v1/listen`, token: async () => KEY, tokenKind: "token", sampleRate: 16000 });
    const stream = await stt.connect();
    const events: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stream.events()) events.push(e);
    })();
    stream.sendAudio(helpMe());
    await stream.close();
    await reading;
    const words = events.flatMap((e) => (e.kind === "word" ? [e.text.toLowerCase().replace(/[^a-z]/g, "")] : []));
    expect(words).toEqual(["can", "you", "help", "me"]);
  });
});
