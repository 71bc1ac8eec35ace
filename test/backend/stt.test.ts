// The STT service speaks Kyutai's ASR protocol and recognises real speech (pocketsphinx).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { encode } from "@msgpack/msgpack";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { RecordingSocket, fixture24k, sendAudio, transcribe } from "./helpers";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false });
});
afterAll(() => backend?.close());

describe("STT /api/asr-streaming", () => {
  test("the recogniser is installed here (the other STT tests need it)", () => {
    expect(backend.health().stt.recogniser).toBe(true);
  });

  test("transcribes a spoken fixture word by word, with start times near the spoken words", async () => {
    const { pcm, meta } = await fixture24k("weather-question");
    const { words, endWords, steps } = await transcribe(backend.wsUrl, pcm);
    expect(words.map((w) => w.text).join(" ")).toBe("what is the weather like today");
    // Each word's start is within 0.25 s of where flite put it.
    words.forEach((w, i) => expect(Math.abs(w.start_time - meta.words[i].start)).toBeLessThan(0.25));
    // Every Word is closed by an EndWord that is after its start and before the next word's start.
    expect(endWords.length).toBe(words.length);
    endWords.forEach((e, i) => {
      expect(e.stop_time).toBeGreaterThan(words[i].start_time);
      if (i + 1 < words.length) expect(e.stop_time).toBeLessThanOrEqual(words[i + 1].start_time + 1e-6);
    });
    // One Step per 80 ms of audio (fixture plus 1 s of silence), numbered in order.
    const expectedSteps = Math.ceil((pcm.length + 24000) / 1920);
    expect(Math.abs(steps.length - expectedSteps)).toBeLessThanOrEqual(1);
    steps.forEach((s, i) => expect(s.step_idx).toBe(i));
  });

  test("words arrive while the audio streams, before the end of the utterance (partial results)", async () => {
    const { pcm } = await fixture24k("weather-question");
    const stt = new RecordingSocket(`${backend.wsUrl}/api/asr-streaming`);
    await stt.next("Ready");
    sendAudio(stt, pcm);
    // No trailing silence and no marker: the utterance has not ended, yet the stable words are out.
    await stt.until(() => stt.of("Word").length >= 3, 15_000, "3 words");
    expect(stt.of("Word").slice(0, 3).map((w) => w.text)).toEqual(["what", "is", "the"]);
    stt.close();
  });

  test("pause probabilities are high in silence and low while speech goes on", async () => {
    const { pcm, meta } = await fixture24k("weather-question");
    const { steps } = await transcribe(backend.wsUrl, pcm);
    const stepAt = (seconds: number) => steps[Math.floor(seconds / 0.08)];
    // Inside the speech (1.0–1.6 s) every horizon says "no pause".
    for (let t = 1.0; t < 1.6; t += 0.08) expect(stepAt(t).prs[2]).toBeLessThan(0.3);
    // In the second of silence after the speech, the pause is certain.
    const end = meta.samples / 16000;
    expect(stepAt(end + 0.9).prs[2]).toBeGreaterThan(0.9);
    expect(stepAt(end + 0.9).prs).toHaveLength(4);
  });

  test("a Marker comes back after the audio before it, and buffered_pcm drains to 0", async () => {
    const stt = new RecordingSocket(`${backend.wsUrl}/api/asr-streaming`);
    await stt.next("Ready");
    sendAudio(stt, new Float32Array(24000 * 0.5));
    stt.send({ type: "Marker", id: 1 });
    sendAudio(stt, new Float32Array(24000 * 0.5 + 100)); // not a whole number of frames
    stt.send({ type: "Marker", id: 2 });
    await stt.until(() => stt.of("Marker").length === 2, 10_000, "2 markers");
    const types = stt.messages.map((m) => m.message?.type);
    const marker1 = types.indexOf("Marker");
    // 0.5 s = 6.25 frames of 80 ms: the marker follows the 7th step (the partial frame is flushed).
    expect(types.slice(0, marker1).filter((t) => t === "Step").length).toBe(7);
    expect(stt.of("Marker").map((m) => m.id)).toEqual([1, 2]);
    expect(stt.of("Step").at(-1)!.buffered_pcm).toBe(0);
    stt.close();
  });

  test("accepts pcm as raw float32 bytes too, and answers an unknown message with an Error", async () => {
    const { pcm } = await fixture24k("help-me");
    const stt = new RecordingSocket(`${backend.wsUrl}/api/asr-streaming`);
    await stt.next("Ready");
    stt.ws.send(encode({ type: "Nonsense" }));
    for (let i = 0; i < pcm.length; i += 4800) {
      const chunk = pcm.slice(i, i + 4800);
      stt.send({ type: "Audio", pcm: new Uint8Array(chunk.buffer) });
    }
    stt.send({ type: "Audio", pcm: Array.from(new Float32Array(24000)) });
    stt.send({ type: "Marker", id: "end" });
    await stt.next("Marker", 20_000);
    expect(stt.of("Error")[0].message).toMatch(/unknown message type/);
    expect(stt.of("Word").map((w) => w.text).join(" ")).toBe("can you help me");
    stt.close();
  });
});

describe("STT without a recogniser", () => {
  test("says so in /api/health and answers each stream with an Error naming the install command", async () => {
    const bare = await startReferenceBackend({ serveStatic: false, recogniser: false });
    try {
      const health = await (await fetch(`${bare.url}/api/health`)).json();
      expect(health.stt.recogniser).toBe(false);
      expect(health.stt.install).toMatch(/apt-get install -y libpocketsphinx3 pocketsphinx-en-us/);
      const stt = new RecordingSocket(`${bare.wsUrl}/api/asr-streaming`);
      const closed = await stt.closed;
      expect(closed.code).toBe(1011);
      expect(stt.of("Error")[0].message).toMatch(/no speech recogniser.*apt-get install/);
    } finally {
      await bare.close();
    }
  });
});

describe("STT flush as the SDK does it", () => {
  let backend2: ReferenceBackend;
  beforeAll(async () => {
    backend2 = await startReferenceBackend({ serveStatic: false });
  });
  afterAll(() => backend2?.close());

  test("a Marker sent right after speech, then 0.5 s of silence, comes back after the last word", async () => {
    const { pcm } = await fixture24k("turn-on-lights");
    // Cut the fixture's trailing silence: the speech ends just before the marker.
    const speechEnd = Math.round((2.2 * 24000) / 1920) * 1920;
    const stt = new RecordingSocket(`${backend2.wsUrl}/api/asr-streaming`);
    await stt.next("Ready");
    sendAudio(stt, pcm.subarray(0, speechEnd));
    stt.send({ type: "Marker", id: "flush" });
    sendAudio(stt, new Float32Array(12000));
    await stt.next("Marker", 15_000);
    const types = stt.messages.map((m) => m.message?.type);
    const beforeMarker = stt.messages.slice(0, types.indexOf("Marker")).filter((m) => m.message?.type === "Word");
    expect(beforeMarker.map((m) => m.message!.text).join(" ")).toBe("please turn on the lights");
    stt.close();
  });
});
