// OpenAI Realtime, as its reference documents it: each sequence of test/contract/sequences/openai.mjs
// replayed against the emulator over a real local socket, and the same wire through the SDK's
// parser (realtime-wire.ts) and provider (openaiRealtime). scripts/check-live.mjs replays the
// sequences against the live service.
//   https://platform.openai.com/docs/api-reference/realtime-server-events
//   https://platform.openai.com/docs/api-reference/realtime-client-events
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { openaiRealtime } from "../../src/providers/openai-realtime.js";
import { decodeRealtimeEvent } from "../../src/providers/realtime-wire.js";
import type { TtsEvent } from "../../src/providers/types.js";
import { openaiSequences } from "./sequences/openai.mjs";
import { sleep } from "../lib/wait.mjs";

const KEY = "contract-openai-key";
const server = JSON.parse(readFileSync(new URL("../fixtures/openai-realtime/server.json", import.meta.url), "utf8")).messages as Record<string, any>[];
const ctx = { service: "openai-realtime", url: "ws://contract" };

let backend: ReferenceBackend;
beforeAll(async () => {
  // Text turns only: no recogniser is needed (and none is waited for).
  backend = await startReferenceBackend({ serveStatic: false, token: KEY, recogniser: false });
});
afterAll(() => backend?.close());

/** The emulator at its documented path; paced at real time after a short burst, so a cancel lands mid-response. */
const emulator = () => ({ url: `${backend.wsUrl}/v1/realtime?model=gpt-realtime&pace=1&burst_s=0.2`, auth: { protocols: ["realtime", `openai-insecure-api-key.${KEY}`] } });

describe("OpenAI Realtime: the emulator replays the documented sequences", () => {
  for (const [name, run] of Object.entries(openaiSequences)) {
    test(name, async () => {
      const { checks, messages } = await run(emulator());
      expect(checks.filter((c) => !c.ok)).toEqual([]);
      // The SDK's parser reads every message of the sequence without a protocol error.
      for (const m of messages) expect(() => decodeRealtimeEvent(JSON.stringify(m), ctx)).not.toThrow();
    });
  }
});

describe("OpenAI Realtime: the SDK reads the documented sequences", () => {
  test("the docs' example events decode; a cancelled response.done reads as cancelled", () => {
    // The reference's audio delta example holds a placeholder, not base64: the SDK refuses it, rightly.
    for (const m of server.filter((e) => e.type !== "response.output_audio.delta")) expect(() => decodeRealtimeEvent(JSON.stringify(m), ctx), m.type).not.toThrow();
    const done = server.find((m) => m.type === "response.done")!;
    const cancelled = { ...done, response: { ...done.response, status: "cancelled", status_details: { type: "cancelled", reason: "client_cancelled" } } };
    expect(decodeRealtimeEvent(JSON.stringify(cancelled), ctx)).toMatchObject({ type: "response.done", status: "cancelled", reason: "client_cancelled" });
  });

  test("a truncate deletes the service's transcript, so after a cut the provider tells the model what the user heard", async () => {
    const provider = openaiRealtime({ url: `${backend.wsUrl}/v1/realtime`, model: "gpt-realtime", token: async () => KEY });
    const stt = await provider.stt.connect();
    try {
      const reply = await provider.tts.connect();
      const received: TtsEvent[] = [];
      const reading = (async () => {
        for await (const e of reply.events()) received.push(e);
      })();
      const text: unknown[] = [];
      const story = (async () => {
        for await (const out of provider.llm.stream([{ role: "user", content: "tell me a long story" }])) text.push(out);
      })();
      // Until about 1.5 s of the reply's audio arrived (the emulator paces at real time after its burst).
      const samples = () => received.reduce((n, e) => n + (e.kind === "audio" ? e.pcm.length : 0), 0);
      while (samples() < 1.5 * 24000) await sleep(20);
      const words = reply.interrupted!(1.2);
      const heard = words.filter((w) => (w.startS + w.stopS) / 2 <= 1.2).map((w) => w.text).join(" ");
      expect(heard).not.toBe("");
      await Promise.allSettled([reading, story]);
      // The next response reads the conversation as it starts; its first words are enough.
      for await (const _ of provider.llm.stream([{ role: "user", content: "tell me a long story" }, { role: "assistant", content: heard }, { role: "user", content: "I feel tired" }])) break;
      await reply.close();
      const log = ((await (await fetch(`${backend.url}/__realtime/log`)).json()) as { sessions: any[] }).sessions.at(-1);
      expect(log.truncates).toEqual([expect.objectContaining({ accepted: true })]);
      const input = log.responses[1].input as { role: string; text: string }[];
      // The truncated item reads as nothing now; the model knows the heard words from the client alone.
      expect(input.find((i) => i.role === "assistant")?.text).toBe("");
      expect(input.some((i) => i.text.includes(`"${heard}"`))).toBe(true);
    } finally {
      await stt.close();
    }
  });
});
