// Gemini Live emulator (the Live API's BidiGenerateContent WebSocket) on the backend's own
// parts: pocketsphinx hears (../recogniser.mjs), ELIZA answers and flite speaks
// (gemini-live-turn.mjs).
//   WS   /ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=<API key>
//   WS   /ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=auth_tokens/…
//   POST /v1alpha/auth_tokens              ephemeral tokens (gemini-live-tokens.mjs)
//   GET  /__gemini/log                     per socket: each model turn's input (the conversation
//                                          the scripted model read), its status and the audio ms
//                                          sent, and every clientContent the client sent
// Client messages (each a JSON object with exactly one of these fields; text frames, or binary
// frames holding the JSON): setup (first, once), realtimeInput { audio | mediaChunks[] |
// activityStart | activityEnd | audioStreamEnd | text }, clientContent { turns, turnComplete },
// toolResponse { functionResponses }. Server messages: setupComplete, serverContent,
// toolCall, toolCallCancellation, usageMetadata (knob binary=1 sends them as binary frames).
// Input audio: PCM 16-bit mono, `audio/pcm;rate=16000` (24000 is also taken and resampled).
// Activity detection: automatic by default, on the recogniser's utterance start and end
// (silenceDurationMs sets the end's silence); `realtimeInputConfig.automaticActivityDetection
// .disabled: true` makes the client's activityStart / activityEnd the turn's bounds. With
// activityHandling START_OF_ACTIVITY_INTERRUPTS (the default) the start of activity (speech,
// or activityStart) interrupts the model's turn; NO_INTERRUPTION lets it finish. A
// clientContent interrupts the model's turn whatever the setting ("a message here will
// interrupt any current model generation", the reference's BidiGenerateContentClientContent).
// Audio sent outside an activity with detection disabled is dropped: the docs do not say what
// the service does with it; nothing in it can be a turn.
// Errors: the service answers a bad message by closing the socket with a reason (1007 for a bad
// argument, as users quote it: yagudaev/voiceclaw#155); the reasons here follow Google's API
// wording ("Invalid JSON payload received. Unknown name …") where it is known, and are this
// emulator's own, in that style, elsewhere. A frame over MAX_MESSAGE_BYTES closes with 1009
// (the WebSocket code for "message too big"; the service's own limit is not documented).
// Knobs (../knobs.mjs): capacity (HTTP 429 at the handshake), delay_ms (a slow handshake),
// drop_after(_ms), stall_ms (with stall_after_ms or stall_after), malformed, oversize, pace, burst_s, binary, go_away_after_ms and go_away_left_ms, think_ms (the model's time
// before its turn's first message).
// Built from Google's public docs (stored copies):
//   https://ai.google.dev/api/live                              (the WebSockets API reference)
//   https://ai.google.dev/gemini-api/docs/live                  (get started)
//   https://ai.google.dev/gemini-api/docs/live-guide            (capabilities: audio formats, VAD,
//                                                                transcriptions, interruptions)
//   https://ai.google.dev/gemini-api/docs/live-tools            (tool use)
//   https://ai.google.dev/gemini-api/docs/live-session          (goAway, session resumption)
//   https://ai.google.dev/gemini-api/docs/ephemeral-tokens
// The docs' example messages are in test/fixtures/gemini-live/.
import { randomUUID } from "node:crypto";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { admitStream } from "../stream-gate.mjs";
import { sendJson } from "../http-json.mjs";
import { FRAME_16K, StreamingRecogniser } from "../recogniser.mjs";
import { downsampler24to16, int16ToFloat } from "../resample.mjs";
import { PacedSender } from "./flite-speech.mjs";
import { GeminiTurn } from "./gemini-live-turn.mjs";
import { CLOSE_BAD_ARGUMENT, geminiLiveTokens } from "./gemini-live-tokens.mjs";
import { readSetup } from "../core/gemini-setup.mjs";

const SERVICE = "gemini-live";
const PREFIX = "/ws/google.ai.generativelanguage";
export const GEMINI_PATHS = Object.freeze({
  v1beta: `${PREFIX}.v1beta.GenerativeService.BidiGenerateContent`,
  v1alpha: `${PREFIX}.v1alpha.GenerativeService.BidiGenerateContent`,
  constrained: `${PREFIX}.v1alpha.GenerativeService.BidiGenerateContentConstrained`,
});
/** Largest client frame taken: 8 MiB (about 4 min of 16 kHz audio as base64). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const CLOSE_TOO_BIG = 1009;
const KEPT_LOGS = 200;
const CLIENT_FIELDS = ["setup", "clientContent", "realtimeInput", "toolResponse"];

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 * @returns {import("../backend.mjs").Emulator}
 */
export function geminiLiveEmulator({ stats, pool, token }) {
  const tokens = geminiLiveTokens({ stats, key: token });
  /** @type {Record<string, any>[]} */
  const logs = [];
  /** @param {boolean} constrained */
  const handler = (constrained) => /** @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {URL} url */ (ws, knobs, url) => {
    ws.on("error", () => {});
    const credential = tokens.check(url, constrained);
    if (!credential.ok) {
      stats.add("http", "unauthorized");
      ws.close(CLOSE_BAD_ARGUMENT, credential.reason);
      return;
    }
    const gate = admitStream(stats, SERVICE, { ...knobs, capacity: undefined }, () => {});
    const socket = new GeminiSocket(ws, knobs, stats, credential.setup);
    logs.push(socket.record);
    if (logs.length > KEPT_LOGS) logs.shift();
    ws.on("close", () => {
      gate?.closed();
      socket.dispose().then((decoder) => decoder && pool?.release(decoder));
    });
    ws.on("message", (data, isBinary) => socket.receive(/** @type {Buffer} */ (data), isBinary));
    socket.decoder = pool ? pool.acquire(knobs).catch(() => null) : Promise.resolve(null);
  };
  return {
    name: SERVICE,
    sockets: { [GEMINI_PATHS.v1beta]: handler(false), [GEMINI_PATHS.v1alpha]: handler(false), [GEMINI_PATHS.constrained]: handler(true) },
    http: { ...tokens.http, "/__gemini/log": (_req, res) => sendJson(res, 200, { sessions: logs }) },
    authorize: () => true, // the credential is checked after the upgrade (a close 1007), as the service does
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
    health: () => ({ recogniser: pool !== null, paths: [...Object.values(GEMINI_PATHS), "/v1alpha/auth_tokens", "/__gemini/log"] }),
  };
}

/** One BidiGenerateContent socket: the setup, the input audio and activity, the conversation and its model turns. */
class GeminiSocket {
  /** @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {import("../stats.mjs").Stats} stats @param {Record<string, unknown> | null} minted */
  constructor(ws, knobs, stats, minted) {
    this.ws = ws;
    this.knobs = knobs;
    this.minted = minted;
    this.abort = new AbortController();
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add(/** @type {any} */ (SERVICE), "dropped") });
    this.sender = new PacedSender(this.faults, knobs, this.abort.signal);
    /** Null until the setup message came; every other message needs it. */
    this.setup = /** @type {import("../core/gemini-setup.mjs").GeminiSetup} */ (/** @type {unknown} */ (null));
    /** @type {{ role: string, text: string }[]} */
    this.context = [];
    /** @type {GeminiTurn | null} */
    this.turn = null;
    /** The turn still speaking when `turn` was queued after it (NO_INTERRUPTION). @type {GeminiTurn | null} */
    this.earlier = null;
    /** @type {Promise<import("../pocketsphinx.mjs").Decoder | null>} */
    this.decoder = Promise.resolve(null);
    /** @type {import("../pocketsphinx.mjs").Decoder | null} */
    this.heldDecoder = null;
    /** @type {StreamingRecogniser | null} */
    this.recogniser = null;
    this.pending = new Float32Array(0);
    /** For 24 kHz input: one resampler per socket, so chunk borders stay seamless. */
    this.resampler24 = downsampler24to16();
    this.activity = false;
    /** Words of utterances that ended inside the open activity (detection disabled). @type {string[]} */
    this.activityWords = [];
    this.work = Promise.resolve();
    this.closed = false;
    this.record = {
      session_id: `gemini_${randomUUID().replace(/-/g, "").slice(0, 16)}`,
      model: /** @type {string | null} */ (null),
      automaticActivityDetection: true,
      turns: /** @type {Record<string, any>[]} */ ([]),
      clientContents: /** @type {Record<string, any>[]} */ ([]),
      activityStarts: 0,
      activityEnds: 0,
      audioInMs: 0,
    };
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    const text = JSON.stringify(message);
    this.faults.send(this.knobs.binaryFrames ? Buffer.from(text, "utf8") : text);
  }

  /** Closes with a reason, as the service answers a message it refuses. @param {number} code @param {string} reason */
  /**
   * The service's notice that it will end this connection: goAway { timeLeft } (a Duration, "5s"),
   * then the close once the time is up. How the service closes is not documented (its SDKs say the
   * connection is "terminated as ABORTED"): here a 1011 close with a reason saying so.
   * https://ai.google.dev/gemini-api/docs/live-session ("GoAway message")
   * @param {number} afterMs @param {number} leftMs
   */
  goAwayLater(afterMs, leftMs) {
    const timers = [
      setTimeout(() => {
        if (this.closed) return;
        this.record.goAwaySent = true;
        this.send({ goAway: { timeLeft: `${leftMs / 1000}s` } });
      }, afterMs),
      setTimeout(() => this.refuse(1011, "The session ended (goAway: its time is up)."), afterMs + leftMs),
    ];
    this.abort.signal.addEventListener("abort", () => timers.forEach(clearTimeout), { once: true });
  }

  refuse(code, reason) {
    if (this.closed) return;
    this.closed = true;
    this.turn?.interrupt();
    // A close reason is at most 123 bytes.
    this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
  }

  async dispose() {
    this.closed = true;
    this.abort.abort();
    for (const t of [this.turn, this.earlier]) if (t) t.open = false;
    this.faults.dispose();
    await this.work.catch(() => {});
    return this.heldDecoder ?? (await this.decoder.catch(() => null));
  }

  /** @param {Buffer} data @param {boolean} isBinary */
  receive(data, isBinary) {
    if (this.closed) return;
    if (data.byteLength > MAX_MESSAGE_BYTES) return this.refuse(CLOSE_TOO_BIG, `The message is ${data.byteLength} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes.`);
    /** @type {any} */
    let message;
    try {
      message = JSON.parse(data.toString("utf8"));
    } catch (err) {
      return this.refuse(CLOSE_BAD_ARGUMENT, `Invalid JSON payload received. ${/** @type {Error} */ (err).message.slice(0, 60)}`);
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) return this.refuse(CLOSE_BAD_ARGUMENT, "Invalid JSON payload received. Expected an object.");
    const fields = Object.keys(message);
    const unknown = fields.find((f) => !CLIENT_FIELDS.includes(f));
    if (unknown !== undefined) return this.refuse(CLOSE_BAD_ARGUMENT, `Invalid JSON payload received. Unknown name "${unknown.slice(0, 40)}": Cannot find field.`);
    if (fields.length !== 1) return this.refuse(CLOSE_BAD_ARGUMENT, "Request contains an invalid argument: a message must set exactly one of setup, clientContent, realtimeInput, toolResponse.");
    void isBinary; // text or binary frames: both hold the JSON
    this.work = this.work.then(() => this.dispatch(fields[0], message[fields[0]])).catch((err) => {
      this.refuse(1011, `Internal error: ${String(err?.message ?? err).slice(0, 90)}`);
    });
  }

  /** @param {string} field @param {any} body */
  async dispatch(field, body) {
    if (this.closed) return;
    if (field === "setup") return this.open(body);
    if (!this.setup) return this.refuse(CLOSE_BAD_ARGUMENT, "Request contains an invalid argument: the first message must be setup.");
    if (field === "realtimeInput") return this.realtimeInput(body);
    if (field === "clientContent") return this.clientContent(body);
    return this.toolResponse(body);
  }

  /** @param {unknown} body */
  async open(body) {
    if (this.setup) return this.refuse(CLOSE_BAD_ARGUMENT, "Request contains an invalid argument: setup may be sent only once, first.");
    const read = readSetup(body, this.minted);
    if ("error" in read) return this.refuse(CLOSE_BAD_ARGUMENT, read.error);
    this.setup = read.setup;
    this.record.model = read.setup.model;
    this.record.automaticActivityDetection = !read.setup.manualActivity;
    if (read.setup.systemInstruction) this.context.push({ role: "system", text: read.setup.systemInstruction });
    const decoder = await this.decoder;
    this.heldDecoder = decoder;
    if (this.closed) return;
    if (decoder) this.recogniser = new StreamingRecogniser(decoder, { ...this.knobs, endpointMs: read.setup.silenceDurationMs ?? this.knobs.endpointMs ?? 480 });
    this.send({ setupComplete: {} });
    if (this.knobs.goAwayAfterMs !== undefined) this.goAwayLater(this.knobs.goAwayAfterMs, this.knobs.goAwayLeftMs ?? 5000);
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformed === "notype" ? JSON.stringify({ somethingElse: {} }) : "{not json");
    if (oversize) this.send({ serverContent: { outputTranscription: { text: "x".repeat(oversize) } } });
  }

  /** @param {any} input */
  async realtimeInput(input) {
    if (typeof input !== "object" || input === null) return this.refuse(CLOSE_BAD_ARGUMENT, "Invalid value at 'realtime_input': expected an object.");
    const manual = this.setup.manualActivity;
    if ((input.activityStart || input.activityEnd) && !manual) {
      return this.refuse(CLOSE_BAD_ARGUMENT, "Request contains an invalid argument: activityStart and activityEnd need automaticActivityDetection.disabled.");
    }
    if (input.activityStart) {
      this.record.activityStarts++;
      if (this.activity) return;
      this.activity = true;
      this.activityWords = [];
      this.pending = new Float32Array(0);
      if (this.setup.interrupts) this.interruptTurn();
    }
    const chunks = input.audio ? [input.audio] : Array.isArray(input.mediaChunks) ? input.mediaChunks : [];
    for (const chunk of chunks) {
      const pcm = decodeAudio(chunk, this.resampler24);
      if (typeof pcm === "string") return this.refuse(CLOSE_BAD_ARGUMENT, pcm);
      this.record.audioInMs += (pcm.length / 16000) * 1000;
      if (manual && !this.activity) continue;
      await this.decode(pcm, false);
    }
    if (typeof input.text === "string" && input.text.trim()) {
      this.interruptTurn();
      this.context.push({ role: "user", text: input.text.trim() });
      this.respond();
    }
    if (input.activityEnd) {
      this.record.activityEnds++;
      if (!this.activity) return;
      this.activity = false;
      await this.decode(new Float32Array(0), true);
      const last = (await this.recogniser?.finish()) ?? [];
      this.userTurn([...this.activityWords, ...last.map((w) => w.word)], true);
      this.activityWords = [];
    }
    if (input.audioStreamEnd && !manual) {
      await this.decode(new Float32Array(0), true);
      const last = (await this.recogniser?.finish()) ?? [];
      if (last.length) this.userTurn(last.map((w) => w.word), false);
    }
  }

  /** Runs whole 80 ms frames (and, with `all`, the rest) through the recogniser. @param {Float32Array} pcm @param {boolean} all */
  async decode(pcm, all) {
    const recogniser = this.recogniser;
    if (!recogniser) return;
    const joined = new Float32Array(this.pending.length + pcm.length);
    joined.set(this.pending);
    joined.set(pcm, this.pending.length);
    this.pending = joined;
    while (this.pending.length >= FRAME_16K || (all && this.pending.length > 0)) {
      await this.faults.stall.waitIfStalled(this.abort.signal);
      const frame = this.pending.slice(0, FRAME_16K);
      this.pending = this.pending.slice(frame.length);
      const r = await recogniser.processFrame(frame);
      if (this.setup.manualActivity) {
        if (r.ended) this.activityWords.push(...r.words.map((w) => w.word));
        continue;
      }
      if (r.started && this.setup.interrupts) this.interruptTurn();
      if (r.ended) this.userTurn(r.words.map((w) => w.word), false);
    }
  }

  /**
   * The user's turn ended: its transcription, then the model's turn. With detection disabled an
   * activity with no words still gets an (empty) turnComplete, so the client learns the activity
   * was taken; the docs do not say what the service answers to a silent activity.
   * @param {string[]} words @param {boolean} explicit
   */
  userTurn(words, explicit) {
    const text = words.join(" ");
    if (text && this.setup.inputTranscription) this.send({ serverContent: { inputTranscription: { text } } });
    if (!text) {
      if (explicit) this.send({ serverContent: { turnComplete: true } });
      return;
    }
    this.context.push({ role: "user", text });
    this.respond();
  }

  /** @param {any} content */
  clientContent(content) {
    if (typeof content !== "object" || content === null) return this.refuse(CLOSE_BAD_ARGUMENT, "Invalid value at 'client_content': expected an object.");
    const turns = content.turns ?? [];
    if (!Array.isArray(turns)) return this.refuse(CLOSE_BAD_ARGUMENT, "Invalid value at 'client_content.turns': expected a list of Content.");
    this.interruptTurn();
    const read = [];
    for (const turn of turns) {
      const role = turn?.role === "model" ? "model" : "user";
      const text = (Array.isArray(turn?.parts) ? turn.parts : []).map((/** @type {any} */ p) => (typeof p?.text === "string" ? p.text : "")).join("").trim();
      read.push({ role, text });
      if (text) this.context.push({ role, text });
    }
    this.record.clientContents.push({ turns: read, turnComplete: content.turnComplete === true, at: Date.now() });
    if (content.turnComplete === true) this.respond();
  }

  /** @param {any} response */
  toolResponse(response) {
    const answers = Array.isArray(response?.functionResponses) ? response.functionResponses : [];
    const waiting = this.turn?.pendingCalls ?? [];
    let answered = false;
    for (const a of answers) {
      if (!waiting.includes(a?.id)) continue;
      this.context.push({ role: "tool", text: JSON.stringify(a.response ?? {}) });
      answered = true;
    }
    if (!answered) return this.refuse(CLOSE_BAD_ARGUMENT, "Request contains an invalid argument: the toolResponse answers no pending function call id.");
    if (this.turn) this.turn.pendingCalls = [];
    this.respond();
  }

  /** Interrupts the model's turn in progress, or cancels the function call it waits on. */
  interruptTurn() {
    if (this.earlier?.open) this.earlier.interrupt();
    this.earlier = null;
    const turn = this.turn;
    if (!turn) return;
    if (turn.pendingCalls.length) {
      this.send({ toolCallCancellation: { ids: turn.pendingCalls } });
      turn.pendingCalls = [];
      return;
    }
    turn.interrupt();
  }

  respond() {
    const turn = new GeminiTurn({
      sendNow: (m) => this.send(m),
      sendPaced: (m, seconds, wanted, onSent) => {
        const text = JSON.stringify(m);
        return this.sender.send(/** @type {string} */ (/** @type {unknown} */ (this.knobs.binaryFrames ? Buffer.from(text, "utf8") : text)), seconds, wanted, onSent);
      },
      context: this.context,
      setup: this.setup,
      log: (entry) => this.record.turns.push(entry),
      thinkMs: this.knobs.thinkMs ?? 0,
      signal: this.abort.signal,
    });
    // One model turn speaks at a time: with NO_INTERRUPTION a turn that ends while the model speaks is answered after it.
    const previous = this.turn;
    this.turn = turn;
    this.earlier = previous?.open ? previous : null;
    if (this.earlier) void this.earlier.finished.then(() => !this.closed && turn.open && turn.start());
    else void turn.start();
  }
}

/**
 * One audio chunk ({ data, mimeType }) as 16 kHz float, or why it is refused.
 * @param {any} chunk @param {import("../resample.mjs").RationalResampler} resampler24 @returns {Float32Array | string}
 */
function decodeAudio(chunk, resampler24) {
  const mime = String(chunk?.mimeType ?? "audio/pcm;rate=16000");
  const rate = Number(/rate=(\d+)/.exec(mime)?.[1] ?? 16000);
  if (!mime.startsWith("audio/pcm") || (rate !== 16000 && rate !== 24000)) return `Unsupported audio mime type ${JSON.stringify(mime.slice(0, 40))}: this emulator takes audio/pcm;rate=16000 (or 24000).`;
  if (typeof chunk?.data !== "string") return "Invalid value at 'realtime_input.audio.data' (TYPE_BYTES): expected base64.";
  const bytes = Buffer.from(chunk.data, "base64");
  const samples = new Int16Array(Math.floor(bytes.byteLength / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  const pcm = int16ToFloat(samples);
  return rate === 16000 ? pcm : resampler24.process(pcm);
}
