// The Cartesia emulator (demo/server/emulators/cartesia.mjs) at its documented path, over a real
// socket: the docs' generation request in, flite's speech out in the docs' message shapes, heard
// back word for word by pocketsphinx; contexts with continue, flush, cancel; its token check and
// fault knobs.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import client from "../fixtures/cartesia/client-messages.json" with { type: "json" };
import server from "../fixtures/cartesia/server-messages.json" with { type: "json" };
import docs from "../fixtures/cartesia/token.json" with { type: "json" };
import { RecordingSocket, transcribe, upgradeStatus, type Message } from "./helpers";
import { sleep } from "../lib/wait.mjs";

/** The backend's key stands for the Cartesia API key; sockets open with an access token minted with it. */
const KEY = "cartesia-api-key-2";
let backend: ReferenceBackend;
/** One access token (tts grant) for the tests: it is reusable until it expires. */
let ACCESS: string;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
  ACCESS = (await (await mintToken(docs.request)).json()).token;
}, 60_000);
afterAll(() => backend?.close());

/** What an app's server does: POST /access-token with the key, the version header and the grants. */
function mintToken(body: unknown, headers: Record<string, string> = { Authorization: `Bearer ${KEY}`, "Cartesia-Version": docs.version }) {
  return fetch(`${backend.url}/access-token`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** pace=0 (as fast as synthesised) unless the query sets a pace. */
const url = (query = "") =>
  `${backend.wsUrl}/tts/websocket?cartesia_version=2025-04-16&access_token=${ACCESS}${query.includes("pace=") ? "" : "&pace=0"}${query}`;
const request = (transcript: string, more: Record<string, unknown> = {}) => ({
  ...client.generationRequest,
  output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 },
  transcript,
  ...more,
});
const ofType = (ws: RecordingSocket, type: string) => ws.messages.map((m) => m.message).filter((m): m is Message => m?.type === type);
const s16 = (chunks: Message[]) => {
  const bytes = Buffer.concat(chunks.map((c) => Buffer.from(c.data as string, "base64")));
  return Float32Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2) / 32768);
};

describe("Cartesia emulator /tts/websocket", () => {
  test("the docs' request, streamed with continue: flite's speech that pocketsphinx hears word for word, then done", async (ctx) => {
    if (!backend.health().stt.recogniser) ctx.skip();
    const sentence = "what is the weather like today";
    const ws = new RecordingSocket(url(), "json");
    await ws.opened;
    for (const word of sentence.split(" ")) ws.send(request(`${word} `, { continue: true }));
    ws.send(request("", { continue: false }));
    await ws.until(() => ofType(ws, "done").length > 0, 20_000, "done");
    ws.close();
    const chunks = ofType(ws, "chunk");
    for (const c of chunks) expect(Object.keys(c).sort()).toEqual(Object.keys(server.chunk).sort());
    expect(ofType(ws, "done")).toEqual([{ ...server.done, context_id: client.generationRequest.context_id }]);
    const stamps = ofType(ws, "timestamps");
    for (const t of stamps) expect(Object.keys(t).sort()).toEqual(Object.keys(server.timestamps).sort());
    expect(stamps.flatMap((t) => t.word_timestamps.words)).toEqual(sentence.split(" "));
    const pcm = s16(chunks);
    const { words } = await transcribe(backend.wsUrl, pcm, `?auth_id=${KEY}`);
    expect(words.map((w) => w.text).join(" ")).toBe(sentence);
  }, 60_000);

  test("the docs' one-shot request at 8 kHz: audio at that rate, timestamps inside it, each sent before the chunk its words start in", async () => {
    const ws = new RecordingSocket(url(), "json");
    await ws.opened;
    ws.send({ ...client.generationRequest });
    await ws.until(() => ofType(ws, "done").length > 0, 20_000, "done");
    ws.close();
    const seconds = s16(ofType(ws, "chunk")).length / 8000;
    expect(seconds).toBeGreaterThan(1.5);
    const words = ofType(ws, "timestamps").flatMap((t) => t.word_timestamps.words);
    expect(words).toEqual(["Hello", "world", "I'm", "generating", "audio", "on", "Cartesia"]);
    const ends = ofType(ws, "timestamps").flatMap((t) => t.word_timestamps.end as number[]);
    expect(Math.max(...ends)).toBeLessThanOrEqual(seconds);
    // Order: the audio before a timestamps message never reaches that message's first word.
    let audioS = 0;
    for (const m of ws.messages.map((x) => x.message!)) {
      if (m.type === "chunk") audioS += Buffer.from(m.data, "base64").length / 2 / 8000;
      if (m.type === "timestamps") expect(m.word_timestamps.start[0]).toBeGreaterThanOrEqual(audioS - 0.101);
    }
  });

  test("flush gives the docs' flush_done with a growing flush_id; pcm_f32le gives float samples", async () => {
    const ws = new RecordingSocket(url(), "json");
    await ws.opened;
    const f32 = { output_format: { container: "raw", encoding: "pcm_f32le", sample_rate: 16000 } };
    ws.send(request("One. ", { ...f32, continue: true, flush: true }));
    ws.send(request("Two. ", { ...f32, continue: true, flush: true }));
    ws.send(request("", { ...f32, continue: false }));
    await ws.until(() => ofType(ws, "done").length > 0, 20_000, "done");
    ws.close();
    expect(ofType(ws, "flush_done").map((m) => m.flush_id)).toEqual([1, 2]);
    expect(Object.keys(ofType(ws, "flush_done")[0]).sort()).toEqual(Object.keys(server.flushDone).sort());
    const bytes = Buffer.concat(ofType(ws, "chunk").map((c) => Buffer.from(c.data, "base64")));
    const samples = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(samples.length / 16000).toBeGreaterThan(0.5);
    expect(Math.max(...samples.map(Math.abs))).toBeGreaterThan(0.05);
    expect(Math.max(...samples.map(Math.abs))).toBeLessThanOrEqual(1);
  });

  test("the docs' cancel stops a context: no more of its messages, and no done", async () => {
    const ws = new RecordingSocket(url("&pace=1&burst_s=0"), "json");
    await ws.opened;
    ws.send(request("This is a long sentence that will be cancelled before it is over, on and on and on.", { continue: false }));
    await ws.until(() => ofType(ws, "chunk").length >= 2, 10_000, "two chunks");
    ws.send({ ...client.cancel, context_id: client.generationRequest.context_id });
    const atCancel = ws.messages.length;
    await sleep(400);
    expect(ws.messages.length).toBeLessThanOrEqual(atCancel + 1); // at most one already on the wire
    expect(ofType(ws, "done")).toHaveLength(0);
    ws.close();
  });

  test("the token: a minted access_token, or the key (api_key, Bearer, X-API-Key); anything else is refused with HTTP 401; the version is required", async () => {
    const base = `${backend.wsUrl}/tts/websocket?cartesia_version=2025-04-16`;
    expect(await upgradeStatus(`${base}&access_token=${ACCESS}`)).toBe(101);
    expect(await upgradeStatus(`${base}&access_token=${ACCESS}`)).toBe(101); // not single-use
    expect(await upgradeStatus(`${base}&api_key=${KEY}`)).toBe(101);
    expect(await upgradeStatus(base, { Authorization: `Bearer ${KEY}` })).toBe(101);
    expect(await upgradeStatus(base, { "X-API-Key": KEY })).toBe(101);
    expect(await upgradeStatus(`${base}&access_token=nope`)).toBe(401);
    expect(await upgradeStatus(`${base}&access_token=${KEY}`)).toBe(401);
    expect(await upgradeStatus(`${base}&auth_id=${KEY}`)).toBe(401);
    const noVersion = new RecordingSocket(`${backend.wsUrl}/tts/websocket?access_token=${ACCESS}`, "json");
    await noVersion.closed;
    expect(noVersion.messages[0].message).toMatchObject({ type: "error", status_code: 400 });
  });

  test("POST /access-token: the docs' response; a token without the tts grant, or expired (expires_in 1), is refused (HTTP 401)", async () => {
    const minted = await mintToken(docs.request);
    expect(minted.status).toBe(200);
    const body = await minted.json();
    expect(Object.keys(body)).toEqual(Object.keys(docs.response));
    const base = `${backend.wsUrl}/tts/websocket?cartesia_version=2025-04-16`;
    expect(await upgradeStatus(`${base}&access_token=${body.token}`)).toBe(101);
    const sttOnly = (await (await mintToken({ grants: { stt: true }, expires_in: 60 })).json()).token;
    expect(await upgradeStatus(`${base}&access_token=${sttOnly}`)).toBe(401);
    const short = (await (await mintToken({ grants: { tts: true }, expires_in: 1 })).json()).token;
    await sleep(1100);
    expect(await upgradeStatus(`${base}&access_token=${short}`)).toBe(401);
  });

  test("POST /access-token: a wrong key is HTTP 401 (plain text before version 2026-03-01, JSON from it); no grants, expires_in over 3600 or no version: 400", async () => {
    const wrongOld = await mintToken(docs.request, { Authorization: "Bearer not-the-key", "Cartesia-Version": "2025-04-16" });
    expect(wrongOld.status).toBe(401);
    expect(await wrongOld.text()).toMatch(/^Unauthorized: /);
    const wrongNew = await mintToken(docs.request, { "X-API-Key": "not-the-key", "Cartesia-Version": "2026-03-01" });
    expect(wrongNew.status).toBe(401);
    expect(Object.keys(await wrongNew.json()).sort()).toEqual(["error_code", "message", "request_id", "title"]);
    expect((await mintToken(docs.request, { "X-API-Key": KEY, "Cartesia-Version": "2025-04-16" })).status).toBe(200);
    expect((await mintToken({ expires_in: 60 })).status).toBe(400);
    expect((await mintToken({ grants: { tts: true }, expires_in: 3601 })).status).toBe(400);
    expect((await mintToken(docs.request, { Authorization: `Bearer ${KEY}` })).status).toBe(400);
  });

  test("GET /api/token?service=cartesia: the demo's token endpoint mints an access token with the tts grant that the socket accepts", async () => {
    const { token, expiresInS } = await (await fetch(`${backend.url}/api/token?service=cartesia`)).json();
    expect(token).not.toBe(KEY);
    expect(expiresInS).toBe(300);
    expect(await upgradeStatus(`${backend.wsUrl}/tts/websocket?cartesia_version=2025-04-16&access_token=${token}`)).toBe(101);
  });

  test("capacity=0: an error with status 429; a request off the docs' formats: 400", async () => {
    const full = new RecordingSocket(url("&capacity=0"), "json");
    await full.closed;
    expect(full.messages[0].message).toMatchObject({ type: "error", done: true, status_code: 429 });
    const ws = new RecordingSocket(url(), "json");
    await ws.opened;
    ws.send(request("Hi", { output_format: { container: "wav", encoding: "pcm_s16le", sample_rate: 24000 } }));
    await ws.until(() => ofType(ws, "error").length > 0, 5000, "error");
    expect(ofType(ws, "error")[0]).toMatchObject({ status_code: 400, context_id: client.generationRequest.context_id });
    ws.close();
  });

  test("delay_ms holds the first audio; stall_ms opens a gap in the middle of the stream", async () => {
    const timed = async (query: string) => {
      const ws = new RecordingSocket(url(query), "json");
      await ws.opened;
      ws.send(request("One two three four five six seven eight.", { continue: false }));
      await ws.until(() => ofType(ws, "done").length > 0, 20_000, "done");
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
