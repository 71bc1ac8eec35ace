// The spoken turn of `npm run check:live` (test/contract/live-turn.ts) against the emulators, so that
// npm test covers what the live check runs: a barge-in on each speech-to-speech service, the final
// words of each STT, a cut and a second reply on each TTS. The words, the events and their order.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { emulatorTarget, spokenTurn, STT_WORDS, type Service, type TurnResult } from "./live-turn.js";

const KEY = "contract-live-turn-key";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

const turn = (service: Service): Promise<TurnResult> => spokenTurn(service, emulatorTarget(service, backend, KEY));
const failed = (r: TurnResult) => r.checks.filter((c) => !c.ok);
/** The observed lines that match, in order, as their patterns. */
const inOrder = (observed: string[], patterns: RegExp[]) => patterns.map((p) => observed.findIndex((o) => p.test(o)));

// One at a time: side by side, the two rigs' real-time mics (their emulator runs in this process)
// starved each other on a busy 2-core machine. The STT and TTS halves run side by side after them.
describe("the spoken turn with a barge-in, speech to speech", () => {
  for (const service of ["openai", "gemini"] as const) {
    test(service, { timeout: 60_000 }, async () => {
      const r = await turn(service);
      expect(failed(r)).toEqual([]);
      const cut = service === "openai" ? [/^sent response\.cancel$/, /^sent conversation\.item\.truncate$/] : [/^sent realtimeInput\.activityStart$/];
      const at = inOrder(r.observed, [/^connected$/, /first audio \(0\.3 s played\)/, /^says "please stop" over the reply$/, /^interruption \(.*\), heard: ".+"$/, ...cut, /second reply's first audio/, /^history assistant: .+/]);
      expect(at.every((i) => i >= 0), r.observed.join("\n")).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      const history = r.observed.filter((o) => o.startsWith("history "));
      expect(history.map((h) => h.split(":")[0])).toEqual(["history user", "history assistant (interrupted)", "history user", "history assistant"]);
      expect(history[0]).toMatch(/tell me a long story/i);
      expect(history[2]).toMatch(/please stop/i);
    });
  }
});

// The STT and TTS halves side by side.
describe.concurrent("the spoken turn's halves: an STT's final words, a TTS reply cut and a second one", () => {
  for (const service of ["deepgram", "assemblyai"] as const) {
    test(`STT ${service}: the fixture's final words`, async (ctx) => {
      if (!backend.health().stt.recogniser) ctx.skip();
      const r = await turn(service);
      expect(failed(r)).toEqual([]);
      expect(r.observed.at(-1)?.toLowerCase().replace(/[^a-z" ]/g, "")).toBe(`final words "${STT_WORDS}"`);
    });
  }
  for (const service of ["elevenlabs", "cartesia"] as const) {
    test(`TTS ${service}: a reply cut after its first audio, then a second one`, async () => {
      const r = await turn(service);
      expect(failed(r)).toEqual([]);
      const at = inOrder(r.observed, [/^connected/, /^the first reply's first audio$/, /^cut \(close\)$/, /^nothing after the cut$/, /^the second reply: \d+\.\d s of audio/]);
      expect(at.every((i) => i >= 0), r.observed.join("\n")).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    });
  }
});
