// Cartesia's TTS WebSocket, emulated on loopback with flite's speech:
//   WS /tts/websocket?cartesia_version=YYYY-MM-DD&access_token=…
// Built from the public docs:
//   https://docs.cartesia.ai/api-reference/tts/websocket (messages; the examples are in
//     test/fixtures/cartesia/)
//   https://docs.cartesia.ai/api-reference/tts/working-with-web-sockets/contexts (continue, contexts)
//   https://docs.cartesia.ai/api-reference/tts/working-with-web-sockets/context-flushing-and-flush-i-ds
//   https://docs.cartesia.ai/api-reference/auth/access-token (the browser's short-lived token, minted
//     and checked in service-tokens.mjs: `access_token` with the tts grant, or the key)
//   https://docs.cartesia.ai/build-with-cartesia/capability-guides/choosing-tts-parameters (output formats)
//
// In (JSON): a generation request {model_id, transcript, voice, language, context_id,
//   output_format{container:"raw", encoding, sample_rate}, add_timestamps, continue, flush?};
//   transcripts of one context are joined verbatim; continue:false ends the context.
//   {context_id, cancel: true} stops a context.
// Out: {type:"chunk", data (base64 PCM), done:false, status_code:206, step_time, context_id};
//   with add_timestamps, {type:"timestamps", word_timestamps{words,start,end}} (seconds from the
//   context's start) before the chunk where those words begin; {type:"flush_done", flush_id};
//   {type:"done", done:true}; an error, by API version: from 2026-03-01 {type:"error", done:true,
//   status_code, error_code (null where no code applies), title, message, request_id, context_id?},
//   before it the older {type:"error", done:true, status_code, error}.
//   https://docs.cartesia.ai/use-the-api/api-errors
// A generation request needs model_id (the request's required fields,
//   https://docs.cartesia.ai/api-reference/tts/websocket); without it the request is refused.
// Contexts multiplex on one socket ("Do many generations over a single WebSocket. Just use a separate
// context for each generation", the websocket page above), each paced from its own first audio;
// a cancel drops what its context still had to send. Counted in the stats: `contexts` (opened) and
// `contextsCancelled` (cancelled before their done).
// Only raw pcm_s16le and pcm_f32le are emulated (the player's formats).
// Knobs (query or backend defaults, see ../knobs.mjs): capacity, delay_ms, stall_ms, drop_after(_ms),
// malformed, oversize, pace, burst_s, chunk_words.
import { randomUUID } from "node:crypto";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { PacedSender, SpokenContext, base64Pcm, fliteVoice } from "./flite-speech.mjs";

export const CARTESIA_PATH = "/tts/websocket";
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const ENCODINGS = ["pcm_s16le", "pcm_f32le"];
const CHUNK_S = 0.1;
const MAX_INBOUND_BYTES = 64 * 1024;
/** The first API version whose errors are structured (error_code, title, message, request_id). */
const STRUCTURED_ERRORS_VERSION = "2026-03-01";

/** @param {{ stats: import("../stats.mjs").Stats }} deps */
export function createCartesiaEmulator({ stats }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {URL} url
   */
  async function handle(ws, knobs, url) {
    const faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("tts", "dropped") });
    const abort = new AbortController();
    const sender = new PacedSender(faults, knobs, abort.signal);
    const structured = (url.searchParams.get("cartesia_version") ?? "") >= STRUCTURED_ERRORS_VERSION;
    /**
     * @param {number} status @param {{ title: string, message: string, code?: string | null }} error @param {string} [contextId]
     */
    const sendError = (status, { title, message, code = null }, contextId) => {
      const context = contextId ? { context_id: contextId } : {};
      const body = structured
        ? { type: "error", done: true, status_code: status, error_code: code, title, message, request_id: `${randomUUID()}${contextId ? `:${contextId}` : ""}`, ...context }
        : { type: "error", done: true, status_code: status, error: `${title}: ${message}`, ...context };
      void sender.send(JSON.stringify(body));
    };
    if (knobs.capacity !== undefined && stats.counters.tts.open >= knobs.capacity) {
      stats.add("tts", "rejected");
      sendError(429, { title: "Too many concurrent requests", message: "You have exceeded your plan's concurrency limit.", code: "concurrency_limited" });
      void sender.chain.then(() => ws.close(1000));
      return;
    }
    if (!url.searchParams.get("cartesia_version")) {
      sendError(400, { title: "Missing version", message: "cartesia_version is required (a browser cannot set the Cartesia-Version header)" });
      void sender.chain.then(() => ws.close(1000));
      return;
    }
    stats.add("tts", "open");
    stats.add("tts", "opened");
    /** @type {Map<string, { speech: SpokenContext, sender: PacedSender, format: { encoding: "pcm_s16le" | "pcm_f32le", rate: number }, timestamps: boolean, flushId: number, ended: boolean, setup: string }>} */
    const contexts = new Map();
    ws.on("close", () => {
      stats.add("tts", "open", -1);
      if (contexts.size > 0 && !faults.dropped) stats.add("tts", "closedByClient");
      abort.abort();
      faults.dispose();
    });
    // Messages that arrive during the start-up delay wait for it, in order.
    const started = sleep(knobs.delayMs ?? 0, abort.signal).then(() => {
      if (abort.signal.aborted) return;
      if (knobs.malformed) faults.send(knobs.malformed === "notype" ? JSON.stringify({ data: "AAAA" }) : '{"type": "chunk", "da');
      if (knobs.oversize) faults.send(JSON.stringify({ type: "chunk", data: "A".repeat(Math.ceil(knobs.oversize / 4) * 4), context_id: "oversize" }));
    });

    ws.on("message", (data, isBinary) => {
      void started.then(() => {
        if (!abort.signal.aborted) receive(/** @type {Buffer} */ (data), isBinary);
      });
    });

    /** @param {Buffer} raw @param {boolean} isBinary */
    function receive(raw, isBinary) {
      if (isBinary || raw.byteLength > MAX_INBOUND_BYTES) return sendError(400, { title: "Invalid message", message: "messages must be JSON text under 64 kB" });
      /** @type {any} */
      let msg;
      try {
        msg = JSON.parse(raw.toString("utf8"));
      } catch {
        return sendError(400, { title: "Invalid message", message: "message is not valid JSON" });
      }
      const id = typeof msg?.context_id === "string" ? msg.context_id : `ctx-${contexts.size}`;
      if (msg?.cancel === true) {
        // A context cancelled before its done: the client cut it short (barge-in).
        if (contexts.delete(id)) {
          stats.add("tts", "closedByClient");
          stats.add("tts", "contextsCancelled");
          // Its inputs not yet spoken go too: they would hold the socket's next context back a turn each.
          for (let i = work.length - 1; i >= 0; i--) if (work[i].id === id) work.splice(i, 1);
        }
        return;
      }
      const format = msg?.output_format;
      if (typeof msg?.model_id !== "string" || msg.model_id === "") return sendError(400, { title: "Invalid request", message: "model_id is required: the model to generate with, e.g. sonic-3" }, id);
      if (typeof msg?.transcript !== "string") return sendError(400, { title: "Invalid request", message: "transcript must be a string" }, id);
      if (format?.container !== "raw" || !ENCODINGS.includes(format?.encoding) || !RATES.includes(format?.sample_rate)) {
        return sendError(400, { title: "Invalid output format", message: "output_format must be {container: raw, encoding: pcm_s16le | pcm_f32le, sample_rate: 8000…48000}" }, id);
      }
      const voiceId = msg?.voice?.mode === "id" && typeof msg.voice.id === "string" ? msg.voice.id : null;
      if (!voiceId) return sendError(400, { title: "Invalid voice", message: "voice must be {mode: id, id}" }, id);
      // Inputs of one context must keep every field but transcript, continue and flush the same.
      const setup = JSON.stringify({ ...msg, transcript: undefined, continue: undefined, flush: undefined });
      let context = contexts.get(id);
      if (context && context.setup !== setup) return sendError(400, { title: "Invalid request", message: "inputs on the same context must keep the same fields" }, id);
      if (!context) {
        context = {
          speech: new SpokenContext({ voice: fliteVoice(voiceId), rate: format.sample_rate, chunkWords: knobs.chunkWords }),
          sender: new PacedSender(faults, knobs, abort.signal),
          format: { encoding: format.encoding, rate: format.sample_rate },
          timestamps: msg.add_timestamps === true,
          flushId: 0,
          ended: false,
          setup,
        };
        contexts.set(id, context);
        stats.add("tts", "contexts");
      }
      if (context.ended) return sendError(400, { title: "Context ended", message: "this context has ended (continue: false was sent)" }, id);
      const ends = msg.continue !== true;
      context.ended = ends;
      work.push({ id, context, transcript: msg.transcript, flush: msg.flush === true, ends });
      if (work.length === 1) setImmediate(drain);
    }

    /**
     * The inputs, spoken one at a time in arrival order (flite is synchronous, ~50 ms a
     * phrase; a turn of the event loop between inputs lets the socket's messages in, a cancel too).
     * @type {{ id: string, context: NonNullable<ReturnType<typeof contexts.get>>, transcript: string, flush: boolean, ends: boolean }[]}
     */
    const work = [];
    function drain() {
      const item = work[0];
      if (!item || abort.signal.aborted) return;
      speak(item);
      work.shift();
      if (work.length > 0) setImmediate(drain);
    }

    /** @param {(typeof work)[number]} item */
    function speak({ id, context, transcript, flush, ends }) {
      if (contexts.get(id) !== context) return; // cancelled
      context.speech.push(transcript);
      const { rate, encoding } = context.format;
      for (const phrase of context.speech.takePhrases(flush || ends)) {
        let w = 0;
        const chunk = Math.round(CHUNK_S * rate);
        for (let at = 0; at < phrase.pcm.length; at += chunk) {
          const part = phrase.pcm.subarray(at, Math.min(phrase.pcm.length, at + chunk));
          const endS = (phrase.startSample + at + part.length) / rate;
          const starting = [];
          while (w < phrase.words.length && (phrase.words[w].start < endS || at + chunk >= phrase.pcm.length)) starting.push(phrase.words[w++]);
          if (context.timestamps && starting.length > 0) {
            void send(id, {
              type: "timestamps",
              done: false,
              status_code: 206,
              context_id: id,
              word_timestamps: {
                // Cartesia's words carry no punctuation ("Hello, world!" → Hello, world).
                words: starting.map((x) => x.text.replace(/^[^\p{L}\p{N}']+|[^\p{L}\p{N}']+$/gu, "")),
                start: starting.map((x) => round3(x.start)),
                end: starting.map((x) => round3(x.stop)),
              },
            });
          }
          void send(id, { type: "chunk", data: base64Pcm(part, encoding), done: false, status_code: 206, step_time: 0, context_id: id }, part.length / rate);
        }
      }
      if (flush) void send(id, { type: "flush_done", done: false, flush_done: true, flush_id: ++context.flushId, status_code: 206, context_id: id });
      if (ends) {
        const tail = context.speech.finish();
        if (tail.length > 0) void send(id, { type: "chunk", data: base64Pcm(tail, encoding), done: false, status_code: 206, step_time: 0, context_id: id }, tail.length / rate);
        void send(id, { type: "done", done: true, status_code: 206, context_id: id }).then(() => {
          if (contexts.get(id) === context) contexts.delete(id);
          stats.add("tts", "completed");
        });
      }
    }

    /** Sends unless the context was cancelled meanwhile. @param {string} id @param {Record<string, unknown>} message @param {number} [seconds] */
    function send(id, message, seconds = 0) {
      const context = contexts.get(id);
      if (!context) return Promise.resolve();
      return context.sender.send(JSON.stringify(message), seconds, () => contexts.get(id) === context);
    }
  }
  return { handle };
}

/** @param {number} x */
const round3 = (x) => Math.round(x * 1000) / 1000;
