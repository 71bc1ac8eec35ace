// The Deepgram emulator (demo/server/emulators/deepgram.mjs) speaks /v1/listen (Nova) and
// /v2/listen (Flux) over a real socket and recognises real speech (pocketsphinx); the docs'
// example messages (test/fixtures/deepgram/) have the shapes it sends.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { RecordingSocket, type Message } from "./helpers";
import { sleep } from "../lib/wait.mjs";

const fixtures = new URL("../fixtures/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`deepgram/${name}.json`, fixtures), "utf8"));
function speech(name: string) {
  const wav = readWav(readFileSync(new URL(`speech/${name}.wav`, fixtures)));
  const meta = JSON.parse(readFileSync(new URL(`speech/${name}.json`, fixtures), "utf8"));
  return { samples: wav.samples, meta };
}

/** Sends 16 kHz s16 audio as linear16 binary frames of 80 ms, then `silenceS` of silence. */
function sendLinear16(socket: RecordingSocket, samples: Int16Array, silenceS = 1) {
  const all = new Int16Array(samples.length + Math.round(silenceS * 16000));
  all.set(samples);
  for (let i = 0; i < all.length; i += 1280) socket.ws.send(Buffer.from(all.slice(i, i + 1280).buffer));
}

/** The key paths of a JSON value (array items merged; a key that is a UUID, as Metadata's model_info has, reads <uuid>). */
function shape(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.length && typeof value[0] === "object" ? [...new Set(value.flatMap((v) => shape(v, `${path}[]`)))] : [path];
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => {
      const key = /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(k) ? "<uuid>" : k;
      return [`${path}.${key}`, ...shape(v, `${path}.${key}`)];
    });
  }
  return [];
}

function handshake(url: string, protocols?: string[], headers?: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once("open", () => {
      ws.terminate();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.once("error", reject);
  });
}

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false });
});
afterAll(() => backend?.close());

const finals = (s: RecordingSocket) => s.of("Results").filter((m) => m.is_final);
const finalWords = (s: RecordingSocket) => finals(s).flatMap((m) => m.channel.alternatives[0].words as Message[]);

describe("Deepgram /v1/listen (Nova)", () => {
  test("transcribes real speech: final words with times near the spoken ones, interims first, SpeechStarted, speech_final, UtteranceEnd", async () => {
    const { samples, meta } = speech("help-me");
    const s = new RecordingSocket(`${backend.wsUrl}/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000&interim_results=true&vad_events=true&utterance_end_ms=1000`, "json");
    await s.opened;
    sendLinear16(s, samples, 1.6);
    await s.until(() => s.of("UtteranceEnd").length > 0, 30_000, "UtteranceEnd");
    const words = finalWords(s);
    expect(words.map((w) => w.word).join(" ")).toBe("can you help me");
    words.forEach((w, i) => {
      expect(Math.abs(w.start - meta.words[i].start)).toBeLessThan(0.25);
      expect(w.end).toBeGreaterThan(w.start);
    });
    const types = s.messages.map((m) => m.message?.type);
    expect(types.indexOf("SpeechStarted")).toBeLessThan(types.indexOf("Results"));
    expect(s.of("SpeechStarted")[0].timestamp).toBeLessThan(meta.words[0].start);
    // An interim result carried the first word before the final that settled it.
    const firstFinal = s.messages.findIndex((m) => m.message?.type === "Results" && m.message.is_final && m.message.channel.alternatives[0].words.length);
    const firstInterim = s.messages.findIndex((m) => m.message?.type === "Results" && !m.message.is_final);
    expect(firstInterim).toBeGreaterThanOrEqual(0);
    expect(firstInterim).toBeLessThan(firstFinal);
    expect(finals(s).some((m) => m.speech_final)).toBe(true);
    // Finals tile the audio: each starts where the one before ended.
    finals(s).reduce((end, m) => (expect(m.start).toBeCloseTo(end, 3), m.start + m.duration), 0);
    expect(s.of("UtteranceEnd")[0].last_word_end).toBeCloseTo(words.at(-1)!.end, 3);
    s.close();
  });

  test("Finalize answers with a final Results marked from_finalize once the audio before it is processed; CloseStream ends with Metadata and 1000", async () => {
    const { samples } = speech("weather-question");
    const s = new RecordingSocket(`${backend.wsUrl}/v1/listen?encoding=linear16&sample_rate=16000`, "json");
    await s.opened;
    sendLinear16(s, samples, 0); // no trailing silence: the utterance is still open
    const [keepAlive, finalize, closeStream] = docs("client").v1;
    s.ws.send(JSON.stringify(keepAlive));
    s.ws.send(JSON.stringify(finalize));
    await s.until(() => s.of("Results").some((m) => m.from_finalize), 30_000, "from_finalize");
    const answer = s.of("Results").find((m) => m.from_finalize)!;
    expect(answer.is_final).toBe(true);
    expect(answer.start + answer.duration).toBeCloseTo(samples.length / 16000, 2);
    expect(finalWords(s).map((w) => w.word).join(" ")).toBe("what is the weather like today");
    s.ws.send(JSON.stringify(closeStream));
    const closed = await s.closed;
    expect(closed.code).toBe(1000);
    expect(s.of("Metadata")).toHaveLength(1);
    expect(s.of("Metadata")[0].duration).toBeCloseTo(samples.length / 16000, 2);
  });

  test("the docs' example messages have the shapes the emulator sends", { timeout: 60_000 }, async () => {
    const { samples } = speech("help-me");
    const s = new RecordingSocket(`${backend.wsUrl}/v1/listen?encoding=linear16&sample_rate=16000&interim_results=true&vad_events=true&utterance_end_ms=1000`, "json");
    await s.opened;
    sendLinear16(s, samples, 1.6);
    await s.until(() => s.of("UtteranceEnd").length > 0, 30_000, "UtteranceEnd");
    s.ws.send(JSON.stringify({ type: "Finalize" }));
    await s.until(() => s.of("Results").some((m) => m.from_finalize), 10_000, "from_finalize");
    s.ws.send(JSON.stringify({ type: "CloseStream" }));
    await s.until(() => s.of("Metadata").length > 0, 10_000, "Metadata");
    for (const example of docs("v1-server").messages as Message[]) {
      // A Results with words is compared with one with words, an empty one with an empty one.
      const hasWords = (m: Message) => m.channel.alternatives[0].words.length > 0;
      const sent = s.of(example.type!).find((m) => m.type !== "Results" || hasWords(m) === hasWords(example));
      expect(sent, example.type).toBeDefined();
      expect(shape(sent).sort(), example.type).toEqual(shape(example).sort());
    }
  });

  test("fault knobs: capacity=0 refuses the handshake with 429, like Deepgram over its concurrency limit; malformed sends a frame that is not JSON", async () => {
    expect(await handshake(`${backend.wsUrl}/v1/listen?capacity=0`)).toBe(429);
    expect(await handshake(`${backend.wsUrl}/v1/listen?encoding=opus`)).toBe(400);
    const s = new RecordingSocket(`${backend.wsUrl}/v1/listen?malformed=1`, "json");
    await s.until(() => s.messages.length > 0, 10_000, "a frame");
    expect(s.messages[0].message).toBeNull();
    s.close();
  });
});

describe("Deepgram /v2/listen (Flux)", () => {
  test("Connected, then one turn: StartOfTurn, Updates every ~0.25 s, EagerEndOfTurn before an EndOfTurn with the spoken words", async () => {
    const { samples, meta } = speech("weather-question");
    const s = new RecordingSocket(`${backend.wsUrl}/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000&eager_eot_threshold=0.4`, "json");
    await s.opened;
    sendLinear16(s, samples, 1.5);
    await s.until(() => s.of("TurnInfo").some((m) => m.event === "EndOfTurn"), 30_000, "EndOfTurn");
    expect(s.messages[0].message?.type).toBe("Connected");
    const turns = s.of("TurnInfo");
    const events = turns.map((m) => m.event);
    expect(events[events.indexOf("StartOfTurn") - 1]).not.toBe("StartOfTurn");
    const end = turns.find((m) => m.event === "EndOfTurn")!;
    expect(end.transcript).toBe("what is the weather like today");
    expect(end.trigger).toBe("model");
    expect(end.end_of_turn_confidence).toBeGreaterThanOrEqual(0.7);
    end.words.forEach((w: Message, i: number) => expect(Math.abs(w.start - meta.words[i].start), JSON.stringify(end.words)).toBeLessThan(0.25));
    // The docs' rules: EndOfTurn matches the EagerEndOfTurn just before it; TurnResumed only after an eager end.
    const lastEager = turns.filter((m) => m.event === "EagerEndOfTurn").at(-1)!;
    expect(lastEager.transcript).toBe(end.transcript);
    events.forEach((e, i) => e === "TurnResumed" && expect(events.slice(0, i).lastIndexOf("EagerEndOfTurn")).toBeGreaterThan(events.slice(0, i).lastIndexOf("TurnResumed")));
    // sequence_id counts every message; Updates come about every 0.25 s of audio.
    turns.forEach((m, i) => expect(m.sequence_id).toBe(i + 1));
    const updates = turns.filter((m) => m.event === "Update").map((m) => m.audio_window_end);
    for (let i = 1; i < updates.length; i++) expect(updates[i] - updates[i - 1]).toBeLessThanOrEqual(0.5);
    s.close();
  });

  test("ForceEndTurn ends the turn on what was transcribed so far (trigger manual); the next turn has the next index", async () => {
    const { samples: whole, meta } = speech("turn-on-lights");
    // Cut 0.1 s after the last word: the fixture's own trailing silence would end the turn by itself.
    const samples = whole.slice(0, meta.offsetSamples + 1600);
    const s = new RecordingSocket(`${backend.wsUrl}/v2/listen?encoding=linear16&sample_rate=16000`, "json");
    await s.opened;
    sendLinear16(s, samples, 0);
    s.ws.send(JSON.stringify(docs("client").v2[0]));
    await s.until(() => s.of("TurnInfo").some((m) => m.event === "EndOfTurn"), 30_000, "EndOfTurn");
    const end = s.of("TurnInfo").find((m) => m.event === "EndOfTurn")!;
    expect(end.trigger).toBe("manual");
    expect(end.transcript).toBe("please turn on the lights");
    expect(end.audio_window_end).toBeCloseTo(samples.length / 16000, 2);
    sendLinear16(s, samples, 1.2);
    await s.until(() => s.of("TurnInfo").filter((m) => m.event === "EndOfTurn").length === 2, 30_000, "second EndOfTurn");
    expect(s.of("TurnInfo").filter((m) => m.event === "EndOfTurn").map((m) => m.turn_index)).toEqual([0, 1]);
    s.close();
  });

  test("the docs' TurnInfo fields are the ones the emulator sends", async () => {
    const { samples } = speech("help-me");
    const s = new RecordingSocket(`${backend.wsUrl}/v2/listen?encoding=linear16&sample_rate=16000`, "json");
    await s.opened;
    sendLinear16(s, samples, 1.5);
    await s.until(() => s.of("TurnInfo").some((m) => m.event === "EndOfTurn"), 30_000, "EndOfTurn");
    const [connected, , , , , endOfTurn] = docs("v2-server").messages as Message[];
    expect(shape(s.of("Connected")[0]).sort()).toEqual(shape(connected).sort());
    expect(shape(s.of("TurnInfo").find((m) => m.event === "EndOfTurn")).sort()).toEqual(shape(endOfTurn).sort());
    s.close();
  });
});

describe("Deepgram auth", () => {
  test("the key in the token subprotocol, or a JWT from POST /v1/auth/grant in the bearer subprotocol; anything else is 401", async () => {
    const secured = await startReferenceBackend({ serveStatic: false, prewarm: false, token: "dg-key-1" });
    try {
      const listen = `${secured.wsUrl}/v1/listen`;
      expect(await handshake(listen)).toBe(401);
      expect(await handshake(listen, ["token", "dg-key-1"])).toBe(101);
      expect(await handshake(listen, ["token", "wrong"])).toBe(401);
      const refused = await fetch(`${secured.url}/v1/auth/grant`, { method: "POST", headers: { Authorization: "Token wrong" } });
      expect(refused.status).toBe(401);
      const grant = await fetch(`${secured.url}/v1/auth/grant`, {
        method: "POST",
        headers: { Authorization: "Token dg-key-1", "Content-Type": "application/json" },
        body: JSON.stringify(docs("grant").request),
      });
      const body = await grant.json();
      expect(Object.keys(body).sort()).toEqual(Object.keys(docs("grant").response).sort());
      expect(body.expires_in).toBe(30);
      expect(body.access_token.split(".")).toHaveLength(3);
      expect(await handshake(`${secured.wsUrl}/v2/listen`, ["bearer", body.access_token])).toBe(101);
      expect(await handshake(listen, [], { Authorization: `Bearer ${body.access_token}` })).toBe(101);
      const [head, claims] = body.access_token.split(".");
      const forged = `${head}.${Buffer.from(JSON.stringify({ exp: 9e9 })).toString("base64url")}.${body.access_token.split(".")[2]}`;
      expect(await handshake(listen, ["bearer", forged])).toBe(401);
      expect(JSON.parse(Buffer.from(claims, "base64url").toString()).exp * 1000).toBeGreaterThan(Date.now());
      const short = await (await fetch(`${secured.url}/v1/auth/grant`, { method: "POST", headers: { Authorization: "Token dg-key-1" }, body: JSON.stringify({ ttl_seconds: 1 }) })).json();
      await sleep(2100);
      expect(await handshake(listen, ["bearer", short.access_token])).toBe(401);
    } finally {
      await secured.close();
    }
  });

  test("GET /api/token?service=deepgram: the demo's token endpoint mints a JWT (not the key) that opens the bearer subprotocol; an unknown service is 400", async () => {
    const secured = await startReferenceBackend({ serveStatic: false, prewarm: false, token: "dg-key-2" });
    try {
      const { token, expiresInS } = await (await fetch(`${secured.url}/api/token?service=deepgram`)).json();
      expect(token).not.toBe("dg-key-2");
      expect(token.split(".")).toHaveLength(3);
      expect(expiresInS).toBe(30);
      expect(await handshake(`${secured.wsUrl}/v1/listen`, ["bearer", token])).toBe(101);
      expect(await handshake(`${secured.wsUrl}/v1/listen`, ["bearer", token])).toBe(101); // reusable until it expires
      // Another service's token is not a Deepgram token.
      const other = (await (await fetch(`${secured.url}/api/token?service=cartesia`)).json()).token;
      expect(await handshake(`${secured.wsUrl}/v1/listen`, ["bearer", other])).toBe(401);
      expect((await fetch(`${secured.url}/api/token?service=kyutai`)).status).toBe(400);
      // Without a service: the backend's own token, as before (Kyutai and the LLM take it).
      expect(await (await fetch(`${secured.url}/api/token`)).json()).toEqual({ token: "dg-key-2", expiresInS: 300 });
    } finally {
      await secured.close();
    }
  });

  test("with no key configured, every request is accepted: any grant, any bearer, and the minted token too", async () => {
    const open = await startReferenceBackend({ serveStatic: false, prewarm: false });
    try {
      expect(await handshake(`${open.wsUrl}/v1/listen`, ["bearer", "anything"])).toBe(101);
      const grant = await fetch(`${open.url}/v1/auth/grant`, { method: "POST", headers: { Authorization: "Token whatever" } });
      expect(grant.status).toBe(200);
      expect(await handshake(`${open.wsUrl}/v1/listen`, ["bearer", (await grant.json()).access_token])).toBe(101);
      const aai = await fetch(`${open.url}/v3/token?expires_in_seconds=60`);
      expect(aai.status).toBe(200);
      const el = await fetch(`${open.url}/v1/single-use-token/tts_websocket`, { method: "POST" });
      expect(el.status).toBe(200);
      expect((await fetch(`${open.url}/api/token?service=cartesia`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
