// Deepgram emulator: live transcription over WebSocket, both generations, plus the token grant.
//   WS   /v1/listen      Nova: binary linear16 in; Results (interim and final, speech_final,
//                        from_finalize), SpeechStarted (vad_events), UtteranceEnd (utterance_end_ms),
//                        Metadata after CloseStream. Text in: KeepAlive, Finalize, CloseStream.
//   WS   /v2/listen      Flux: binary linear16 in; Connected, then TurnInfo events StartOfTurn,
//                        Update (about every 0.25 s of audio), EagerEndOfTurn (eager_eot_threshold),
//                        TurnResumed, EndOfTurn (eot_threshold, eot_timeout_ms). Text in: ForceEndTurn,
//                        CloseStream, Configure (answered with ConfigureSuccess or ConfigureFailure).
//   POST /v1/auth/grant  `Authorization: Token <key>` → { access_token (a JWT), expires_in }
//                        (service-tokens.mjs, with the socket's credential check).
// Auth as Deepgram takes it: the subprotocols ["token", <key>] or ["bearer", <jwt>] (browsers),
// or the header `Authorization: Token <key>` / `Bearer <jwt>`; the backend's `token` is the key.
// At capacity (the `capacity` knob) the handshake is refused with HTTP 429, as Deepgram refuses a
// request over the concurrency limit; `delay_ms` delays the handshake. A stream with no audio or
// KeepAlive for 10 s is closed with 1011 NET-0001.
//
// Built from Deepgram's public docs:
//   https://developers.deepgram.com/reference/speech-to-text/listen-streaming   (v1 query, messages)
//   https://developers.deepgram.com/docs/finalize                               (Finalize, from_finalize)
//   https://developers.deepgram.com/docs/speech-started                         (SpeechStarted)
//   https://developers.deepgram.com/docs/utterance-end                          (UtteranceEnd)
//   https://developers.deepgram.com/docs/understand-endpointing-interim-results (is_final, speech_final)
//   https://developers.deepgram.com/docs/flux/state                             (Flux turn state machine)
//   https://developers.deepgram.com/docs/flux/force-end-turn                    (ForceEndTurn)
//   https://developers.deepgram.com/docs/flux/configure                         (Configure)
//   https://developers.deepgram.com/reference/auth/tokens/grant                 (token grant)
//   https://developers.deepgram.com/docs/token-based-authentication
// The docs' example messages are in test/fixtures/deepgram/.
//
// Recognition is the shared StreamingRecogniser (pocketsphinx). Nova: a word is final (`is_final`)
// once stable (core/word-stability.mjs), the rest of the utterance is interim; the utterance's end
// (`endpointing`, at least the recogniser's 480 ms) is `speech_final`. Flux: the turn state machine
// is core/flux-turns.mjs; the confidence that a turn is over is the silence so far over one second.
import { randomUUID } from "node:crypto";
import { RationalResampler, int16ToFloat } from "../resample.mjs";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { admitStream } from "../stream-gate.mjs";
import { deepgramTokens } from "./service-tokens.mjs";
import { DECODER_RATE, FRAME_16K, StreamingRecogniser } from "../recogniser.mjs";
import { forceEndTurn, initialTurnState, turnFrame } from "../core/flux-turns.mjs";

const SERVICE = "deepgram";
const IDLE_CLOSE_MS = 10_000;
const MODEL_VERSION = "2025-01-01.0 (bargein reference emulator)";
/** One model, one UUID (Deepgram names the model, not the request, by it). */
const MODEL_UUID = "0b6e4f3a-7c2d-4e1b-9a8f-5d3c2b1a0e9f";
/** Seconds of silence at which Flux's end-of-turn confidence reaches 1. */
const FLUX_EOT_HORIZON_S = 1.0;
/** Flux sends an Update about every 0.25 s of audio: three 80 ms frames. */
const FLUX_UPDATE_FRAMES = 3;

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 * @returns {import("../backend.mjs").Emulator}
 */
export function deepgramEmulator({ stats, pool, token }) {
  const tokens = deepgramTokens({ stats, key: token });
  /** @param {"nova" | "flux"} kind */
  const listen = (kind) =>
    /** @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {URL} url */
    async (ws, knobs, url) => {
      // Capacity was checked before the upgrade (an HTTP 429 there, as Deepgram answers); this only counts.
      const gate = admitStream(stats, SERVICE, { ...knobs, capacity: undefined }, () => {});
      if (!gate) return;
      const stream = new ListenStream(ws, knobs, url, kind, stats);
      ws.on("error", () => {});
      ws.on("close", () => {
        gate.closed();
        stream.dispose().then((decoder) => decoder && pool?.release(decoder));
      });
      ws.on("message", (data, isBinary) => stream.receive(/** @type {Buffer} */ (data), isBinary));
      const decoder = pool ? await pool.acquire(knobs).catch(() => null) : null;
      if (stream.closed) {
        if (decoder) pool?.release(decoder);
        return;
      }
      if (!decoder) {
        // Deepgram's close for a failure on its side: 1011 with a NET- code in the reason.
        ws.close(1011, "NET-0000: no speech recogniser on this server (pocketsphinx is not installed)");
        return;
      }
      stream.start(decoder);
    };
  return {
    name: SERVICE,
    sockets: { "/v1/listen": listen("nova"), "/v2/listen": listen("flux") },
    http: tokens.http,
    authorize: (req) => tokens.authorize(req),
    mintForPage: tokens.forPage,
    async beforeUpgrade(url, knobs) {
      await sleep(knobs.delayMs ?? 0);
      const open = /** @type {Record<string, number>} */ (stats.counters[/** @type {"stt"} */ (/** @type {unknown} */ (SERVICE))] ?? {}).open ?? 0;
      if (knobs.capacity !== undefined && open >= knobs.capacity) {
        stats.add(/** @type {any} */ (SERVICE), "rejected");
        return { status: 429, text: "Too Many Requests" };
      }
      const encoding = url.searchParams.get("encoding") ?? "linear16";
      if (encoding !== "linear16") return { status: 400, text: "Bad Request" };
      return null;
    },
    health: () => ({ recogniser: pool !== null, paths: ["/v1/listen", "/v2/listen", "/v1/auth/grant"] }),
  };
}

/** @param {URLSearchParams} q @param {string} name @param {number} fallback */
const numberParam = (q, name, fallback) => {
  const v = Number(q.get(name));
  return q.get(name) !== null && Number.isFinite(v) ? v : fallback;
};
/** @param {number} x */
const round3 = (x) => Math.round(x * 1000) / 1000;

/** One /v1/listen or /v2/listen stream: audio in, the protocol's messages out. */
class ListenStream {
  /**
   * @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {URL} url
   * @param {"nova" | "flux"} kind @param {import("../stats.mjs").Stats} stats
   */
  constructor(ws, knobs, url, kind, stats) {
    const q = url.searchParams;
    this.ws = ws;
    this.knobs = knobs;
    this.kind = kind;
    this.stats = stats;
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add(/** @type {any} */ (SERVICE), "dropped") });
    this.requestId = randomUUID();
    this.model = q.get("model") ?? (kind === "flux" ? "flux-general-en" : "nova-3");
    this.sampleRate = numberParam(q, "sample_rate", 16000);
    const g = gcd(DECODER_RATE, this.sampleRate);
    this.resampler = this.sampleRate === DECODER_RATE ? null : new RationalResampler(DECODER_RATE / g, this.sampleRate / g);
    this.interim = q.get("interim_results") === "true";
    this.vadEvents = q.get("vad_events") === "true";
    this.utteranceEndS = q.has("utterance_end_ms") ? numberParam(q, "utterance_end_ms", 1000) / 1000 : null;
    const endpointing = q.get("endpointing");
    this.speechFinal = endpointing !== "false";
    this.endpointMs = Math.max(knobs.endpointMs ?? 480, endpointing && endpointing !== "false" ? Number(endpointing) || 0 : 0);
    /** @type {StreamingRecogniser | null} */
    this.recogniser = null;
    this.pending = new Float32Array(0);
    this.receivedS = 0;
    /** Control messages waiting for the audio before them: { type, at } (seconds received). */
    /** @type {{ type: string, at: number }[]} */
    this.controls = [];
    this.closed = false;
    this.pumping = Promise.resolve();
    this.pumpScheduled = false;
    this.sequenceId = 0;
    // Nova: words of the open utterance already sent as final, and where the finals reach.
    this.finalized = 0;
    this.cursorS = 0;
    this.lastInterim = "";
    /** @type {number | null} */
    this.lastWordEnd = null;
    this.utteranceEndSent = true;
    // Flux: the turn state machine (core/flux-turns.mjs) and its settings from the query.
    this.turns = initialTurnState();
    this.turnConfig = {
      eotThreshold: numberParam(q, "eot_threshold", 0.7),
      eagerThreshold: q.has("eager_eot_threshold") ? numberParam(q, "eager_eot_threshold", 0.5) : null,
      eotTimeoutS: numberParam(q, "eot_timeout_ms", 5000) / 1000,
      horizonS: FLUX_EOT_HORIZON_S,
      updateFrames: FLUX_UPDATE_FRAMES,
    };
    this.idle = setTimeout(() => this.closeWith(1011, "NET-0001"), IDLE_CLOSE_MS).unref();
  }

  /** @param {import("../pocketsphinx.mjs").Decoder} decoder */
  start(decoder) {
    this.recogniser = new StreamingRecogniser(decoder, { ...this.knobs, endpointMs: this.endpointMs });
    if (this.kind === "flux") this.send({ type: "Connected", request_id: this.requestId, sequence_id: this.sequenceId++ });
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformed === "notype" ? JSON.stringify({ transcript: "no type" }) : "{not json");
    if (oversize) this.send({ type: this.kind === "flux" ? "TurnInfo" : "Results", transcript: "x".repeat(oversize) });
    this.schedulePump();
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    this.faults.send(JSON.stringify(message));
  }

  /** @param {number} code @param {string} reason */
  closeWith(code, reason) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason);
  }

  /** @param {Buffer} data @param {boolean} isBinary */
  receive(data, isBinary) {
    if (this.closed) return;
    this.idle.refresh();
    if (isBinary) {
      const usable = data.byteLength - (data.byteLength % 2);
      const samples = new Int16Array(usable / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      const float = int16ToFloat(samples);
      const pcm = this.resampler ? this.resampler.process(float) : float;
      this.receivedS += samples.length / this.sampleRate;
      const joined = new Float32Array(this.pending.length + pcm.length);
      joined.set(this.pending);
      joined.set(pcm, this.pending.length);
      this.pending = joined;
    } else {
      /** @type {any} */
      let message;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {
        return this.closeWith(1008, "DATA-0000: a text message is not JSON");
      }
      const known = this.kind === "flux" ? ["ForceEndTurn", "CloseStream", "KeepAlive", "Configure"] : ["KeepAlive", "Finalize", "CloseStream"];
      if (!known.includes(message?.type)) return this.closeWith(1008, `DATA-0000: unknown message type ${JSON.stringify(message?.type)}`);
      if (message.type === "KeepAlive") return;
      if (message.type === "Configure") return this.configure(message);
      this.controls.push({ type: message.type, at: this.receivedS });
    }
    this.schedulePump();
  }

  schedulePump() {
    if (!this.recogniser || this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    this.pumping = this.pumping.then(() => this.pump()).catch((err) => this.closeWith(1011, `NET-0000: ${err.message}`));
  }

  /** Decodes whole frames; a control message waits for the audio sent before it (a partial frame too). */
  async pump() {
    this.pumpScheduled = false;
    const recogniser = /** @type {StreamingRecogniser} */ (this.recogniser);
    while (!this.closed) {
      const processedS = recogniser.processed / DECODER_RATE;
      const control = this.controls[0];
      const flushPartial = control !== undefined && this.pending.length > 0 && control.at > processedS + 1e-9;
      if (this.pending.length >= FRAME_16K || flushPartial) {
        await this.faults.stall.waitIfStalled();
        const n = Math.min(FRAME_16K, this.pending.length);
        const frame = this.pending.slice(0, n);
        this.pending = this.pending.slice(n);
        const result = await recogniser.processFrame(frame);
        if (this.kind === "nova") this.novaFrame(result);
        else this.fluxFrame(result);
        continue;
      }
      if (!control) return;
      this.controls.shift();
      const words = await recogniser.finish();
      if (this.kind === "nova") this.novaFlush(control.type, words);
      else this.fluxFlush(control.type, words);
    }
  }

  // ─── Nova (/v1/listen) ────────────────────────────────────────────────────

  /** @param {import("../recogniser.mjs").FrameResult} r */
  novaFrame(r) {
    const nowS = r.processed / DECODER_RATE;
    if (r.started) {
      this.finalized = 0;
      this.lastInterim = "";
      if (this.vadEvents) this.send({ type: "SpeechStarted", channel: [0, 1], timestamp: round3(this.recogniserStart()) });
    }
    if (r.ended) {
      this.sendResults(r.words.slice(this.finalized), { isFinal: true, speechFinal: this.speechFinal, endS: nowS });
      this.finalized = 0;
    } else if (r.inUtterance) {
      if (r.stableCount > this.finalized) {
        const next = r.words[r.stableCount];
        this.sendResults(r.words.slice(this.finalized, r.stableCount), { isFinal: true, speechFinal: false, endS: next ? next.start : nowS });
        this.finalized = r.stableCount;
      }
      const interim = r.words.slice(this.finalized);
      const text = interim.map((w) => w.word).join(" ");
      if (this.interim && text && text !== this.lastInterim) this.sendResults(interim, { isFinal: false, speechFinal: false, endS: nowS });
      this.lastInterim = text;
    }
    if (this.utteranceEndS !== null && !this.utteranceEndSent && this.lastWordEnd !== null && !r.inUtterance && nowS - this.lastWordEnd >= this.utteranceEndS) {
      this.utteranceEndSent = true;
      this.send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: round3(this.lastWordEnd) });
    }
  }

  recogniserStart() {
    return /** @type {StreamingRecogniser} */ (this.recogniser).utteranceStart;
  }

  /** @param {string} type @param {import("../recogniser.mjs").TimedWord[]} words */
  novaFlush(type, words) {
    const endS = /** @type {StreamingRecogniser} */ (this.recogniser).processed / DECODER_RATE;
    this.sendResults(words.slice(this.finalized), { isFinal: true, speechFinal: false, endS, fromFinalize: type === "Finalize" });
    this.finalized = 0;
    this.lastInterim = "";
    if (type === "CloseStream") this.endStream(endS);
  }

  /**
   * One Results message. Finals tile the audio: each starts where the last final ended.
   * @param {import("../recogniser.mjs").TimedWord[]} words
   * @param {{ isFinal: boolean, speechFinal: boolean, endS: number, fromFinalize?: boolean }} o
   */
  sendResults(words, { isFinal, speechFinal, endS, fromFinalize = false }) {
    const start = this.cursorS;
    const end = Math.max(start, endS);
    if (isFinal) {
      this.cursorS = end;
      if (words.length > 0) {
        this.lastWordEnd = words[words.length - 1].end;
        this.utteranceEndSent = false;
      }
      this.stats.add(/** @type {any} */ (SERVICE), "words", words.length);
    }
    this.send({
      type: "Results",
      channel_index: [0, 1],
      duration: round3(end - start),
      start: round3(start),
      is_final: isFinal,
      speech_final: speechFinal,
      channel: {
        alternatives: [
          {
            transcript: words.map((w) => w.word).join(" "),
            confidence: words.length ? 0.9 : 0,
            words: words.map((w) => ({ word: w.word, start: round3(w.start), end: round3(w.end), confidence: 0.9, punctuated_word: w.word })),
          },
        ],
      },
      metadata: { request_id: this.requestId, model_info: { name: this.model, version: MODEL_VERSION, arch: this.model }, model_uuid: MODEL_UUID },
      from_finalize: fromFinalize,
    });
  }

  /** CloseStream: the Metadata summary, then a normal close. @param {number} durationS */
  endStream(durationS) {
    this.send({
      type: "Metadata",
      transaction_key: "deprecated",
      request_id: this.requestId,
      sha256: "",
      created: new Date().toISOString(),
      duration: round3(durationS),
      channels: 1,
      models: [MODEL_UUID],
      model_info: { [MODEL_UUID]: { name: this.model, version: MODEL_VERSION, arch: this.model } },
    });
    this.closeWith(1000, "");
  }

  // ─── Flux (/v2/listen) ────────────────────────────────────────────────────

  /**
   * Configure: new thresholds and keyterms mid-stream, answered with ConfigureSuccess (what now
   * applies) or ConfigureFailure (what was wrong; nothing changes, the stream lives on). The
   * ranges are the listen reference's: eot_threshold 0.5–0.9, eager_eot_threshold 0.3–0.9.
   * Keyterms replace the earlier list. Fields beyond `type` in the answers are this emulator's reading.
   *   https://developers.deepgram.com/docs/flux/configure
   *   https://developers.deepgram.com/reference/speech-to-text/listen-flux
   * @param {Record<string, any>} message
   */
  configure(message) {
    const t = message.thresholds ?? {};
    const problems = [];
    const inRange = (/** @type {unknown} */ v, /** @type {number} */ lo, /** @type {number} */ hi) => v === undefined || (typeof v === "number" && v >= lo && v <= hi);
    if (typeof t !== "object" || Array.isArray(t)) problems.push("thresholds must be an object");
    if (!inRange(t.eot_threshold, 0.5, 0.9)) problems.push(`eot_threshold must be between 0.5 and 0.9 (got ${JSON.stringify(t.eot_threshold)})`);
    if (!inRange(t.eager_eot_threshold, 0.3, 0.9)) problems.push(`eager_eot_threshold must be between 0.3 and 0.9 (got ${JSON.stringify(t.eager_eot_threshold)})`);
    if (t.eot_timeout_ms !== undefined && !(Number.isInteger(t.eot_timeout_ms) && t.eot_timeout_ms > 0)) problems.push(`eot_timeout_ms must be a positive whole number (got ${JSON.stringify(t.eot_timeout_ms)})`);
    if (message.keyterms !== undefined && !(Array.isArray(message.keyterms) && message.keyterms.every((k) => typeof k === "string"))) problems.push("keyterms must be a list of strings");
    const head = { request_id: this.requestId, sequence_id: this.sequenceId++ };
    if (problems.length) return this.send({ type: "ConfigureFailure", ...head, description: problems.join("; ") });
    if (t.eot_threshold !== undefined) this.turnConfig.eotThreshold = t.eot_threshold;
    if (t.eager_eot_threshold !== undefined) this.turnConfig.eagerThreshold = t.eager_eot_threshold;
    if (t.eot_timeout_ms !== undefined) this.turnConfig.eotTimeoutS = t.eot_timeout_ms / 1000;
    if (message.keyterms !== undefined) this.keyterms = [...message.keyterms];
    this.send({
      type: "ConfigureSuccess",
      ...head,
      thresholds: { eot_threshold: this.turnConfig.eotThreshold, eager_eot_threshold: this.turnConfig.eagerThreshold, eot_timeout_ms: Math.round(this.turnConfig.eotTimeoutS * 1000) },
      keyterms: this.keyterms ?? [],
    });
  }

  /** @param {import("../recogniser.mjs").FrameResult} r */
  fluxFrame(r) {
    const nowS = r.processed / DECODER_RATE;
    const frame = { ...r, nowS, utteranceStartS: this.recogniserStart() };
    this.sendTurns(turnFrame(this.turns, frame, this.turnConfig), nowS);
  }

  /** @param {string} type @param {import("../recogniser.mjs").TimedWord[]} words */
  fluxFlush(type, words) {
    const nowS = /** @type {StreamingRecogniser} */ (this.recogniser).processed / DECODER_RATE;
    this.sendTurns(forceEndTurn(this.turns, words, nowS), nowS);
    if (type === "CloseStream") this.closeWith(1000, "");
  }

  /** @param {{ state: import("../core/flux-turns.mjs").TurnState, events: import("../core/flux-turns.mjs").TurnEvent[] }} step @param {number} nowS */
  sendTurns({ state, events }, nowS) {
    this.turns = state;
    for (const e of events) {
      if (e.event === "EndOfTurn") this.stats.add(/** @type {any} */ (SERVICE), "words", e.words.length);
      this.send({
        type: "TurnInfo",
        request_id: this.requestId,
        sequence_id: this.sequenceId++,
        event: e.event,
        turn_index: e.turnIndex,
        audio_window_start: round3(e.windowStartS),
        audio_window_end: round3(nowS),
        transcript: e.words.map((w) => w.word).join(" "),
        words: e.words.map((w) => ({ word: w.word, confidence: 0.9, start: round3(w.start), end: round3(w.end) })),
        end_of_turn_confidence: round3(e.confidence),
        ...(e.trigger ? { trigger: e.trigger } : {}),
      });
    }
  }

  /** Stops decoding; resolves with the decoder once no call into it is in flight. */
  async dispose() {
    this.closed = true;
    clearTimeout(this.idle);
    this.faults.dispose();
    await this.pumping.catch(() => {});
    return this.recogniser?.decoder ?? null;
  }
}

/** @param {number} a @param {number} b @returns {number} */
function gcd(a, b) {
  return b === 0 ? a : gcd(b, a % b);
}
