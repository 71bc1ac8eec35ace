// Text → TTS (flite) → STT (pocketsphinx) → text, through the two services' sockets,
// with no microphone. Speech that the STT gets back word for word is real speech.
// A test of real recognition: the STT hears with pocketsphinx alone (known_speech=0), not the
// deterministic recogniser that knows the fixtures (two of these sentences are fixtures' words), and
// the assertion allows for a recogniser's variance (5 of 6).
import { afterAll, beforeAll, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { speak, transcribe } from "./helpers";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false });
});
afterAll(() => backend?.close());

const SENTENCES = [
  "what is the weather like today",
  "please turn on the lights",
  "i would like a cup of coffee",
  "thank you very much",
  "where is the station",
  "can you help me",
];

test("at least 5 of 6 sentences spoken by the TTS come back word-exact from the STT", async () => {
  const results: { sentence: string; heard: string; exact: boolean; audioS: number }[] = [];
  for (const sentence of SENTENCES) {
    const spoken = await speak(backend.wsUrl, sentence, "slt");
    expect(spoken.closed.code).toBe(1000);
    const { words } = await transcribe(backend.wsUrl, spoken.pcm, "?known_speech=0");
    const heard = words.map((w) => w.text).join(" ");
    results.push({ sentence, heard, exact: heard === sentence, audioS: spoken.pcm.length / 24000 });
  }
  console.table(results);
  expect(results.filter((r) => r.exact).length).toBeGreaterThanOrEqual(5);
}, 90_000);
