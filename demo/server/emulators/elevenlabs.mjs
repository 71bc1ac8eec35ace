// ElevenLabs' multi-context TTS WebSocket, emulated on loopback with flite's speech:
//   WS /v1/text-to-speech/{voice_id}/multi-stream-input?model_id=…&output_format=pcm_24000&single_use_token=…
// Built from the public docs:
//   https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input
//   https://elevenlabs.io/docs/eleven-api/guides/how-to/websockets/multi-context-web-socket
//   https://elevenlabs.io/docs/api-reference/tokens/create, POST /v1/single-use-token/{token_type}
//     (type tts_websocket: 15 minutes, consumed on first use; minted and checked in
//     service-tokens.mjs: `single_use_token` in the query, or the key as `xi-api-key`)
// and the errors the service is seen to send (`{message, error, code: 1008}`, then a 1008 close:
// max_active_conversations at 5 contexts, livekit/agents-js#1985; the 20 s input timeout,
// elevenlabs/elevenlabs-docs#426).
//
// In (JSON): {text, context_id, voice_settings?} (text " " opens a context; "" is a keep-alive),
//   {context_id, flush: true}, {context_id, close_context: true}, {close_socket: true}.
// Out: {audio: base64 PCM s16le, alignment, normalizedAlignment, contextId} per chunk of
//   CHUNK_S seconds, with each character's start and duration in ms from the start of that
//   chunk's audio (from flite's word times: a word's characters share its span evenly, a space
//   spans the gap to the next word); {isFinal: true, contextId} once a closed context's audio
//   is all sent.
// close_context ends the context: the audio of text already flushed (or already a whole phrase)
// is sent, text still buffered is dropped ("close_context … no further audio will be generated for
// it"; send flush first to have it spoken), then one isFinal. flush and close_context sent
// together (a client's end of a reply) finish the context once: its audio, then a single isFinal.
//   https://elevenlabs.io/docs/eleven-api/guides/how-to/websockets/multi-context-web-socket
//   (Closing contexts; Flushing a context)
// Several contexts share one socket, each generated and paced on its own ("Each context operates as
// an independent audio generation stream within a single WebSocket connection"; "Establish one
// WebSocket connection for each end-user session", the multi-context guide above): a context closed
// early (a barge-in) does not hold the next one's audio back. Counted in the stats: `contexts` (opened)
// and `contextsCancelled` (closed without a flush: its buffered text dropped).
// Only the pcm_* output formats are emulated (the player's); others get an error.
// Knobs (query or backend defaults, see ../knobs.mjs): capacity, delay_ms, stall_ms, drop_after(_ms),
// malformed, oversize, pace, burst_s, chunk_words.
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { PacedSender, SpokenContext, base64Pcm, fliteVoice } from "./flite-speech.mjs";

export const ELEVENLABS_PATH = "/v1/text-to-speech/*/multi-stream-input";
const RATES = { pcm_16000: 16000, pcm_22050: 22050, pcm_24000: 24000, pcm_44100: 44100 };
const MAX_CONTEXTS = 5;
const CHUNK_S = 0.25;
const DEFAULT_INACTIVITY_S = 20;
/** The service's own limit on one text message is far larger; this bounds what the emulator keeps. */
const MAX_INBOUND_BYTES = 64 * 1024;

/** @param {{ stats: import("../stats.mjs").Stats }} deps */
export function createElevenlabsEmulator({ stats }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {URL} url
   */
  async function handle(ws, knobs, url) {
    const faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("tts", "dropped") });
    const abort = new AbortController();
    /** @param {Record<string, unknown>} message */
    const sendError = (message) => {
      faults.send(JSON.stringify({ ...message, code: 1008 }));
      ws.close(1008, String(message.error));
    };
    if (knobs.capacity !== undefined && stats.counters.tts.open >= knobs.capacity) {
      stats.add("tts", "rejected");
      return sendError({
        message: "Too many concurrent requests. Your current subscription is associated with a maximum of concurrent requests.",
        error: "too_many_concurrent_requests",
      });
    }
    const format = url.searchParams.get("output_format") ?? "pcm_24000";
    const rate = RATES[/** @type {keyof typeof RATES} */ (format)];
    if (!rate) return sendError({ message: `output_format ${format} is not emulated here; use pcm_16000, pcm_22050, pcm_24000 or pcm_44100`, error: "invalid_output_format" });
    const voice = fliteVoice(decodeURIComponent(url.pathname.split("/")[3] ?? ""));
    const inactivityS = Number(url.searchParams.get("inactivity_timeout")) || DEFAULT_INACTIVITY_S;

    stats.add("tts", "open");
    stats.add("tts", "opened");
    /**
     * `flushing`: a flush arrived that no speaking turn has taken yet (messages of one tick are all
     * in before their turns run); `flushed`: one ever did; `ended`: its isFinal is queued, so nothing
     * more of it is sent; `sender`: its own pacing, from its own first audio.
     * @type {Map<string, { speech: SpokenContext, sender: PacedSender, closing: boolean, flushing: boolean, flushed: boolean, ended: boolean }>}
     */
    const contexts = new Map();
    let inactivity = setTimeout(onInactive, inactivityS * 1000);
    function onInactive() {
      sendError({
        message: `Have not received a new text input within the timeout of ${inactivityS} seconds. Streaming input terminated.`,
        error: "input_timeout_exceeded",
      });
    }
    ws.on("close", () => {
      stats.add("tts", "open", -1);
      if (contexts.size > 0 && !faults.dropped) stats.add("tts", "closedByClient");
      clearTimeout(inactivity);
      abort.abort();
      faults.dispose();
    });

    // Messages that arrive during the start-up delay wait for it, in order.
    const started = sleep(knobs.delayMs ?? 0, abort.signal).then(() => {
      if (abort.signal.aborted) return;
      if (knobs.malformed) faults.send(knobs.malformed === "notype" ? JSON.stringify([1, 2, 3]) : '{"audio": "AAAA", "alignm');
      if (knobs.oversize) faults.send(JSON.stringify({ audio: "A".repeat(Math.ceil(knobs.oversize / 4) * 4), contextId: "oversize" }));
    });

    /** Speaks what is ready in a context (after a flush, all its text); when it is closing, then isFinal, once. @param {string} id */
    function speakReady(id) {
      const context = contexts.get(id);
      if (!context) return;
      setImmediate(() => {
        if (abort.signal.aborted || context.ended) return;
        // Only a flush speaks an unfinished phrase; closing does not (see the header).
        const force = context.flushing;
        context.flushing = false;
        for (const phrase of context.speech.takePhrases(force)) {
          sendPhrase(context.sender, id, phrase.pcm, phrase.words, phrase.startSample, rate);
        }
        if (context.closing) {
          context.ended = true;
          const tail = context.speech.finish();
          if (tail.length > 0) void context.sender.send(JSON.stringify({ audio: base64Pcm(tail, "pcm_s16le"), alignment: null, normalizedAlignment: null, contextId: id }), tail.length / rate);
          // The context is over once isFinal is out: until then a client that leaves cut it short.
          void context.sender.send(JSON.stringify({ isFinal: true, contextId: id })).then(() => {
            if (abort.signal.aborted) return;
            contexts.delete(id);
            stats.add("tts", "completed");
          });
        }
      });
    }

    /**
     * One phrase as chunks of CHUNK_S seconds, each with the characters whose start falls in it.
     * @param {PacedSender} sender @param {string} id @param {Float32Array} pcm
     * @param {{ text: string, start: number, stop: number }[]} words @param {number} startSample @param {number} rate
     */
    function sendPhrase(sender, id, pcm, words, startSample, rate) {
      const chars = charTimes(words);
      const chunk = Math.round(CHUNK_S * rate);
      let c = 0;
      for (let at = 0; at < pcm.length; at += chunk) {
        const part = pcm.subarray(at, Math.min(pcm.length, at + chunk));
        const chunkStartS = (startSample + at) / rate;
        const chunkEndS = (startSample + at + part.length) / rate;
        const last = at + chunk >= pcm.length;
        const mine = [];
        while (c < chars.length && (last || chars[c].start < chunkEndS)) mine.push(chars[c++]);
        const alignment = {
          chars: mine.map((x) => x.char),
          charStartTimesMs: mine.map((x) => Math.max(0, Math.round((x.start - chunkStartS) * 1000))),
          charDurationsMs: mine.map((x) => Math.max(0, Math.round((x.stop - x.start) * 1000))),
        };
        void sender.send(JSON.stringify({ audio: base64Pcm(part, "pcm_s16le"), alignment, normalizedAlignment: alignment, contextId: id }), part.length / rate);
      }
    }

    ws.on("message", (data, isBinary) => {
      clearTimeout(inactivity);
      inactivity = setTimeout(onInactive, inactivityS * 1000);
      void started.then(() => {
        if (!abort.signal.aborted) receive(/** @type {Buffer} */ (data), isBinary);
      });
    });

    /** @param {Buffer} raw @param {boolean} isBinary */
    function receive(raw, isBinary) {
      if (isBinary || raw.byteLength > MAX_INBOUND_BYTES) return sendError({ message: "messages must be JSON text under 64 kB", error: "invalid_message" });
      /** @type {any} */
      let msg;
      try {
        msg = JSON.parse(raw.toString("utf8"));
      } catch {
        return sendError({ message: "message is not valid JSON", error: "invalid_message" });
      }
      if (msg?.close_socket === true) {
        ws.close(1000);
        return;
      }
      const id = typeof msg?.context_id === "string" ? msg.context_id : "default";
      let context = contexts.get(id);
      if (!context && typeof msg?.text === "string" && msg.text !== "") {
        if (contexts.size >= MAX_CONTEXTS) {
          return sendError({
            message: `Maximum simultaneous contexts per WebSocket connection exceeded (${MAX_CONTEXTS}). Please close an existing context before opening a new one.`,
            error: "max_active_conversations",
          });
        }
        const sender = new PacedSender(faults, knobs, abort.signal);
        context = { speech: new SpokenContext({ voice, rate, chunkWords: knobs.chunkWords }), sender, closing: false, flushing: false, flushed: false, ended: false };
        contexts.set(id, context);
        stats.add("tts", "contexts");
      }
      if (!context) return; // a keep-alive, or a flush or close of a context that has ended
      if (typeof msg.text === "string" && msg.text.trim() !== "" && !context.closing) context.speech.push(msg.text);
      if (context.closing) return; // its ending is under way
      if (msg.flush === true) context.flushing = context.flushed = true;
      if (msg.close_context === true) {
        context.closing = true;
        if (!context.flushed) stats.add("tts", "contextsCancelled");
      }
      speakReady(id);
    }
  }
  return { handle };
}

/**
 * Character spans from word spans: each word's characters share its span evenly; the space
 * after a word spans the gap to the next one (zero-length when they touch).
 * @param {{ text: string, start: number, stop: number }[]} words
 * @returns {{ char: string, start: number, stop: number }[]}
 */
export function charTimes(words) {
  const out = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const letters = [...w.text];
    const each = (w.stop - w.start) / letters.length;
    letters.forEach((char, k) => out.push({ char, start: w.start + k * each, stop: w.start + (k + 1) * each }));
    const next = words[i + 1]?.start ?? w.stop;
    out.push({ char: " ", start: w.stop, stop: Math.max(w.stop, next) });
  }
  return out;
}
