// The ElevenLabs emulator (demo/server/emulators/elevenlabs.mjs) at its documented path, over a
// real socket: the docs' client messages in, flite's speech out in the docs' message shapes,
// heard back word for word by pocketsphinx; its token check and fault knobs.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import client from "../fixtures/elevenlabs/client-messages.json" with { type: "json" };
import server from "../fixtures/elevenlabs/server-messages.json" with { type: "json" };
import docs from "../fixtures/elevenlabs/token.json" with { type: "json" };
import { RecordingSocket, transcribe, upgradeStatus, type Message } from "./helpers";

/** The backend's key stands for the ElevenLabs API key; sockets open with single-use tokens minted with it. */
const KEY = "el-api-key-1";
let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

/** What an app's server does: POST /v1/single-use-token/tts_websocket with `xi-api-key`. */
const mintToken = (key = KEY, type = "tts_websocket") => fetch(`${backend.url}/v1/single-use-token/${type}`, { method: "POST", headers: { "xi-api-key": key } });
const singleUseToken = async () => ((await (await mintToken()).json()) as { token: string }).token;

/** A socket URL with a fresh single-use token; pace=0 (as fast as synthesised) unless the query sets a pace. */
const path = async (voice = "slt-voice", query = "") =>
  `${backend.wsUrl}/v1/text-to-speech/${voice}/multi-stream-input?model_id=eleven_flash_v2_5&output_format=pcm_24000&single_use_token=${await singleUseToken()}${query.includes("pace=") ? "" : "&pace=0"}${query}`;

/** Speaks `text` in one context with the docs' messages and returns the audio, the alignment and the messages. */
async function speak(text: string, query = "") {
  const ws = new RecordingSocket(await path("slt-voice", query), "json");
  await ws.opened;
  ws.send(client.initializeContext);
  for (const word of text.split(" ")) ws.send({ ...client.sendText, text: `${word} ` });
  ws.send(client.flush);
  ws.send(client.closeContext);
  await ws.until(() => ws.messages.some((m) => m.message?.isFinal === true), 20_000, "isFinal");
  const chunks = ws.messages.map((m) => m.message).filter((m): m is Message => typeof m?.audio === "string");
  const bytes = Buffer.concat(chunks.map((c) => Buffer.from(c.audio as string, "base64")));
  const pcm = new Float32Array(bytes.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2) / 32768;
  ws.close();
  return { ws, chunks, pcm };
}

describe("ElevenLabs emulator /v1/text-to-speech/{voice_id}/multi-stream-input", () => {
  test("the docs' messages in; flite's speech out as base64 pcm_24000 that pocketsphinx hears word for word", async (ctx) => {
    if (!backend.health().stt.recogniser) ctx.skip();
    const sentence = "please turn on the lights";
    const { pcm, chunks, ws } = await speak(sentence);
    expect(pcm.length / 24000).toBeGreaterThan(1);
    const { words } = await transcribe(backend.wsUrl, pcm, `?auth_id=${KEY}`);
    expect(words.map((w) => w.text).join(" ")).toBe(sentence);
    // Each audio message has the docs' shape: audio, alignment, normalizedAlignment, contextId.
    for (const c of chunks) expect(Object.keys(c).sort()).toEqual(Object.keys(server.audioOutput).sort());
    expect(chunks.every((c) => c.contextId === client.sendText.context_id)).toBe(true);
    const final = ws.messages.map((m) => m.message).find((m) => m?.isFinal);
    expect(final).toEqual(server.finalOutput);
  }, 60_000);

  test("the alignment spells the text sent, with each chunk's times inside that chunk's audio (0.25 s chunks, split mid-word)", async () => {
    const sentence = "Hello there, how are you doing today?";
    const { chunks } = await speak(sentence);
    const chars = chunks.flatMap((c) => (c.alignment?.chars as string[]) ?? []).join("");
    expect(chars.trim()).toBe(sentence);
    let splitMidWord = false;
    for (const c of chunks) {
      const a = c.alignment as { chars: string[]; charStartTimesMs: number[]; charDurationsMs: number[] } | null;
      if (!a) continue;
      const chunkMs = (Buffer.from(c.audio as string, "base64").length / 2 / 24000) * 1000;
      expect(a.charStartTimesMs.length).toBe(a.chars.length);
      expect(a.charDurationsMs.length).toBe(a.chars.length);
      for (const t of a.charStartTimesMs) expect(t).toBeLessThanOrEqual(chunkMs + 1);
      if (a.chars.length > 0 && a.chars.at(-1) !== " ") splitMidWord = true;
    }
    expect(splitMidWord).toBe(true);
  });

  test("the voice id in the path picks the flite voice (rms vs slt): different audio for the same text", async () => {
    const one = async (voice: string) => {
      const ws = new RecordingSocket(await path(voice), "json");
      await ws.opened;
      ws.send({ text: "Good morning. ", context_id: "a" });
      ws.send({ context_id: "a", close_context: true });
      await ws.until(() => ws.messages.some((m) => m.message?.isFinal), 20_000, "isFinal");
      ws.close();
      return ws.messages.map((m) => m.message?.audio).filter(Boolean).join("");
    };
    expect(await one("my-rms-voice")).not.toBe(await one("my-slt-voice"));
  });

  test("the token: a minted single_use_token or the key as xi-api-key; anything else is refused with HTTP 401", async () => {
    const base = `${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input`;
    expect(await upgradeStatus(`${base}?single_use_token=${await singleUseToken()}`)).toBe(101);
    expect(await upgradeStatus(base, { "xi-api-key": KEY })).toBe(101);
    expect(await upgradeStatus(`${base}?single_use_token=nope`)).toBe(401);
    // The key is not a single-use token, nor is the backend's auth_id taken here.
    expect(await upgradeStatus(`${base}?single_use_token=${KEY}`)).toBe(401);
    expect(await upgradeStatus(`${base}?auth_id=${KEY}`)).toBe(401);
    expect(await upgradeStatus(`${backend.wsUrl}/v1/text-to-speech/multi-stream-input?single_use_token=${await singleUseToken()}`)).toBe(404);
  });

  test("POST /v1/single-use-token/tts_websocket: the docs' response; the token opens one socket, a second use is refused (HTTP 401)", async () => {
    const minted = await mintToken();
    expect(minted.status).toBe(200);
    const { token, ...rest } = await minted.json();
    expect(Object.keys({ token, ...rest })).toEqual(Object.keys(docs.response));
    const base = `${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input?output_format=pcm_24000&single_use_token=${token}`;
    const first = new RecordingSocket(base, "json");
    await first.opened;
    // Consumed on first use: refused the second time, even while the first socket is open.
    expect(await upgradeStatus(base)).toBe(401);
    first.close();
    expect(await upgradeStatus(base)).toBe(401);
    // A realtime_scribe token is for speech-to-text: not accepted by the TTS socket.
    const scribe = (await (await mintToken(KEY, "realtime_scribe")).json()).token;
    expect(await upgradeStatus(`${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input?single_use_token=${scribe}`)).toBe(401);
  });

  test("POST /v1/single-use-token: a wrong key is HTTP 401 invalid_api_key; an unknown token type 422; GET 405", async () => {
    const wrong = await mintToken("not-the-key");
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).detail.status).toBe("invalid_api_key");
    expect((await mintToken(KEY, "podcast")).status).toBe(422);
    expect((await fetch(`${backend.url}/v1/single-use-token/tts_websocket`, { headers: { "xi-api-key": KEY } })).status).toBe(405);
  });

  test("GET /api/token?service=elevenlabs: the demo's token endpoint mints a single-use token (15 minutes) the socket accepts once", async () => {
    const { token, expiresInS } = await (await fetch(`${backend.url}/api/token?service=elevenlabs`)).json();
    expect(token).not.toBe(KEY);
    expect(expiresInS).toBe(15 * 60);
    const url = `${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input?single_use_token=${token}`;
    expect(await upgradeStatus(url)).toBe(101);
    expect(await upgradeStatus(url)).toBe(401);
  });

  test("capacity=0: the service's too_many_concurrent_requests error, then a 1008 close", async () => {
    const ws = new RecordingSocket(await path("v", "&capacity=0"), "json");
    const closed = await ws.closed;
    expect(ws.messages[0].message).toMatchObject({ error: "too_many_concurrent_requests", code: 1008 });
    expect(closed.code).toBe(1008);
  });

  test("a sixth context on one socket: the docs' max_active_conversations error, then a 1008 close", async () => {
    const ws = new RecordingSocket(await path("v", "&pace=1"), "json");
    await ws.opened;
    for (let i = 1; i <= 6; i++) ws.send({ text: "Hello. ", context_id: `c${i}` });
    const closed = await ws.closed;
    const error = ws.messages.map((m) => m.message).find((m) => m?.error);
    expect(error).toEqual(server.error);
    expect(closed.code).toBe(1008);
  });

  test("a keep-alive (empty text) makes no audio; an output format other than pcm_* is an error", async () => {
    const ws = new RecordingSocket(await path(), "json");
    await ws.opened;
    ws.send(client.keepAlive);
    ws.send(client.closeSocket);
    await ws.closed;
    expect(ws.messages).toHaveLength(0);
    const mp3 = new RecordingSocket(`${backend.wsUrl}/v1/text-to-speech/v/multi-stream-input?output_format=mp3_44100_128&single_use_token=${await singleUseToken()}`, "json");
    expect((await mp3.closed).code).toBe(1008);
    expect(mp3.messages[0].message?.error).toBe("invalid_output_format");
  });

  test("delay_ms holds the first audio; stall_ms opens a gap in the middle of the stream", async () => {
    const timed = async (query: string) => {
      const ws = new RecordingSocket(await path("v", query), "json");
      await ws.opened;
      ws.send({ text: "One two three four five six seven eight. ", context_id: "t" });
      ws.send({ context_id: "t", close_context: true });
      await ws.until(() => ws.messages.some((m) => m.message?.isFinal), 20_000, "isFinal");
      ws.close();
      const at = [ws.openedAt, ...ws.messages.map((m) => m.at)];
      const gaps = at.slice(1).map((t, i) => t - at[i]);
      return { first: gaps[0], maxGap: Math.max(...gaps) };
    };
    expect((await timed("&delay_ms=400")).first).toBeGreaterThanOrEqual(380);
    // Paced at real time, so the stream is still going when the stall begins.
    // The longest silence (from the open on): a 1.5 s stall shows as a gap of more than 1.2 s
    // (a generous bound: the backend shares this process, and flite blocks it while it speaks).
    const stalled = await timed("&pace=1&burst_s=0&stall_after_ms=300&stall_ms=1500");
    expect(stalled.maxGap).toBeGreaterThanOrEqual(1200);
  });
});
