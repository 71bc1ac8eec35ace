// The TTS service speaks Kyutai's TTS protocol with real flite speech, incrementally and paced.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { RecordingSocket, speak } from "./helpers";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false });
});
afterAll(() => backend?.close());

const ttsUrl = (query: string) => `${backend.wsUrl}/api/tts_streaming?format=PcmMessagePack&voice=slt&${query}`;

describe("TTS /api/tts_streaming", () => {
  test("speaks the text as 1920-sample 24 kHz frames with word timestamps, then closes normally", async () => {
    const text = "Hello there. How are you doing today?";
    const { frames, pcm, words, closed, socket } = await speak(backend.wsUrl, text);
    expect(socket.messages[0].message?.type).toBe("Ready");
    expect(closed.code).toBe(1000);
    expect(frames.length).toBeGreaterThan(10);
    for (const f of frames) expect(f.length).toBe(1920);
    // Real speech: about 2–4 s, loud in places, not clipped.
    const seconds = pcm.length / 24000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(5);
    const peak = pcm.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(peak).toBeGreaterThan(0.1);
    expect(peak).toBeLessThanOrEqual(1);
    // Every word once, in order, with increasing times inside the audio.
    expect(words.map((w) => w.text).join(" ")).toBe(text);
    for (let i = 0; i < words.length; i++) {
      expect(words[i].stop_s).toBeGreaterThan(words[i].start_s);
      if (i > 0) expect(words[i].start_s).toBeGreaterThanOrEqual(words[i - 1].stop_s - 1e-3);
    }
    expect(words.at(-1)!.stop_s).toBeLessThanOrEqual(seconds);
    // The first word starts where the audio first gets loud (within 60 ms).
    const firstLoud = pcm.findIndex((x) => Math.abs(x) > 0.02) / 24000;
    expect(Math.abs(words[0].start_s - firstLoud)).toBeLessThan(0.06);
  });

  test("synthesises as words arrive: audio comes before Eos is sent", async () => {
    const tts = new RecordingSocket(ttsUrl("pace=0"));
    await tts.next("Ready");
    for (const word of "This sentence ends here. And the next one".split(" ")) tts.send({ type: "Text", text: word });
    await tts.until(() => tts.of("Audio").length > 0, 5000, "audio before Eos");
    expect(tts.of("Text")[0].text).toBe("This");
    tts.send({ type: "Eos" });
    expect((await tts.closed).code).toBe(1000);
    expect(tts.of("Text").map((w) => w.text)).toEqual("This sentence ends here. And the next one".split(" "));
  });

  test("paces the audio: pace=1 with no burst takes about real time, pace=0 much less", async () => {
    const timed = async (query: string) => {
      const tts = new RecordingSocket(ttsUrl(query));
      await tts.opened;
      const sentAt = Date.now();
      tts.send({ type: "Text", text: "One two three four five six seven." });
      tts.send({ type: "Eos" });
      await tts.closed;
      const audio = tts.messages.filter((m) => m.message?.type === "Audio");
      // From the request, not from the first frame's arrival: on a loaded machine the first frames can
      // arrive late and bunched with the next, which shortened the span between arrivals (a clean-clone
      // CI run: 2,561 ms for 2,800 ms of audio), though no frame was sent early.
      return { wall: audio.at(-1)!.at - sentAt, seconds: (audio.length * 1920) / 24000 };
    };
    const paced = await timed("pace=1&burst_s=0");
    // Frame k is due k×80 ms after the first: the last comes no sooner than the audio's length less one
    // frame after the request. Not faster than real time is what pacing means; the upper bound is a sanity bound.
    expect(paced.wall).toBeGreaterThan((paced.seconds - 0.08) * 1000);
    expect(paced.wall).toBeLessThan(paced.seconds * 1000 * 3);
    // Unpaced, it takes what speaking the text takes (CPU: about a third of the paced time on a quiet machine,
    // more beside five other files); pacing adds at least half the audio's length to that.
    const fast = await timed("pace=0");
    expect(fast.wall).toBeLessThan(paced.wall - paced.seconds * 500);
  });

  test("counts a socket the client closes before the end", async () => {
    const before = backend.stats().tts.closedByClient;
    const tts = new RecordingSocket(ttsUrl("pace=1"));
    await tts.opened;
    tts.send({ type: "Text", text: "A long sentence that will not be heard to the end, because the client leaves." });
    tts.send({ type: "Eos" });
    await tts.until(() => tts.of("Audio").length > 2, 5000, "some audio");
    tts.close();
    await tts.closed;
    await expect.poll(() => backend.stats().tts.closedByClient, { timeout: 2000 }).toBe(before + 1);
    await expect.poll(() => backend.stats().tts.open, { timeout: 2000 }).toBe(0);
  });

  test("the voice query picks the flite voice (rms and slt sound different)", async () => {
    const slt = await speak(backend.wsUrl, "Good morning", "slt");
    const rms = await speak(backend.wsUrl, "Good morning", "rms");
    // Different speakers: the audio differs (not the same samples).
    const n = Math.min(slt.pcm.length, rms.pcm.length);
    let diff = 0;
    for (let i = 0; i < n; i++) diff += Math.abs(slt.pcm[i] - rms.pcm[i]);
    expect(diff / n).toBeGreaterThan(0.005);
  });
});

test("synthesising leaves no file descriptor open behind it (Node's WASI keeps its preopen open otherwise)", async () => {
  const { readdirSync } = await import("node:fs");
  const { synthesize } = await import("../../demo/server/flite.mjs");
  synthesize("warm up", "slt"); // compiles the module
  const open = () => readdirSync("/proc/self/fd").length;
  const before = open();
  for (let i = 0; i < 20; i++) synthesize(`sentence number ${i}`, i % 2 ? "rms" : "slt");
  expect(open() - before).toBe(0);
});

test("a process that synthesised and is then stopped by a signal leaves no folder in the temp dir", { timeout: 20_000 }, async () => {
  const { mkdtempSync, readdirSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { spawn } = await import("node:child_process");
  // A folder kept per process until "exit" was left by every backend stopped with SIGTERM (Playwright's
  // webServer, a bench's finally) and every vitest worker: 100 a day in /tmp on this machine.
  const temp = mkdtempSync(join(tmpdir(), "tts-test-"));
  try {
    const flite = new URL("../../demo/server/flite.mjs", import.meta.url).href;
    const child = spawn(process.execPath, ["--no-turbo-fast-api-calls", "--input-type=module", "-e", `const { synthesize } = await import(${JSON.stringify(flite)}); synthesize("hello there", "slt"); synthesize("and again", "rms"); console.log("spoke"); setInterval(() => {}, 1000);`], {
      env: { ...process.env, TMPDIR: temp },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => d.toString().includes("spoke") && resolve());
      child.once("exit", (code) => reject(new Error(`the child exited (${code}) before it spoke`)));
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    expect(readdirSync(temp)).toEqual([]);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});
