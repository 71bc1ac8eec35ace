// The Gemini Live emulator (demo/server/emulators/gemini-live.mjs) over a real socket: real
// speech in (the speech fixtures, 16 kHz s16 base64), pocketsphinx hearing it, ELIZA's reply
// spoken by flite out at 24 kHz; automatic and manual activity detection, an interruption,
// clientContent turns, a function call, ephemeral tokens, refusals and fault knobs. The docs'
// example messages (test/fixtures/gemini-live/) are sent as they are, and the shapes the
// emulator sends are checked against the docs' examples.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { RecordingSocket, transcribe, upgradeStatus, type Message } from "./helpers";
import { sleep } from "../lib/wait.mjs";

const KEY = "test-gemini-key";
const fixtures = new URL("../fixtures/gemini-live/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, fixtures), "utf8"));
const client = docs("client");
const STORY = "tell me a long story";
const V1BETA = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";
const CONSTRAINED = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained";

let backend: ReferenceBackend;
const sockets: RecordingSocket[] = [];
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
});
afterAll(() => backend?.close());

function connect(query = "", path = V1BETA, credential = `key=${KEY}`) {
  const s = new RecordingSocket(`${backend.wsUrl}${path}?${credential}${query}`, "json");
  sockets.push(s);
  return s;
}
/** Messages carrying `field` (a top-level field, or serverContent's when it starts with "."). */
const of = (s: RecordingSocket, field: string): Message[] =>
  s.messages.map((m) => m.message).filter((m): m is Message => m !== null && (field.startsWith(".") ? m.serverContent?.[field.slice(1)] !== undefined : m[field] !== undefined));
const until = (s: RecordingSocket, field: string, n = 1, ms = 20_000) => s.until(() => of(s, field).length >= n, ms, `${field} #${n}`);
async function ready(setup: Message = client.setup, query = "") {
  const s = connect(query);
  await s.opened;
  s.send(setup);
  await until(s, "setupComplete", 1, 10_000);
  return s;
}
const manual = client.setupManual;

function fixture16k(name: string): Int16Array {
  return readWav(readFileSync(new URL(`../fixtures/speech/${name}.wav`, import.meta.url))).samples;
}
/** 16 kHz s16 as realtimeInput.audio messages of 100 ms, then `silenceS` of silence. */
function sendSpeech(s: RecordingSocket, pcm: Int16Array, silenceS: number, mediaChunks = false) {
  const all = new Int16Array(pcm.length + Math.round(silenceS * 16000));
  all.set(pcm);
  for (let i = 0; i < all.length; i += 1600) {
    const data = Buffer.from(all.slice(i, i + 1600).buffer).toString("base64");
    const chunk = { data, mimeType: "audio/pcm;rate=16000" };
    s.send(mediaChunks ? { realtimeInput: { mediaChunks: [chunk] } } : { realtimeInput: { audio: chunk } });
  }
}
/** The model's output audio: every inlineData part decoded, 24 kHz float. */
function outputAudio(s: RecordingSocket, from = 0, to = Infinity) {
  const chunks = s.messages.slice(from, to).flatMap((m) => m.message?.serverContent?.modelTurn?.parts ?? []).map((p: Message) => Buffer.from(p.inlineData.data, "base64"));
  const bytes = Buffer.concat(chunks);
  const pcm = new Float32Array(bytes.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2) / 32768;
  return pcm;
}
const said = (s: RecordingSocket, field: "outputTranscription" | "inputTranscription") => of(s, `.${field}`).map((m) => m.serverContent[field].text).join("");
const words = (text: string) => text.toLowerCase().replace(/[^a-z' ]/g, " ").split(/\s+/).filter(Boolean);
const index = (s: RecordingSocket, field: string) => s.messages.findIndex((m) => m.message?.serverContent?.[field] !== undefined);
/** The log of the newest socket the emulator took (each test reads it for the socket it opened last). */
async function geminiLog() {
  const body = (await (await fetch(`${backend.url}/__gemini/log`)).json()) as { sessions: Message[] };
  return body.sessions.at(-1)!;
}
const userTurn = (text: string, turnComplete = true) => ({ clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete } });

describe("Gemini Live BidiGenerateContent", () => {
  test("setup (the docs' example) → setupComplete; automatic activity detection hears the question and ELIZA's reply is spoken by flite at 24 kHz", { timeout: 30_000 }, async () => {
    const s = await ready(client.setup, "&pace=0");
    expect(s.messages[0].message).toEqual({ setupComplete: {} });
    sendSpeech(s, fixture16k("help-me"), 1.2);
    await until(s, ".turnComplete");
    expect(said(s, "inputTranscription")).toBe("can you help me");
    const reply = said(s, "outputTranscription");
    expect(reply).toBe(elizaReply("can you help me"));
    expect(index(s, "generationComplete")).toBeLessThan(index(s, "turnComplete"));
    const parts = of(s, ".modelTurn").flatMap((m) => m.serverContent.modelTurn.parts);
    expect(new Set(parts.map((p: Message) => p.inlineData.mimeType))).toEqual(new Set(["audio/pcm;rate=24000"]));
    expect(of(s, "usageMetadata")[0].usageMetadata.responseTokenCount).toBe(words(reply).length);
    // The audio is the reply's speech: the backend's recogniser hears most of its words back.
    const heard = await transcribe(backend.wsUrl, outputAudio(s), `?auth_id=${KEY}`);
    const recognised = words(heard.words.map((w) => w.text).join(" "));
    const hits = words(reply).filter((w) => recognised.includes(w)).length;
    expect(hits / words(reply).length).toBeGreaterThanOrEqual(0.6);
    s.close();
  });

  test("manual activity (automaticActivityDetection.disabled): audio outside the activity is dropped; activityStart … activityEnd is the turn (mediaChunks taken too)", { timeout: 30_000 }, async () => {
    const s = await ready(manual, "&pace=0");
    sendSpeech(s, fixture16k("stop-please"), 0.3); // outside any activity: not a turn
    s.send(client.activityStart);
    sendSpeech(s, fixture16k("weather-question"), 0.2, true);
    s.send(client.activityEnd);
    await until(s, ".turnComplete");
    expect(said(s, "inputTranscription")).toBe("what is the weather like today");
    expect(said(s, "outputTranscription")).toBe(elizaReply("what is the weather like today"));
    const log = await geminiLog();
    expect(log).toMatchObject({ automaticActivityDetection: false, activityStarts: 1, activityEnds: 1 });
    expect(log.turns[0].input.filter((i: Message) => i.role === "user")).toEqual([{ role: "user", text: "what is the weather like today" }]);
    // An activity with nothing in it gets an empty turnComplete and no model turn.
    s.send(client.activityStart);
    sendSpeech(s, new Int16Array(0), 0.5);
    s.send(client.activityEnd);
    await until(s, ".turnComplete", 2);
    expect((await geminiLog()).turns).toHaveLength(1);
    s.close();
  });

  test("activityStart mid-reply interrupts: interrupted then turnComplete, no audio after, and the conversation keeps the words sent", { timeout: 20_000 }, async () => {
    const s = await ready(manual, "&pace=1&burst_s=0.2");
    s.send(userTurn(STORY));
    await s.until(() => of(s, ".modelTurn").length >= 8, 10_000, "800 ms of audio");
    s.send(client.activityStart);
    await until(s, ".interrupted");
    await until(s, ".turnComplete");
    const at = index(s, "interrupted");
    expect(index(s, "turnComplete")).toBeGreaterThan(at);
    expect(of(s, ".generationComplete")).toHaveLength(0);
    await sleep(600); // paced audio would have kept coming by now
    const after = s.messages.slice(at).filter((m) => m.message?.serverContent?.modelTurn);
    expect(after).toHaveLength(0);
    const log = await geminiLog();
    const turn = log.turns[0];
    expect(turn.status).toBe("interrupted");
    const story = elizaReply(STORY);
    expect(story.startsWith(turn.contextText)).toBe(true);
    expect(turn.contextText.length).toBeGreaterThan(0);
    expect(turn.contextText.length).toBeLessThan(story.length);
    expect(turn.audioSentMs).toBeGreaterThanOrEqual(800);
    // A clientContent turn (turnComplete false) is appended; the next turn reads it after the kept words.
    s.send(userTurn("The user heard only: Tell me", false));
    s.send(client.activityEnd); // an empty activity: no turn of its own
    s.send(userTurn("I feel tired"));
    await s.until(() => (of(s, ".outputTranscription").length > 0 && said(s, "outputTranscription").includes(elizaReply("I feel tired"))), 15_000, "the next reply");
    const next = (await geminiLog()).turns[1];
    expect(next.input.slice(-4)).toEqual([
      { role: "user", text: STORY },
      { role: "model", text: turn.contextText },
      { role: "user", text: "The user heard only: Tell me" },
      { role: "user", text: "I feel tired" },
    ]);
    expect((await geminiLog()).clientContents.map((c: Message) => c.turnComplete)).toEqual([true, false, true]);
    s.close();
  });

  test("automatic detection with START_OF_ACTIVITY_INTERRUPTS: speech over the reply interrupts it, and the user's words get their own turn", { timeout: 30_000 }, async () => {
    // 480 ms of silence ends an utterance (the docs' example setup's 100 ms would cut "stop please stop" in three).
    const setup = structuredClone(client.setup);
    setup.setup.realtimeInputConfig.automaticActivityDetection.silenceDurationMs = 480;
    const s = await ready(setup, "&pace=1&burst_s=0.2");
    s.send(userTurn(STORY));
    await s.until(() => of(s, ".modelTurn").length >= 3, 10_000, "the reply's audio");
    sendSpeech(s, fixture16k("stop-please"), 1.2);
    await until(s, ".interrupted", 1, 15_000);
    await until(s, ".inputTranscription", 1, 15_000);
    expect(said(s, "inputTranscription")).toBe("stop please stop");
    // The interruption came at the speech's start, before its transcription.
    expect(index(s, "interrupted")).toBeLessThan(index(s, "inputTranscription"));
    const log = await geminiLog();
    expect(log.turns[0].status).toBe("interrupted");
    expect(log.turns[1].input.at(-1)).toEqual({ role: "user", text: "stop please stop" });
    s.close();
  });

  test("a function call: toolCall get_time, then the docs' toolResponse shape continues the turn", { timeout: 20_000 }, async () => {
    const s = await ready(client.setup, "&pace=0");
    s.send(userTurn("What time is it?"));
    await until(s, "toolCall");
    const call = of(s, "toolCall")[0].toolCall.functionCalls[0];
    expect(call).toMatchObject({ name: "get_time", args: {} });
    expect(typeof call.id).toBe("string");
    const response = structuredClone(client.toolResponse);
    response.toolResponse.functionResponses[0].id = call.id;
    s.send(response);
    await until(s, ".turnComplete");
    expect(said(s, "outputTranscription")).toBe("The time is ten past two.");
    // A call cancelled by a new turn before its answer: toolCallCancellation with its id.
    s.send(userTurn("what time is it"));
    await until(s, "toolCall", 2);
    const second = of(s, "toolCall")[1].toolCall.functionCalls[0];
    s.send(userTurn("never mind", false));
    await until(s, "toolCallCancellation");
    expect(of(s, "toolCallCancellation")[0].toolCallCancellation.ids).toEqual([second.id]);
    s.close();
  });

  test("ephemeral tokens: minted with the API key (uses 1) open one constrained session; a spent, expired or unknown token is refused with close 1007", { timeout: 20_000 }, async () => {
    const mint = (body: Message, key = KEY) =>
      fetch(`${backend.url}/v1alpha/auth_tokens`, { method: "POST", headers: { "x-goog-api-key": key, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const now = Date.now();
    const request = { ...docs("token").request, expireTime: new Date(now + 30 * 60_000).toISOString(), newSessionExpireTime: new Date(now + 60_000).toISOString() };
    const minted = await mint(request);
    expect(minted.status).toBe(200);
    const token = (await minted.json()) as Message;
    expect(Object.keys(token).sort()).toEqual(Object.keys(docs("token").response).sort());
    expect(token.name).toMatch(/^auth_tokens\//);
    expect(token).toMatchObject({ uses: 1, expireTime: request.expireTime, newSessionExpireTime: request.newSessionExpireTime });
    const denied = await mint(request, "wrong");
    expect(denied.status).toBe(400);
    expect(((await denied.json()) as Message).error.message).toBe("API key not valid. Please pass a valid API key.");
    expect((await mint({ expireTime: new Date(now + 21 * 3600_000).toISOString() })).status).toBe(400);

    const first = connect("", CONSTRAINED, `access_token=${token.name}`);
    await first.opened;
    first.send(client.setup);
    await until(first, "setupComplete");
    first.close();
    const stale = await mint({ newSessionExpireTime: new Date(now - 1000).toISOString() });
    const staleName = ((await stale.json()) as Message).name;
    const cases = [
      [token.name, /no uses left/],
      [staleName, /^API key expired\. Please renew the API key\.$/],
      ["auth_tokens/unknown", /^API key not valid/],
    ] as const;
    for (const [name, reason] of cases) {
      const s = connect("", CONSTRAINED, `access_token=${name}`);
      const closed = await s.closed;
      expect(closed.code).toBe(1007);
      expect(closed.reason).toMatch(reason);
    }
    // The API key does not open the constrained endpoint by access_token, and a wrong key is refused on v1beta.
    expect((await connect("", V1BETA, "key=wrong").closed).code).toBe(1007);
    const page = (await (await fetch(`${backend.url}/api/token?service=gemini-live`)).json()) as Message;
    const fromPage = connect("", CONSTRAINED, `access_token=${page.token}`);
    await fromPage.opened;
    fromPage.send(manual);
    await until(fromPage, "setupComplete");
    fromPage.close();
  });

  test("bad input closes the socket with 1007 and the reason: malformed JSON, an unknown field, a first message that is not setup; a frame over 8 MiB closes with 1009", { timeout: 20_000 }, async () => {
    const notJson = connect();
    await notJson.opened;
    notJson.ws.send("{not json");
    expect(await notJson.closed).toMatchObject({ code: 1007, reason: expect.stringMatching(/^Invalid JSON payload received\./) });
    const unknown = await ready();
    unknown.send({ realtimeInput: {}, explode: {} });
    expect(await unknown.closed).toMatchObject({ code: 1007, reason: 'Invalid JSON payload received. Unknown name "explode": Cannot find field.' });
    const early = connect();
    await early.opened;
    early.send(client.audio);
    expect(await early.closed).toMatchObject({ code: 1007, reason: expect.stringMatching(/first message must be setup/) });
    const big = await ready();
    big.ws.send(JSON.stringify({ realtimeInput: { audio: { mimeType: "audio/pcm;rate=16000", data: "A".repeat(8 * 1024 * 1024 + 8) } } }));
    expect((await big.closed).code).toBe(1009);
    // A binary frame holding JSON is read like a text frame.
    const binary = connect();
    await binary.opened;
    binary.ws.send(Buffer.from(JSON.stringify(manual)));
    await until(binary, "setupComplete");
    binary.close();
  });

  test("fault knobs: capacity refuses the handshake with 429; drop_after cuts the socket; malformed sends bytes that are not JSON; binary sends JSON in binary frames; go_away sends goAway and closes when its time is up", { timeout: 15_000 }, async () => {
    expect(await upgradeStatus(`${backend.wsUrl}${V1BETA}?key=${KEY}&capacity=0`)).toBe(429);
    const dropped = await ready(manual, "&drop_after=1");
    expect((await dropped.closed).code).toBe(1006);
    expect(dropped.messages).toHaveLength(1);
    const malformed = await ready(manual, "&malformed=1");
    await malformed.until(() => malformed.messages.length >= 2, 5000, "two messages");
    expect(malformed.messages[1]).toMatchObject({ message: null, raw: "{not json" });
    malformed.close();
    const binary = await ready(manual, "&binary=1");
    expect(Buffer.isBuffer(binary.messages[0].raw)).toBe(true);
    expect(binary.messages[0].message).toEqual({ setupComplete: {} });
    binary.close();
    // goAway, then the close once its time is up.
    const leaving = await ready(manual, "&go_away_after_ms=50&go_away_left_ms=300");
    expect((await leaving.closed).code).toBe(1011);
    expect(leaving.messages.map((m) => m.message)).toEqual([{ setupComplete: {} }, { goAway: { timeLeft: "0.3s" } }]);
  });

  // Runs last: the shape check reads what every socket above received.
  test("every server message of the docs' examples is sent here with the keys and types of the example", () => {
    const sent = sockets.flatMap((s) => s.messages.map((m) => m.message).filter((m): m is Message => m !== null));
    const kindOf = (m: Message) => Object.keys(m).filter((k) => k !== "usageMetadata").map((k) => (k === "serverContent" ? `serverContent.${Object.keys(m.serverContent).join("+")}` : k)).join(",") || "usageMetadata";
    for (const example of docs("server").messages as Message[]) {
      const ours = sent.filter((m) => kindOf(m) === kindOf(example));
      expect(ours.length, kindOf(example)).toBeGreaterThan(0);
      const have = new Map<string, string>();
      for (const m of ours) for (const [path, type] of shape(m)) if (!have.has(path)) have.set(path, type);
      for (const [path, type] of shape(example)) expect(have.get(path), `${kindOf(example)} ${path}`).toBe(type);
    }
  });
});

function shape(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
  const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  if (path && !out.has(path)) out.set(path, type);
  if (Array.isArray(value)) for (const v of value) shape(v, `${path}[]`, out);
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) shape(v, `${path}.${k}`, out);
  return out;
}
