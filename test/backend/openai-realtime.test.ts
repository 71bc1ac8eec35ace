// The OpenAI Realtime emulator (demo/server/emulators/openai-realtime.mjs) over a real socket:
// real speech in (the speech fixtures, 24 kHz s16 base64), pocketsphinx hearing it, ELIZA's
// reply spoken by flite out; cancel, truncate (with the service's wording when refused), a
// function tool, ephemeral keys, fault knobs. The docs' example messages
// (test/fixtures/openai-realtime/) are sent as they are and have the shapes the emulator sends.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { synthesize } from "../../demo/server/flite.mjs";
import { mintJwt } from "../../demo/server/jwt.mjs";
import { floatToInt16 } from "../../demo/server/resample.mjs";
import { RecordingSocket, fixture24k, transcribe, upgradeStatus, type Message } from "./helpers";
import { sleep } from "../lib/wait.mjs";

const KEY = "test-realtime-key";
const fixtures = new URL("../fixtures/openai-realtime/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, fixtures), "utf8"));
const client = docs("client");
const STORY = "tell me a long story";

let backend: ReferenceBackend;
/** Every socket opened here, so the shape test can look at everything the emulator sent. */
const sockets: RecordingSocket[] = [];
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
});
afterAll(() => backend?.close());

function connect(query = "", key = KEY) {
  const s = new RecordingSocket(`${backend.wsUrl}/v1/realtime?model=gpt-realtime${query}`, "json", ["realtime", `openai-insecure-api-key.${key}`]);
  sockets.push(s);
  return s;
}
async function ready(query = "", update?: Message) {
  const s = connect(query);
  await s.next("session.created");
  if (update) {
    s.send(update);
    await s.until(() => s.of("session.updated").length > 0, 5000, "session.updated");
  }
  return s;
}
const noVad = { type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null, transcription: { model: "gpt-4o-transcribe" } } } } };

/** 24 kHz float speech as input_audio_buffer.append events of 100 ms, then `silenceS` of silence. */
function appendSpeech(s: RecordingSocket, pcm: Float32Array, silenceS: number) {
  const all = new Float32Array(pcm.length + Math.round(silenceS * 24000));
  all.set(pcm);
  const s16 = floatToInt16(all);
  for (let i = 0; i < s16.length; i += 2400) {
    const chunk = s16.slice(i, i + 2400);
    s.send({ type: "input_audio_buffer.append", audio: Buffer.from(chunk.buffer).toString("base64") });
  }
}
/** The output audio of a response, decoded from its base64 s16 deltas. */
function outputAudio(s: RecordingSocket, responseId: string) {
  const chunks = s.of("response.output_audio.delta").filter((m) => m.response_id === responseId).map((m) => Buffer.from(m.delta, "base64"));
  const bytes = Buffer.concat(chunks);
  const pcm = new Float32Array(bytes.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2) / 32768;
  return pcm;
}
const done = (s: RecordingSocket, n = 1) => s.until(() => s.of("response.done").length >= n, 20_000, `response.done #${n}`);
const errors = (s: RecordingSocket) => s.of("error").map((m) => m.error as Message);
const words = (text: string) => text.toLowerCase().replace(/[^a-z' ]/g, " ").split(/\s+/).filter(Boolean);
async function realtimeLog(sessionId: string) {
  const body = (await (await fetch(`${backend.url}/__realtime/log`)).json()) as { sessions: Message[] };
  return body.sessions.find((l) => l.session_id === sessionId)!;
}
/** Asks for a second response and, once it has read the conversation, cancels it (its paced audio is not needed). */
async function nextResponseRead(s: RecordingSocket) {
  s.send(client.responseCreate);
  await s.until(() => s.of("response.created").length >= 2, 10_000, "response.created #2");
  s.send(client.responseCancel);
  await done(s, 2);
}
/** Asks for the long story, paced at real time, and waits until `ms` of its audio has arrived. */
async function storyPlaying(ms: number) {
  const s = await ready("&pace=1&burst_s=0.2", noVad);
  s.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: STORY }] } });
  s.send(client.responseCreate);
  await s.until(() => s.of("response.output_audio.delta").length * 100 >= ms, 10_000, `${ms} ms of audio`);
  return s;
}

describe("OpenAI Realtime /v1/realtime", () => {
  test("turn detection off: appended speech, commit and response.create give the question's transcript and ELIZA's reply spoken by flite", { timeout: 30_000 }, async () => {
    const { pcm } = await fixture24k("help-me");
    const s = await ready("&pace=0", noVad);
    appendSpeech(s, pcm, 0.4);
    s.send(client.commit);
    await s.next("conversation.item.input_audio_transcription.completed", 15_000);
    const transcript = s.of("conversation.item.input_audio_transcription.completed")[0].transcript;
    expect(transcript).toBe("can you help me");
    expect(s.of("input_audio_buffer.speech_started")).toHaveLength(0); // no server VAD
    s.send(client.responseCreate);
    await done(s);
    const response = s.of("response.done")[0].response;
    expect(response.status).toBe("completed");
    const reply = s.of("response.output_audio_transcript.done")[0].transcript;
    expect(reply).toBe(elizaReply(transcript));
    // The reply's audio is speech: the backend's own recogniser hears most of its words back
    // (11 of the 15 here, measured; silence or noise would give none).
    const heard = await transcribe(backend.wsUrl, outputAudio(s, response.id), `?auth_id=${KEY}`);
    const said = words(reply);
    const recognised = words(heard.words.map((w) => w.text).join(" "));
    const hits = said.filter((w) => recognised.includes(w)).length;
    if (process.env.REALTIME_FIGURES) console.log(`recognised ${hits} of ${said.length} reply words: "${reply}" → "${recognised.join(" ")}"`);
    expect(hits / said.length).toBeGreaterThanOrEqual(0.6);
    expect(response.output[0].content[0].transcript).toBe(reply);
    s.close();
  });

  test("server VAD: speech_started, speech_stopped, the commit and a response, all without the client asking", { timeout: 30_000 }, async () => {
    const { pcm, meta } = await fixture24k("weather-question");
    const s = await ready("&pace=0", { type: "session.update", session: { type: "realtime", audio: { input: { transcription: { model: "gpt-4o-transcribe" } } } } });
    expect(s.of("session.updated")[0].session.audio.input.turn_detection.type).toBe("server_vad");
    appendSpeech(s, pcm, 1.2);
    await done(s);
    const started = s.of("input_audio_buffer.speech_started")[0];
    const stopped = s.of("input_audio_buffer.speech_stopped")[0];
    expect(started.audio_start_ms).toBeLessThanOrEqual(meta.words[0].start * 1000);
    expect(stopped.audio_end_ms).toBeGreaterThan(meta.words.at(-1).start * 1000);
    expect(stopped.item_id).toBe(started.item_id);
    expect(s.of("input_audio_buffer.committed")[0].item_id).toBe(started.item_id);
    const transcript = s.of("conversation.item.input_audio_transcription.completed")[0].transcript;
    expect(transcript).toBe("what is the weather like today");
    expect(s.of("response.output_audio_transcript.done")[0].transcript).toBe(elizaReply(transcript));
    s.close();
  });

  test("server VAD with interrupt_response: speech over a reply cancels it (turn_detected), then the user's turn gets its own response", { timeout: 20_000 }, async () => {
    const { pcm } = await fixture24k("stop-please");
    const s = await ready("&pace=1&burst_s=0.2");
    s.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: STORY }] } });
    s.send(client.responseCreate);
    await s.until(() => s.of("response.output_audio.delta").length >= 3, 10_000, "the reply's audio");
    appendSpeech(s, pcm, 1.2);
    await s.until(() => s.of("response.created").length >= 2, 15_000, "the second response");
    s.send(client.responseCancel);
    await done(s, 2);
    const [first] = s.of("response.done").map((m) => m.response);
    expect(first.status).toBe("cancelled");
    expect(first.status_details.reason).toBe("turn_detected");
    const types = s.messages.map((m) => m.message?.type);
    expect(types.indexOf("input_audio_buffer.speech_started")).toBeLessThan(types.indexOf("response.done"));
    const firstDone = types.indexOf("response.done");
    const lateDelta = s.messages.slice(firstDone).some((m) => m.message?.type === "response.output_audio.delta" && m.message.response_id === first.id);
    expect(lateDelta).toBe(false);
    const log = await realtimeLog(s.of("session.created")[0].session.id);
    expect(log.responses[1].input.at(-1)).toEqual({ role: "user", text: "stop please stop" });
    s.close();
  });

  test("response.cancel mid-reply: response.done cancelled (client_cancelled) and no audio delta after it", { timeout: 20_000 }, async () => {
    const s = await storyPlaying(300);
    s.send(client.responseCancel);
    await done(s);
    const response = s.of("response.done")[0].response;
    expect(response.status).toBe("cancelled");
    expect(response.status_details.reason).toBe("client_cancelled");
    await sleep(600); // paced deltas would have kept coming by now
    const types = s.messages.map((m) => m.message?.type);
    expect(types.lastIndexOf("response.output_audio.delta")).toBeLessThan(types.indexOf("response.done"));
    const story = elizaReply(STORY);
    expect(s.of("response.output_audio.delta").length * 0.1).toBeLessThan(story.split(" ").length * 0.25);
    // Cancelling again: nothing is active.
    s.send(client.responseCancel);
    await s.until(() => errors(s).length > 0, 5000, "error");
    expect(errors(s)[0]).toMatchObject({ type: "invalid_request_error", code: "response_cancel_not_active", message: "Cancellation failed: no active response found" });
    s.close();
  });

  test("a truncate within the sent audio cuts the reply there and deletes its transcript: the next response reads nothing of it", { timeout: 20_000 }, async () => {
    const s = await storyPlaying(1800);
    s.send(client.responseCancel);
    await done(s);
    const itemId = s.of("response.output_item.added")[0].item.id;
    // Cut halfway between the midpoints of two words in the first phrase (flite's timings).
    const first = synthesize(elizaReply(STORY).split(" ").slice(0, 6).join(" "), "slt").words;
    const mids = first.map((w) => ((w.start + w.stop) / 2) * 1000);
    const k = mids.findIndex((m) => m > 700);
    const cutMs = Math.round((mids[k - 1] + mids[k]) / 2);
    s.send({ ...client.truncate, item_id: itemId, audio_end_ms: cutMs });
    await s.next("conversation.item.truncated");
    expect(s.of("conversation.item.truncated")[0]).toMatchObject({ item_id: itemId, content_index: 0, audio_end_ms: cutMs });
    const heard = first.slice(0, k).map((w) => w.text).join(" ");
    s.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "I feel tired" }] } });
    await nextResponseRead(s);
    const log = await realtimeLog(s.of("session.created")[0].session.id);
    expect(log.truncates).toEqual([expect.objectContaining({ item_id: itemId, audio_end_ms: cutMs, accepted: true })]);
    expect(log.truncates[0].audioSentMs).toBeGreaterThanOrEqual(1800);
    const input = log.responses[1].input as { role: string; text: string }[];
    expect(input.map((i) => i.role)).toEqual(["user", "assistant", "user"]);
    // "Truncating audio will delete the server-side text transcript" (the truncate reference).
    expect(input[1].text).toBe("");
    expect(log.truncates[0].heard).toBe(heard);
    expect(elizaReply(STORY).startsWith(heard)).toBe(true);
    s.close();
  });

  test("a truncate past the sent audio is refused with the service's wording and changes nothing; so are unknown and user items", { timeout: 20_000 }, async () => {
    const s = await storyPlaying(500);
    s.send(client.responseCancel);
    await done(s);
    const itemId = s.of("response.output_item.added")[0].item.id;
    const sessionId = s.of("session.created")[0].session.id;
    const sentMs = (await realtimeLog(sessionId)).responses[0].audioSentMs;
    const past = Math.floor(sentMs) + 1000;
    s.send({ ...client.truncate, item_id: itemId, audio_end_ms: past });
    s.send(client.truncate); // the docs' example: msg_002, not in this conversation
    s.send({ ...client.truncate, item_id: s.of("conversation.item.added")[0].item.id }); // the user's message
    await s.until(() => errors(s).length >= 3, 5000, "three errors");
    expect(errors(s)[0]).toEqual({ type: "invalid_request_error", code: "invalid_value", message: `Audio content of ${Math.floor(sentMs)}ms is already shorter than ${past}ms`, param: null, event_id: "event_678" });
    expect(errors(s)[1].message).toBe("Conversation item with id 'msg_002' not found.");
    expect(errors(s)[2].message).toBe("Only model output audio messages can be truncated");
    expect(s.of("conversation.item.truncated")).toHaveLength(0);
    const log = await realtimeLog(sessionId);
    expect(log.truncates.map((t: Message) => t.accepted)).toEqual([false, false, false]);
    expect(log.truncates[0]).toMatchObject({ audio_end_ms: past, audioSentMs: Math.floor(sentMs) });
    // Nothing changed: the next response still reads the whole sent transcript.
    s.send(client.userText);
    await nextResponseRead(s);
    const after = await realtimeLog(sessionId);
    expect(after.responses[1].input[1].text).toBe(after.responses[0].sentTranscript);
    // audio_end_ms is inclusive: exactly the audio sent is accepted, and so is 0 (nothing heard).
    s.send({ ...client.truncate, item_id: itemId, audio_end_ms: Math.floor(sentMs) });
    s.send({ ...client.truncate, item_id: itemId, audio_end_ms: 0 });
    await s.until(() => s.of("conversation.item.truncated").length >= 2, 5000, "two truncated");
    expect(s.of("conversation.item.truncated").map((m) => m.audio_end_ms)).toEqual([Math.floor(sentMs), 0]);
    s.close();
  });

  test("a function tool: the scripted model calls get_time, then answers from the client's function_call_output", { timeout: 20_000 }, async () => {
    const s = await ready("&pace=0", client.sessionUpdate);
    s.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "What time is it?" }] } });
    s.send(client.responseCreate);
    await done(s);
    const call = s.of("response.output_item.done")[0].item;
    expect(call).toMatchObject({ type: "function_call", name: "get_time", arguments: "{}", status: "completed" });
    expect(s.of("response.function_call_arguments.done")[0]).toMatchObject({ call_id: call.call_id, name: "get_time", arguments: "{}" });
    expect(s.of("response.output_audio.delta")).toHaveLength(0);
    s.send({ ...client.functionCallOutput, item: { ...client.functionCallOutput.item, call_id: call.call_id } });
    s.send(client.responseCreate);
    await done(s, 2);
    expect(s.of("response.output_audio_transcript.done")[0].transcript).toBe("The time is ten past two.");
    // conversation.item.delete: a known item goes, the docs' example id is unknown.
    s.send({ ...client.delete, item_id: call.id });
    s.send(client.delete);
    await s.until(() => errors(s).length > 0 && s.of("conversation.item.deleted").length > 0, 5000, "delete answers");
    expect(s.of("conversation.item.deleted")[0].item_id).toBe(call.id);
    expect(errors(s)[0].message).toBe("Error deleting item: the item with id 'msg_003' does not exist.");
    // conversation.item.retrieve (sent by @openai/agents-realtime for each item): the item as held; unknown ids are errors.
    const answer = s.of("response.output_item.done").at(-1)!.item as Message;
    s.send({ type: "conversation.item.retrieve", event_id: "event_901", item_id: answer.id });
    s.send({ type: "conversation.item.retrieve", event_id: "event_902", item_id: call.id });
    await s.until(() => s.of("conversation.item.retrieved").length > 0 && errors(s).length > 1, 5000, "retrieve answers");
    expect(s.of("conversation.item.retrieved")[0].item).toMatchObject({ id: answer.id, type: "message", role: "assistant" });
    expect(errors(s)[1]).toMatchObject({ code: "item_not_found", event_id: "event_902" });
    s.close();
  });

  test("ephemeral keys: minted with the API key, open a session with the minted config until they expire; wrong keys are refused with invalid_api_key and close 3000", { timeout: 20_000 }, async () => {
    const mint = (auth: string) =>
      fetch(`${backend.url}/v1/realtime/client_secrets`, { method: "POST", headers: { Authorization: auth, "Content-Type": "application/json" }, body: JSON.stringify(docs("token").request) });
    const minted = await mint(`Bearer ${KEY}`);
    expect(minted.status).toBe(200);
    const secret = (await minted.json()) as Message;
    expect(Object.keys(secret).sort()).toEqual(Object.keys(docs("token").response).sort());
    expect(secret.value).toMatch(/^ek_/);
    expect(Math.abs(secret.expires_at - (Date.now() / 1000 + 600))).toBeLessThan(5);
    const denied = await mint("Bearer wrong");
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as Message).error.code).toBe("invalid_api_key");

    const withKey = connect("", secret.value);
    const created = (await withKey.next("session.created")).message!;
    expect(created.session.instructions).toBe(docs("token").request.session.instructions);
    expect(withKey.ws.protocol).toBe("realtime");
    withKey.close();
    const page = (await (await fetch(`${backend.url}/api/token?service=openai-realtime`)).json()) as Message;
    const fromPage = connect("", page.token);
    await fromPage.next("session.created");
    fromPage.close();

    const expired = `ek_${mintJwt(KEY, -5, { aud: "openai-realtime" })}`;
    for (const [key, wording] of [["ek_not-a-key", /^Incorrect API key provided/], [expired, /expired/]] as const) {
      const s = connect("", key);
      const closed = await s.closed;
      expect(closed).toMatchObject({ code: 3000, reason: "invalid_request_error.invalid_api_key" });
      expect(errors(s)[0].code).toBe("invalid_api_key");
      expect(errors(s)[0].message).toMatch(wording);
      expect(s.of("session.created")).toHaveLength(0);
    }
    // A Node client may send the key as a header instead.
    const header = new RecordingSocket(`${backend.wsUrl}/v1/realtime`, "json", undefined, { Authorization: `Bearer ${KEY}` });
    await header.next("session.created");
    header.close();
  });

  test("fault knobs: capacity refuses the handshake with 429; drop_after cuts the socket; malformed sends bytes that are not JSON", { timeout: 15_000 }, async () => {
    expect(await upgradeStatus(`${backend.wsUrl}/v1/realtime?capacity=0`, { Authorization: `Bearer ${KEY}` })).toBe(429);
    const dropped = connect("&drop_after=2");
    await dropped.next("session.created");
    dropped.send(client.sessionUpdateNoVad);
    expect((await dropped.closed).code).toBe(1006);
    expect(dropped.messages).toHaveLength(2);
    const malformed = connect("&malformed=1");
    await malformed.until(() => malformed.messages.length >= 2, 5000, "two messages");
    expect(malformed.messages[1]).toMatchObject({ message: null, raw: "{not json" });
    malformed.close();
  });

  test("bad input gets error events and the socket lives on: malformed JSON, an unknown type, an event over 15 MiB, an empty commit, a second voice", { timeout: 20_000 }, async () => {
    const s = await ready("&pace=0");
    s.ws.send("{not json");
    s.send({ type: "input_audio_buffer.explode" });
    s.ws.send(JSON.stringify({ type: "input_audio_buffer.append", audio: "A".repeat(15 * 1024 * 1024 + 8) }));
    s.send(client.commit);
    s.send(client.clear);
    await s.until(() => errors(s).length >= 4 && s.of("input_audio_buffer.cleared").length > 0, 10_000, "four errors and cleared");
    expect(errors(s).map((e) => e.code)).toEqual(["invalid_json", "invalid_value", "message_too_large", "input_audio_buffer_commit_empty"]);
    expect(errors(s)[3].message).toBe("Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has 0.00ms of audio.");
    expect(errors(s)[3].event_id).toBe("event_789");
    s.send(client.userText);
    s.send(client.responseCreate);
    await done(s);
    s.send({ type: "session.update", session: { type: "realtime", audio: { output: { voice: "cedar" } } } });
    await s.until(() => errors(s).length >= 5, 5000, "voice error");
    expect(errors(s)[4].message).toBe("Cannot update a conversation's voice if assistant audio is present.");
    s.send(client.sessionUpdateSemanticVad);
    await s.until(() => s.of("session.updated").length > 0, 5000, "session.updated");
    expect(s.of("session.updated")[0].session.audio.input.turn_detection).toMatchObject({ type: "semantic_vad", eagerness: "high" });
    s.close();
  });

  // Runs last: the shape check reads what every socket above received.
  test("the docs' example messages: the fixture session.update is taken as written, and every server event here has the keys and types of the docs' example", async () => {
    const s = await ready("", client.sessionUpdate);
    const updated = s.of("session.updated")[0];
    s.close();
    expect(updated.session.audio.output.voice).toBe("marin");
    expect(updated.session.tools[0].name).toBe("get_time");
    expect(updated.session.audio.input.transcription.model).toBe("gpt-4o-transcribe");
    const sent = sockets.flatMap((s) => s.messages.map((m) => m.message).filter((m): m is Message => m !== null));
    for (const example of docs("server").messages as Message[]) {
      const ours = sent.filter((m) => m.type === example.type);
      expect(ours.length, example.type).toBeGreaterThan(0);
      const have = new Map<string, string>();
      for (const m of ours) for (const [path, type] of shape(m)) if (!have.has(path) || have.get(path) === "null") have.set(path, type);
      for (const [path, type] of shape(example)) {
        const ok = have.has(path) && (type === "null" || have.get(path) === "null" || have.get(path) === type);
        expect(ok ? path : `${path}: ${have.get(path)} where the docs have ${type}`, example.type).toBe(path);
      }
    }
  });
});

/** path → JSON type for every key of a value (array items merged; null where the example allows it). */
function shape(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
  const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  if (path && (!out.has(path) || out.get(path) === "null")) out.set(path, type);
  if (Array.isArray(value)) for (const v of value) shape(v, `${path}[]`, out);
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) shape(v, `${path}.${k}`, out);
  return out;
}
