// The AssemblyAI Universal-Streaming emulator (demo/server/emulators/assemblyai.mjs) over a real
// socket: real speech in (a flite fixture through pocketsphinx), the docs' messages and close codes out.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { TurnCutter, turnSettings } from "../../demo/server/core/turn-cutter.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { assemblyaiStt } from "../../src/providers/assemblyai-stt.js";
import type { SttProvider } from "../../src/providers/types.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeLlm, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "../unit/session-fakes.js";
import { RecordingSocket, type Message } from "./helpers";
import { sleep } from "../lib/wait.mjs";

/** The backend's key stands for the AssemblyAI API key; sockets open with temporary tokens minted with it. */
const KEY = "aai-api-key-1";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

const fixtures = new URL("../fixtures/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`assemblyai/${name}.json`, fixtures), "utf8"));
function speech(name: string) {
  const wav = readWav(readFileSync(new URL(`speech/${name}.wav`, fixtures)));
  const meta = JSON.parse(readFileSync(new URL(`speech/${name}.json`, fixtures), "utf8"));
  return { samples: wav.samples as Int16Array, meta };
}

/** What an app's server does: GET /v3/token with the API key in `Authorization`. */
async function mintToken(query = "expires_in_seconds=60", key = KEY) {
  return fetch(`${backend.url}/v3/token?${query}`, { headers: { Authorization: key } });
}
const temporaryToken = async () => ((await (await mintToken()).json()) as { token: string }).token;

async function connect(query = "", token?: string) {
  return new RecordingSocket(`${backend.wsUrl}/v3/ws?sample_rate=16000&encoding=pcm_s16le&token=${token ?? (await temporaryToken())}${query}`, "json");
}

/** Sends 16 kHz s16 audio in 50 ms binary messages (the last one padded with silence). */
function sendPcm(socket: RecordingSocket, samples: Int16Array, chunk = 800) {
  for (let i = 0; i < samples.length; i += chunk) {
    const part = new Int16Array(chunk);
    part.set(samples.subarray(i, i + chunk));
    socket.ws.send(Buffer.from(part.buffer));
  }
}

/** The fixture's sentence as pocketsphinx spells it: lower case, no punctuation. */
const spoken = (meta: { text: string }) => meta.text.toLowerCase().replace(/[^a-z' ]/g, "");
const silence = (ms: number) => new Int16Array((16000 * ms) / 1000);
const turns = (s: RecordingSocket) => s.of("Turn");
const ended = (s: RecordingSocket) => turns(s).filter((t) => t.end_of_turn);
const text = (turn: Message) => turn.words.map((w: Message) => w.text).join(" ");
const keys = (m: object) => Object.keys(m).sort();

describe("AssemblyAI emulator /v3/ws", () => {
  test("a spoken question comes back as one turn: its words, final, with times near the spoken ones, then end_of_turn", async () => {
    const { samples, meta } = speech("weather-question");
    const s = await connect();
    await s.next("Begin", 15_000);
    sendPcm(s, samples);
    sendPcm(s, silence(1500)); // past max_turn_silence (1280 ms)
    await s.until(() => ended(s).length === 1, 30_000, "end_of_turn");
    const last = ended(s)[0];
    expect(text(last)).toBe("what is the weather like today");
    expect(last.words.every((w: Message) => w.word_is_final)).toBe(true);
    expect(last.transcript).toBe("what is the weather like today");
    expect(last.utterance).toBe(last.transcript);
    expect(last.turn_order).toBe(0);
    last.words.forEach((w: Message, i: number) => {
      expect(Math.abs(w.start / 1000 - meta.words[i].start)).toBeLessThan(0.25);
      expect(w.end).toBeGreaterThanOrEqual(w.start);
    });
    // Partials came first; a word once final stays final with the same text in every later Turn.
    const partials = turns(s).filter((t) => !t.end_of_turn);
    expect(partials.length).toBeGreaterThan(2);
    for (let i = 1; i < partials.length; i++) {
      partials[i - 1].words.forEach((w: Message, j: number) => {
        if (w.word_is_final) expect(partials[i].words[j]).toMatchObject({ text: w.text, word_is_final: true });
      });
    }
    const started = s.of("SpeechStarted")[0];
    expect(started.timestamp / 1000).toBeLessThan(meta.words[0].start + 0.1);
    s.close();
  });

  test("its messages have exactly the fields of the docs' examples", async () => {
    const { samples } = speech("help-me");
    const s = await connect("&format_turns=true");
    await s.next("Begin", 15_000);
    sendPcm(s, samples);
    sendPcm(s, silence(1500));
    await s.until(() => ended(s).length === 2, 30_000, "the turn and its formatted repeat");
    s.send({ type: "Terminate" });
    await s.next("Termination");
    const fromDocs = [...docs("session-unformatted").messages, ...docs("session-formatted").messages];
    const example = (type: string) => fromDocs.find((m: Message) => m.type === type);
    for (const type of ["Begin", "Turn", "Termination"]) expect(keys(s.of(type)[0])).toEqual(keys(example(type)));
    expect(keys(s.of("SpeechStarted")[0])).toEqual(expect.arrayContaining(keys(example("SpeechStarted"))));
    expect(keys(turns(s)[0].words[0])).toEqual(keys(example("Turn").words[0]));
    expect(s.of("Begin")[0].id).toMatch(/^[0-9a-f-]{36}$/);
    // format_turns=true: the ended turn, then its formatted repeat (as the 2026-03-03 docs show).
    const [plain, formatted] = ended(s);
    expect([plain.turn_is_formatted, formatted.turn_is_formatted]).toEqual([false, true]);
    expect(text(plain)).toBe("can you help me");
    expect(formatted.transcript).toBe("Can you help me.");
    expect((await s.closed).code).toBe(1000);
  });

  test("ForceEndpoint ends the open turn at once, with the audio sent before it", async () => {
    const { samples, meta } = speech("turn-on-lights");
    const s = await connect();
    await s.next("Begin", 15_000);
    sendPcm(s, samples); // no trailing silence: the turn is still open
    s.send({ type: "ForceEndpoint" });
    await s.until(() => ended(s).length === 1, 30_000, "forced end_of_turn");
    expect(text(ended(s)[0])).toBe(spoken(meta));
    s.close();
  });

  test("the docs' client messages are accepted; Terminate answers Termination with the audio's duration, then closes 1000", async () => {
    const s = await connect();
    await s.next("Begin", 15_000);
    sendPcm(s, silence(2000));
    for (const message of docs("client-messages").messages) s.send(message);
    const termination = (await s.next("Termination")).message!;
    expect(termination.audio_duration_seconds).toBe(2);
    expect(Number.isInteger(termination.session_duration_seconds)).toBe(true);
    expect((await s.closed).code).toBe(1000);
  });

  test("the token goes in the query; a wrong or missing one is closed with 1008, the way the service answers", async () => {
    const missing = new RecordingSocket(`${backend.wsUrl}/v3/ws?sample_rate=16000`, "json");
    expect(await missing.closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Missing Authorization header" });
    const wrong = new RecordingSocket(`${backend.wsUrl}/v3/ws?sample_rate=16000&token=nope`, "json");
    expect(await wrong.closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Invalid token" });
    expect(wrong.of("Begin")).toHaveLength(0);
    // A Node client may send its API key as the Authorization header instead.
    const header = new WebSocket(`${backend.wsUrl}/v3/ws?sample_rate=16000`, { headers: { Authorization: KEY } });
    const first = await new Promise<Message>((resolve) => header.once("message", (d) => resolve(JSON.parse(String(d)))));
    expect(first.type).toBe("Begin");
    header.close();
  });

  test("GET /v3/token: the docs' response; the token opens one session, a second use and an expired token are closed with 1008", async () => {
    const minted = await mintToken();
    expect(minted.status).toBe(200);
    const body = await minted.json();
    expect(Object.keys(body).sort()).toEqual(Object.keys(docs("token").response).sort());
    expect(body.expires_in_seconds).toBe(60);
    const first = await connect("", body.token);
    expect((await first.next("Begin", 15_000)).message?.type).toBe("Begin");
    // One-time use: the same token again, even while the first session is open, is refused.
    const again = await connect("", body.token);
    expect(await again.closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Token already used" });
    expect(again.of("Begin")).toHaveLength(0);
    first.ws.close();
    // The redemption window: a token not used within expires_in_seconds is refused.
    const short = (await (await mintToken("expires_in_seconds=1")).json()).token;
    await sleep(1100);
    const late = await connect("", short);
    expect(await late.closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Token expired" });
    // A token minted with another key (another account) is refused as wrong.
    const other = await startReferenceBackend({ serveStatic: false, prewarm: false, recogniser: false, token: "another-key" });
    try {
      const foreign = (await (await fetch(`${other.url}/v3/token?expires_in_seconds=60`, { headers: { Authorization: "another-key" } })).json()).token;
      expect(await (await connect("", foreign)).closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Invalid token" });
    } finally {
      await other.close();
    }
  }, 30_000);

  test("GET /v3/token: a wrong key is HTTP 401, expires_in_seconds outside 1–600 or a session limit outside 60–10800 s is 400; the limit sets Begin.expires_at", async () => {
    const wrong = await mintToken("expires_in_seconds=60", "not-the-key");
    expect(wrong.status).toBe(401);
    expect(typeof (await wrong.json()).error).toBe("string");
    for (const query of ["", "expires_in_seconds=0", "expires_in_seconds=601", "expires_in_seconds=1.5", "expires_in_seconds=60&max_session_duration_seconds=59", "expires_in_seconds=60&max_session_duration_seconds=10801"]) {
      expect(`${query}: ${(await mintToken(query)).status}`).toBe(`${query}: 400`);
    }
    const limited = (await (await mintToken("expires_in_seconds=60&max_session_duration_seconds=120")).json()).token;
    const before = Math.floor(Date.now() / 1000);
    const s = await connect("", limited);
    const begin = (await s.next("Begin", 15_000)).message!;
    expect(begin.expires_at - before).toBeGreaterThanOrEqual(120);
    expect(begin.expires_at - before).toBeLessThanOrEqual(121);
    s.ws.close();
  }, 30_000);

  test("GET /api/token?service=assemblyai: the demo's token endpoint mints a temporary token the emulator accepts, not the key", async () => {
    const response = await fetch(`${backend.url}/api/token?service=assemblyai`);
    const { token, expiresInS } = await response.json();
    expect(token).not.toBe(KEY);
    expect(expiresInS).toBe(60);
    const s = await connect("", token);
    expect((await s.next("Begin", 15_000)).message?.type).toBe("Begin");
    s.ws.close();
    expect(await (await connect("", token)).closed).toMatchObject({ code: 1008, reason: "Unauthorized Connection: Token already used" });
  }, 30_000);

  test("close codes: 3007 for a chunk under 50 ms, 3006 for bad JSON or an unknown type, 3009 past the capacity knob", async () => {
    const cases: [string, (s: RecordingSocket) => void, number][] = [
      ["20 ms chunk", (s) => s.ws.send(Buffer.from(new Int16Array(320).buffer)), 3007],
      ["bad JSON", (s) => s.ws.send("{nope"), 3006],
      ["unknown type", (s) => s.send({ type: "Finalize" }), 3006],
    ];
    for (const [, act, code] of cases) {
      const s = await connect();
      await s.next("Begin", 15_000);
      act(s);
      expect((await s.closed).code).toBe(code);
    }
    const full = await connect("&capacity=0");
    expect(await full.closed).toMatchObject({ code: 3009, reason: "Unauthorized Connection: Too many concurrent sessions" });
  });

  test("fault knobs: malformed sends a frame that is not JSON, oversize one huge Turn, drop_after_ms cuts the socket", async () => {
    const bad = await connect("&malformed=1");
    await bad.until(() => bad.messages.length >= 2, 15_000, "Begin and the malformed frame");
    expect(bad.messages[1].message).toBeNull();
    bad.close();
    const big = await connect("&oversize=300000");
    await big.until(() => big.messages.length >= 2, 15_000, "the oversized Turn");
    expect(big.messages[1].bytes).toBeGreaterThan(300_000);
    big.close();
    const dropped = await connect("&drop_after_ms=100");
    expect((await dropped.closed).code).toBe(1006);
  });
});

describe("a VoiceSession on assemblyaiStt and the emulator", () => {

  /**
   * The audio parts are scripted (test/unit/session-fakes.ts): the fixture goes in as 20 ms capture
   * frames at real-time pace, the VAD's start and end where the fixture's speech is; a drop knob
   * on the first connection, if given.
   */
  async function converse(name: string, firstUrl: string) {
    const { samples, meta } = speech(name);
    let connections = 0;
    const base = assemblyaiStt({ urls: backend.wsUrl, token: temporaryToken });
    const stt: SttProvider = {
      ...base,
      connect: (signal) => assemblyaiStt({ urls: connections++ === 0 ? firstUrl : backend.wsUrl, token: temporaryToken, startupTimeoutMs: 15_000 }).connect(signal),
    };
    const llm = fakeLlm({ reply: () => "sure", msPerWord: 1 });
    const player = new VirtualPlayer();
    const vad = new VirtualVad();
    const capture = new Emitter<any>();
    const components: SessionComponents = { player, vad, capture: { on: (n: any, fn: any) => capture.on(n, fn), setMeter: () => {} }, dispose: async () => {} };
    // A generous flush timeout: on this shared 2-core machine pocketsphinx can lag real time by a second or more.
    const session = new VoiceSession({ stt, llm: llm.provider, tts: fakeTts({ secondsPerWord: 0.1 }).provider, components: async () => components, turn: { flushTimeoutMs: 10_000 } });
    const warnings: string[] = [];
    const errors: string[] = [];
    session.on("warning", (e) => warnings.push(e.message));
    session.on("error", (e) => errors.push(e.error.name));
    await session.start();
    try {
      const frame = 320;
      for (let at = 0; at < samples.length + 8000; at += frame) {
        if (at <= meta.onsetSamples && meta.onsetSamples < at + frame) vad.emit("speechStart");
        if (at <= meta.offsetSamples + 9600 && meta.offsetSamples + 9600 < at + frame) vad.emit("speechEnd"); // 600 ms redemption
        const chunk = new Int16Array(frame);
        chunk.set(samples.subarray(at, Math.min(at + frame, samples.length)));
        capture.emit("frame", { pcm: chunk, capturedAt: 0 });
        await sleep(20);
      }
      const deadline = Date.now() + 15_000;
      while (llm.requests.length === 0 && Date.now() < deadline) await sleep(50);
      return { turn: String(llm.requests[0]?.messages.at(-1)?.content ?? ""), warnings, errors, connections, spoken: spoken(meta) };
    } finally {
      await session.stop();
    }
  }

  test("a spoken turn reaches the LLM as the fixture's words; the flush (ForceEndpoint) completes without a warning", async () => {
    const { turn, warnings, errors, spoken } = await converse("weather-question", backend.wsUrl);
    expect(turn, JSON.stringify({ warnings, errors })).toBe(spoken);
    expect(warnings.filter((w) => w.includes("did not confirm"))).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  test("a stream dropped mid-sentence is reconnected, and the replay gives the new stream the words the old one had not finished", async () => {
    const { turn, errors, connections } = await converse("weather-question", `${backend.wsUrl}?drop_after=6`);
    expect(errors).toEqual(["ConnectionClosedError"]);
    expect(connections).toBe(2);
    for (const word of ["weather", "like", "today"]) expect(turn.split(" "), turn).toContain(word);
  }, 60_000);
});

describe("TurnCutter (the emulator's end of turn)", () => {
  const frames = (cutter: TurnCutter, speech: boolean, n: number) => Array.from({ length: n }, () => cutter.frame(speech, 80)).filter(Boolean);

  test("defaults: end of turn after max(min_turn_silence, threshold × max_turn_silence) of silence", () => {
    const cutter = new TurnCutter(turnSettings(new URLSearchParams()));
    expect(frames(cutter, true, 5)).toEqual(["speech-started"]);
    // 0.4 × 1280 = 512 ms ≥ 400 ms: the 7th silent frame (560 ms) ends it.
    const silent = Array.from({ length: 10 }, () => cutter.frame(false, 80));
    expect(silent.indexOf("end-of-turn")).toBe(6);
    expect(cutter.endConfidence).toBeCloseTo(560 / 1280, 6);
  });

  test("threshold 1 leaves only the acoustic rule (max_turn_silence); speech in between restarts the count", () => {
    const cutter = new TurnCutter(turnSettings(new URLSearchParams("end_of_turn_confidence_threshold=1&max_turn_silence=400")));
    cutter.frame(true, 80);
    expect(frames(cutter, false, 4)).toEqual([]);
    cutter.frame(true, 80);
    const silent = Array.from({ length: 6 }, () => cutter.frame(false, 80));
    expect(silent.indexOf("end-of-turn")).toBe(4); // 400 ms
  });

  test("the deprecated min_end_of_turn_silence_when_confident still sets min_turn_silence; force() ends an open turn only", () => {
    expect(turnSettings(new URLSearchParams("min_end_of_turn_silence_when_confident=160")).minTurnSilenceMs).toBe(160);
    expect(turnSettings(new URLSearchParams("min_turn_silence=100&min_end_of_turn_silence_when_confident=160")).minTurnSilenceMs).toBe(100);
    const cutter = new TurnCutter(turnSettings(new URLSearchParams()));
    expect(cutter.force()).toBe(false);
    cutter.frame(true, 80);
    expect(cutter.force()).toBe(true);
    expect(cutter.inTurn).toBe(false);
  });
});
