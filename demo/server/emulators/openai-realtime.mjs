// OpenAI Realtime emulator (GA protocol) over WebSocket, on the backend's own parts:
// pocketsphinx hears (../recogniser.mjs), ELIZA answers and flite speaks
// (openai-realtime-response.mjs).
//   WS   /v1/realtime?model=…            JSON events both ways; audio is PCM 16-bit 24 kHz mono, base64
//   POST /v1/realtime/client_secrets     ephemeral keys (openai-realtime-tokens.mjs)
//   GET  /__realtime/log                 what the emulator got, per socket: every truncate
//                                        {item_id, audio_end_ms, audioSentMs, accepted, heard} and every
//                                        response's input (what the "model" read), its item id and
//                                        word timings, for the tests and the realtime bench; every commit
//                                        {audio_ms, utterances, heard} (client turn detection)
// Client events: session.update, input_audio_buffer.append / commit / clear, conversation.item.create
// (user text, function_call_output), conversation.item.retrieve, conversation.item.truncate, conversation.item.delete,
// response.create, response.cancel. The conversation's items and truncation rules are
// core/realtime-conversation.mjs, the session config core/realtime-session.mjs.
// Turn detection: with server_vad / semantic_vad the recogniser's utterance start and end are
// speech_started (audio_start_ms) and speech_stopped, then the buffer is committed and, with
// create_response, a response starts; with interrupt_response a speech start cancels the
// response in progress (reason turn_detected). With `turn_detection: null` the client commits
// and asks for responses.
// Knobs (../knobs.mjs): capacity (HTTP 429 at the handshake), delay_ms (a slow handshake),
// drop_after(_ms), stall_ms (with stall_after_ms or stall_after), malformed, oversize, pace, burst_s.
// Built from OpenAI's public docs (read here in the stored copies of the reference pages):
//   https://platform.openai.com/docs/api-reference/realtime-client-events   (every client event's fields)
//   https://platform.openai.com/docs/api-reference/realtime-server-events   (every server event's fields)
//   https://developers.openai.com/api/reference/resources/realtime/client-events (session.update: only
//     the fields present change; null clears turn_detection; voice is fixed once audio was output)
//   https://platform.openai.com/docs/api-reference/realtime-sessions/create-realtime-client-secret
//   the server VAD and semantic VAD field docs (defaults, eagerness 8/4/2 s) as openai/openai-node
//     src/resources/realtime/client-secrets.ts carries them
//   https://developers.openai.com/api/docs/guides/realtime-vad  (server_vad is the default of a
//     speech-to-speech session; turn_detection lives at session.audio.input.turn_detection)
// Browser auth (subprotocols `realtime` + `openai-insecure-api-key.<key>`): openai-agents-js
// docs/src/content/docs/guides/voice-agents/build.mdx. The WebSocket and conversations guides
// were not in the stored copies; nothing here rests on them alone.
// The docs' example messages are in test/fixtures/openai-realtime/.
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { admitStream } from "../stream-gate.mjs";
import { sendJson } from "../http-json.mjs";
import { DECODER_RATE, FRAME_16K, StreamingRecogniser } from "../recogniser.mjs";
import { downsampler24to16, int16ToFloat } from "../resample.mjs";
import { addItem, deleteItem, findItem, truncateItem, wireItem } from "../core/realtime-conversation.mjs";
import { applySessionUpdate, defaultSession, endpointMs } from "../core/realtime-session.mjs";
import { PacedSender } from "./flite-speech.mjs";
import { RealtimeResponse, newId } from "./openai-realtime-response.mjs";
import { openaiRealtimeTokens } from "./openai-realtime-tokens.mjs";

const SERVICE = "openai-realtime";
export const REALTIME_PATH = "/v1/realtime";
/** The docs cap one input_audio_buffer.append at 15 MiB; no event may be larger here. */
export const MAX_EVENT_BYTES = 15 * 1024 * 1024;
/** "buffer too small. Expected at least 100ms of audio" */
const MIN_COMMIT_MS = 100;
const KEPT_LOGS = 200;
const SESSION_S = 60 * 60;

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 * @returns {import("../backend.mjs").Emulator}
 */
export function openaiRealtimeEmulator({ stats, pool, token }) {
  const tokens = openaiRealtimeTokens({ stats, key: token });
  /** @type {Record<string, any>[]} */
  const logs = [];
  /** @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {URL} url @param {import("node:http").IncomingMessage} req */
  const handle = async (ws, knobs, url, req) => {
    ws.on("error", () => {});
    const credential = tokens.check(req);
    const socket = new RealtimeSocket(ws, knobs, url.searchParams.get("model") ?? "gpt-realtime", stats);
    if (!credential.ok) {
      stats.add("http", "unauthorized");
      socket.error({ type: "invalid_request_error", code: "invalid_api_key", message: credential.message, param: null });
      ws.close(3000, "invalid_request_error.invalid_api_key");
      return;
    }
    // Capacity was checked before the upgrade (HTTP 429 there); this only counts.
    const gate = admitStream(stats, SERVICE, { ...knobs, capacity: undefined }, () => {});
    logs.push(socket.record);
    if (logs.length > KEPT_LOGS) logs.shift();
    ws.on("close", () => {
      gate?.closed();
      socket.dispose().then((decoder) => decoder && pool?.release(decoder));
    });
    ws.on("message", (data, isBinary) => socket.receive(/** @type {Buffer} */ (data), isBinary));
    socket.open(credential.session, pool ? pool.acquire(knobs).catch(() => null) : Promise.resolve(null));
  };
  return {
    name: SERVICE,
    sockets: { [REALTIME_PATH]: handle },
    http: {
      ...tokens.http,
      "/__realtime/log": (_req, res) => sendJson(res, 200, { sessions: logs }),
    },
    authorize: () => true, // the key is checked after the upgrade, as the service does
    mintForPage: tokens.forPage,
    async beforeUpgrade(_url, knobs) {
      await sleep(knobs.delayMs ?? 0);
      const open = /** @type {Record<string, number>} */ (stats.counters[/** @type {"stt"} */ (/** @type {unknown} */ (SERVICE))] ?? {}).open ?? 0;
      if (knobs.capacity !== undefined && open >= knobs.capacity) {
        stats.add(/** @type {any} */ (SERVICE), "rejected");
        return { status: 429, text: "Too Many Requests" };
      }
      return null;
    },
    health: () => ({ recogniser: pool !== null, paths: [REALTIME_PATH, "/v1/realtime/client_secrets", "/__realtime/log"] }),
  };
}

/** One /v1/realtime socket: the session, the input audio buffer, the conversation and its responses. */
class RealtimeSocket {
  /** @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {string} model @param {import("../stats.mjs").Stats} stats */
  constructor(ws, knobs, model, stats) {
    this.ws = ws;
    this.knobs = knobs;
    this.stats = stats;
    this.abort = new AbortController();
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add(/** @type {any} */ (SERVICE), "dropped") });
    this.sender = new PacedSender(this.faults, knobs, this.abort.signal);
    this.session = defaultSession({ id: newId("sess"), model, expiresAt: Math.floor(Date.now() / 1000) + SESSION_S });
    this.conversationId = newId("conv");
    /** @type {import("../core/realtime-conversation.mjs").Item[]} */
    this.items = [];
    /** @type {RealtimeResponse | null} */
    this.response = null;
    this.spoken = false;
    /** @type {StreamingRecogniser | null} */
    this.recogniser = null;
    this.resampler = downsampler24to16();
    this.pending = new Float32Array(0);
    this.bufferMs = 0;
    /** The buffer's s16 24 kHz bytes: a committed item keeps them for conversation.item.retrieved. @type {Buffer[]} */
    this.bufferBytes = [];
    /** Words of utterances that ended since the last commit (turn detection off). @type {string[]} */
    this.bufferWords = [];
    /** The id the next committed user item gets (speech_started announces it). */
    this.nextUserItem = newId("item");
    this.work = Promise.resolve();
    this.closed = false;
    /** Utterances the recogniser ended inside the buffer since the last commit (turn detection off). */
    this.bufferUtterances = 0;
    this.record = { session_id: this.session.id, model, truncates: /** @type {any[]} */ ([]), responses: /** @type {any[]} */ ([]), errors: /** @type {any[]} */ ([]), commits: /** @type {any[]} */ ([]) };
  }

  /** @param {Record<string, unknown>} event */
  send(event) {
    this.faults.send(JSON.stringify({ event_id: newId("event"), ...event }));
  }

  /** @param {{ type: string, code: string | null, message: string, param: string | null }} body @param {unknown} [clientEventId] */
  error(body, clientEventId) {
    this.record.errors.push(body);
    this.send({ type: "error", error: { ...body, event_id: typeof clientEventId === "string" ? clientEventId : null } });
  }

  /** @param {Record<string, any> | null} minted @param {Promise<import("../pocketsphinx.mjs").Decoder | null>} decoder */
  open(minted, decoder) {
    if (minted) {
      const merged = applySessionUpdate(this.session, minted, { spoken: false });
      if ("session" in merged) this.session = merged.session;
    }
    this.send({ type: "session.created", session: this.session });
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformed === "notype" ? JSON.stringify({ event_id: newId("event") }) : "{not json");
    if (oversize) this.send({ type: "response.output_audio_transcript.delta", delta: "x".repeat(oversize) });
    this.work = this.work.then(async () => {
      const d = await decoder;
      if (this.closed) return void (this.decoder = d);
      this.decoder = d;
      if (d) this.recogniser = new StreamingRecogniser(d, { ...this.knobs, endpointMs: endpointMs(this.session.audio.input.turn_detection) ?? 480 });
    });
  }

  async dispose() {
    this.closed = true;
    this.abort.abort();
    this.response?.cancel("client_cancelled");
    this.faults.dispose();
    await this.work.catch(() => {});
    return this.decoder ?? null;
  }

  /** @param {Buffer} data @param {boolean} isBinary */
  receive(data, isBinary) {
    if (this.closed) return;
    if (data.byteLength > MAX_EVENT_BYTES) {
      return this.error({ type: "invalid_request_error", code: "message_too_large", message: `The event is ${data.byteLength} bytes; events may be at most ${MAX_EVENT_BYTES} bytes (15 MiB).`, param: null });
    }
    /** @type {any} */
    let event;
    try {
      if (isBinary) throw new Error("a binary frame");
      event = JSON.parse(data.toString("utf8"));
    } catch (err) {
      return this.error({ type: "invalid_request_error", code: "invalid_json", message: `The server could not parse the event as JSON (${/** @type {Error} */ (err).message}). Send each client event as one JSON text frame.`, param: null });
    }
    if (typeof event !== "object" || event === null || typeof event.type !== "string") {
      return this.error({ type: "invalid_request_error", code: "missing_required_parameter", message: "Missing required parameter: 'type'.", param: "type" });
    }
    // Output-side events act at once; the rest wait for the audio sent before them.
    if (event.type === "response.cancel") return this.cancel(event);
    if (event.type === "conversation.item.truncate") return this.truncate(event);
    this.work = this.work.then(() => this.dispatch(event)).catch((err) => {
      this.error({ type: "server_error", code: null, message: `The emulator failed on ${event.type}: ${err.message}`, param: null }, event.event_id);
    });
  }

  /** @param {any} event */
  async dispatch(event) {
    if (this.closed) return;
    switch (event.type) {
      case "session.update": {
        const merged = applySessionUpdate(this.session, event.session, { spoken: this.spoken });
        if ("error" in merged) return this.error(merged.error, event.event_id);
        this.session = merged.session;
        const endpoint = endpointMs(this.session.audio.input.turn_detection);
        if (this.recogniser) this.recogniser.endpointFrames = Math.ceil((endpoint ?? 480) / 80);
        return this.send({ type: "session.updated", session: this.session });
      }
      case "input_audio_buffer.append":
        if (typeof event.audio !== "string") return this.error({ type: "invalid_request_error", code: "missing_required_parameter", message: "Missing required parameter: 'audio'.", param: "audio" }, event.event_id);
        return this.append(Buffer.from(event.audio, "base64"));
      case "input_audio_buffer.commit":
        return this.commit(event.event_id);
      case "input_audio_buffer.clear":
        await this.recogniser?.finish();
        this.pending = new Float32Array(0);
        this.bufferMs = 0;
        this.bufferBytes = [];
        this.bufferWords = [];
        this.bufferUtterances = 0;
        return this.send({ type: "input_audio_buffer.cleared" });
      case "conversation.item.create":
        return this.createItem(event);
      case "conversation.item.delete": {
        const deleted = deleteItem(this.items, event.item_id);
        if ("error" in deleted) return this.error(deleted.error, event.event_id);
        this.items = deleted.items;
        return this.send({ type: "conversation.item.deleted", item_id: event.item_id });
      }
      case "conversation.item.retrieve": {
        // https://platform.openai.com/docs/api-reference/realtime-client-events/conversation/item/retrieve
        // (@openai/agents-realtime sends it for every item it shows): the item as the server holds it.
        const item = typeof event.item_id === "string" ? findItem(this.items, event.item_id) : undefined;
        if (!item) return this.error({ type: "invalid_request_error", code: "item_not_found", message: `Conversation item with id '${event.item_id}' not found.`, param: "item_id" }, event.event_id);
        return this.send({ type: "conversation.item.retrieved", item: wireItem(item, { audio: true }) });
      }
      case "response.create":
        if (this.response?.open) {
          return this.error({ type: "invalid_request_error", code: "conversation_already_has_active_response", message: `Conversation already has an active response in progress: ${this.response.id}. Wait until the response is finished before creating a new one.`, param: null }, event.event_id);
        }
        return this.respond();
      default:
        return this.error({ type: "invalid_request_error", code: "invalid_value", message: `Invalid value: '${event.type}'. Supported values are: 'session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear', 'conversation.item.create', 'conversation.item.retrieve', 'conversation.item.truncate', 'conversation.item.delete', 'response.create', and 'response.cancel'.`, param: "type" }, event.event_id);
    }
  }

  /** @param {Buffer} bytes s16le at 24 kHz */
  async append(bytes) {
    const samples = new Int16Array(Math.floor(bytes.byteLength / 2));
    for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
    this.bufferMs += (samples.length / 24000) * 1000;
    this.bufferBytes.push(bytes);
    const pcm = this.resampler.process(int16ToFloat(samples));
    const joined = new Float32Array(this.pending.length + pcm.length);
    joined.set(this.pending);
    joined.set(pcm, this.pending.length);
    this.pending = joined;
    await this.decodeFrames(false);
  }

  /** Runs whole 80 ms frames (and, with `all`, the partial rest) through the recogniser. @param {boolean} all */
  async decodeFrames(all) {
    const recogniser = this.recogniser;
    if (!recogniser) return void (this.pending = new Float32Array(0));
    while (this.pending.length >= FRAME_16K || (all && this.pending.length > 0)) {
      await this.faults.stall.waitIfStalled(this.abort.signal);
      const frame = this.pending.slice(0, FRAME_16K);
      this.pending = this.pending.slice(frame.length);
      const r = await recogniser.processFrame(frame);
      const vad = this.session.audio.input.turn_detection;
      if (r.started && vad) {
        this.send({ type: "input_audio_buffer.speech_started", audio_start_ms: Math.round(recogniser.utteranceStart * 1000), item_id: this.nextUserItem });
        if (vad.interrupt_response !== false && this.response?.open) this.response.cancel("turn_detected");
      }
      if (!r.ended) continue;
      if (!vad) {
        this.bufferWords.push(...r.words.map((w) => w.word));
        this.bufferUtterances++;
        continue;
      }
      const endMs = Math.round(((r.processed / DECODER_RATE) - r.silentSeconds) * 1000);
      this.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: endMs, item_id: this.nextUserItem });
      this.commitWords(r.words.map((w) => w.word));
      if (vad.create_response !== false && !this.response?.open) this.respond();
    }
  }

  /** @param {unknown} clientEventId */
  async commit(clientEventId) {
    if (this.bufferMs < MIN_COMMIT_MS) {
      const had = this.bufferMs.toFixed(2);
      return this.error({ type: "invalid_request_error", code: "input_audio_buffer_commit_empty", message: `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${had}ms of audio.`, param: null }, clientEventId);
    }
    await this.decodeFrames(true);
    const last = (await this.recogniser?.finish()) ?? [];
    // For a test that finds words missing: how much audio the buffer had, and where the recogniser cut it.
    this.record.commits.push({ audio_ms: Math.round(this.bufferMs), utterances: this.bufferUtterances + (last.length ? 1 : 0), heard: [...this.bufferWords, ...last.map((w) => w.word)].join(" ") });
    this.commitWords([...this.bufferWords, ...last.map((w) => w.word)]);
  }

  /** The buffer becomes a user audio item. @param {string[]} words */
  commitWords(words) {
    const heard = words.join(" ");
    const transcribe = this.session.audio.input.transcription !== null;
    /** @type {import("../core/realtime-conversation.mjs").Item} */
    const item = { id: this.nextUserItem, type: "message", role: "user", status: "completed", content: [{ type: "input_audio", transcript: transcribe ? heard : null }], heard, inputAudio: Buffer.concat(this.bufferBytes) };
    const seconds = this.bufferMs / 1000;
    this.nextUserItem = newId("item");
    this.bufferMs = 0;
    this.bufferBytes = [];
    this.bufferWords = [];
    this.bufferUtterances = 0;
    const added = addItem(this.items, item, null);
    if ("error" in added) return this.error(added.error);
    this.items = added.items;
    this.send({ type: "input_audio_buffer.committed", previous_item_id: added.previousId, item_id: item.id });
    this.send({ type: "conversation.item.added", previous_item_id: added.previousId, item: wireItem(item) });
    this.send({ type: "conversation.item.done", previous_item_id: added.previousId, item: wireItem(item) });
    if (!transcribe) return;
    if (heard) this.send({ type: "conversation.item.input_audio_transcription.delta", item_id: item.id, content_index: 0, delta: heard });
    this.send({ type: "conversation.item.input_audio_transcription.completed", item_id: item.id, content_index: 0, transcript: heard, usage: { type: "duration", seconds: Math.round(seconds * 1000) / 1000 } });
  }

  /** @param {any} event */
  createItem(event) {
    const given = event.item ?? {};
    /** @type {import("../core/realtime-conversation.mjs").Item} */
    let item;
    // A message's text parts, by role as the GA reference gives them: input_text for user and system, output_text for assistant.
    const textType = given.role === "assistant" ? "output_text" : "input_text";
    if (given.type === "message" && ["user", "system", "assistant"].includes(given.role) && Array.isArray(given.content)) {
      const content = given.content.filter((/** @type {any} */ p) => p?.type === textType).map((/** @type {any} */ p) => ({ type: textType, text: String(p.text ?? "") }));
      item = { id: given.id ?? newId("item"), type: "message", role: given.role, status: "completed", content };
    } else if (given.type === "function_call_output" && typeof given.call_id === "string") {
      item = { id: given.id ?? newId("item"), type: "function_call_output", status: "completed", call_id: given.call_id, output: String(given.output ?? "") };
    } else {
      return this.error({ type: "invalid_request_error", code: "invalid_value", message: "Invalid 'item': this emulator creates user or system messages with input_text content, assistant messages with output_text content, and function_call_output items with a call_id.", param: "item" }, event.event_id);
    }
    const added = addItem(this.items, item, event.previous_item_id);
    if ("error" in added) return this.error(added.error, event.event_id);
    this.items = added.items;
    this.send({ type: "conversation.item.added", previous_item_id: added.previousId, item: wireItem(item) });
    this.send({ type: "conversation.item.done", previous_item_id: added.previousId, item: wireItem(item) });
  }

  respond() {
    const response = new RealtimeResponse(
      {
        sendNow: (event) => this.send(event),
        sendPaced: (event, seconds, wanted, onSent) => this.sender.send(JSON.stringify({ event_id: newId("event"), ...event }), seconds, wanted, onSent),
        items: () => this.items,
        addItem: (item) => {
          const added = addItem(this.items, item, null);
          if ("error" in added) throw new Error(added.error.message);
          this.items = added.items;
          return added.previousId;
        },
        replaceItem: (item) => (this.items = this.items.map((i) => (i.id === item.id ? item : i))),
        log: (entry) => {
          const known = this.record.responses.find((r) => r.response_id === entry.response_id);
          if (known) Object.assign(known, entry);
          else this.record.responses.push(entry);
        },
        session: this.session,
      },
      this.conversationId,
    );
    this.response = response;
    this.spoken = true;
    response.start();
  }

  /** @param {any} event */
  cancel(event) {
    if (!this.response?.cancel("client_cancelled")) {
      this.error({ type: "invalid_request_error", code: "response_cancel_not_active", message: "Cancellation failed: no active response found", param: null }, event.event_id);
    }
  }

  /** @param {any} event */
  truncate(event) {
    const target = this.items.find((i) => i.id === event.item_id);
    const audioSentMs = target?.audio ? Math.floor(target.audio.truncatedMs ?? target.audio.sentMs) : null;
    const result = truncateItem(this.items, event);
    const accepted = !("error" in result);
    const entry = { item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms, audioSentMs, accepted, heard: accepted ? result.heard : null, at: Date.now() };
    this.record.truncates.push(entry);
    this.stats.add(/** @type {any} */ (SERVICE), accepted ? "truncates" : "truncatesRejected");
    this.stats.events.emit("realtime-truncate", { session_id: this.session.id, ...entry });
    if ("error" in result) return this.error(result.error, event.event_id);
    this.items = result.items;
    this.send({ type: "conversation.item.truncated", item_id: event.item_id, content_index: 0, audio_end_ms: result.audioEndMs });
  }
}
