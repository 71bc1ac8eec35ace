// AssemblyAI Universal-Streaming v3 emulator at WS /v3/ws, built from the public docs:
//   https://www.assemblyai.com/docs/api-reference/streaming-api/streaming-api          (query, messages, fields)
//   https://www.assemblyai.com/docs/streaming/universal-streaming/message-sequence     (order, example messages)
//   https://www.assemblyai.com/docs/streaming/universal-streaming/turn-detection       (end of turn, ForceEndpoint)
//   https://www.assemblyai.com/docs/streaming/common-session-errors-and-closures       (close codes)
//   https://www.assemblyai.com/docs/streaming/authenticate-with-a-temporary-token      (`token`, one session each)
//
// In:  binary frames of pcm_s16le at `sample_rate`, 50–1000 ms each (else close 3007);
//      JSON {type:"ForceEndpoint"|"UpdateConfiguration"|"KeepAlive"|"Terminate"} (else close 3006).
// Out: Begin{id,expires_at}; SpeechStarted{timestamp,confidence}; Turn{turn_order,turn_is_formatted,
//      end_of_turn,end_of_turn_confidence,transcript,utterance,words[{start,end,text,confidence,word_is_final}]};
//      with format_turns=true a formatted repeat of each ended turn; Termination{audio_duration_seconds,
//      session_duration_seconds}, then close 1000.
// Auth (service-tokens.mjs): a temporary token from GET /v3/token as `token` in the query, or the
// key (the backend's token) in an `Authorization` header, the server way. A wrong, expired, spent or
// missing one is accepted at the HTTP level and closed with 1008, as the service documents. The
// session lasts at most the token's max_session_duration_seconds (3 h by default; Begin.expires_at),
// then closes with 3008.
//
// Recognition is pocketsphinx (the DecoderPool) on 80 ms frames at 16 kHz. A word is final once it,
// the words before it and the word after it have not changed for 4 frames, or when the turn ends.
// End of turn comes from `TurnCutter` (core/turn-cutter.mjs), a pure silence-based stand-in for
// AssemblyAI's model: its "confidence" grows with the silence (silence / max_turn_silence), so the
// semantic rule (confidence ≥ end_of_turn_confidence_threshold after min_turn_silence) and the
// acoustic one (max_turn_silence) keep the documented parameters' meaning. Counters go to the backend's `stt` group.
import { randomUUID } from "node:crypto";
import { FRAME_RATE } from "../pocketsphinx.mjs";
import { RationalResampler, floatToInt16, int16ToFloat } from "../resample.mjs";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { TurnCutter, turnSettings } from "../core/turn-cutter.mjs";

const DECODER_RATE = 16000;
const FRAME_16K = 1280; // 80 ms
const STABLE_FRAMES = 4;
const PREROLL_FRAMES = 3;

/**
 * @typedef {(url: URL, req: import("node:http").IncomingMessage | undefined) => { ok: true, maxSessionS: number } | { ok: false, reason: string }} SocketCredentials
 * @param {{ stats: import("../stats.mjs").Stats, pool: import("../pocketsphinx.mjs").DecoderPool | null, credentials: SocketCredentials }} deps
 */
export function createAssemblyAiService({ stats, pool, credentials }) {
  /**
   * @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs @param {URL} url
   * @param {import("node:http").IncomingMessage} [req]
   */
  return async function handleAssemblyAi(ws, knobs, url, req) {
    ws.on("error", () => {});
    const auth = credentials(url, req);
    if (!auth.ok) {
      stats.add("http", "unauthorized");
      return ws.close(1008, `Unauthorized Connection: ${auth.reason}`);
    }
    if (knobs.capacity !== undefined && stats.counters.stt.open >= knobs.capacity) {
      stats.add("stt", "rejected");
      return ws.close(3009, "Unauthorized Connection: Too many concurrent sessions");
    }
    const sampleRate = Number(url.searchParams.get("sample_rate") ?? 16000);
    const encoding = url.searchParams.get("encoding") ?? "pcm_s16le";
    if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48000 || encoding !== "pcm_s16le") {
      return ws.close(3006, `Invalid Message: this emulator takes pcm_s16le at 8000–48000 Hz (got ${encoding} at ${url.searchParams.get("sample_rate")})`);
    }
    stats.add("stt", "open");
    stats.add("stt", "opened");
    const session = new AssemblyAiSession(ws, knobs, stats, url.searchParams, sampleRate, auth.maxSessionS);
    ws.on("close", (code) => {
      stats.add("stt", "open", -1);
      if (code === 1000) stats.add("stt", "closedNormally");
      if (!session.closedByServer && !session.faults.dropped) stats.add("stt", "closedByClient");
      session.dispose().then((decoder) => decoder && pool?.release(decoder));
    });
    // Listen before any await, so no audio sent right after the upgrade is lost.
    ws.on("message", (data, isBinary) => session.receive(/** @type {Buffer} */ (data), isBinary));
    const decoder = pool ? await pool.acquire(knobs).catch(() => null) : null;
    if (session.closed) {
      if (decoder) pool?.release(decoder);
      return;
    }
    if (!decoder) return session.closeWith(3005, "Session Cancelled: no speech recogniser on this server (pocketsphinx is not installed)");
    session.decoder = decoder;
    await sleep(knobs.delayMs ?? 0);
    session.start();
  };
}

class AssemblyAiSession {
  /**
   * @param {import("ws").WebSocket} ws @param {import("../knobs.mjs").Knobs} knobs
   * @param {import("../stats.mjs").Stats} stats @param {URLSearchParams} query @param {number} sampleRate
   * @param {number} maxSessionS  the token's max_session_duration_seconds
   */
  constructor(ws, knobs, stats, query, sampleRate, maxSessionS) {
    this.ws = ws;
    this.knobs = knobs;
    this.stats = stats;
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("stt", "dropped") });
    this.sampleRate = sampleRate;
    const g = gcd(DECODER_RATE, sampleRate);
    this.resampler = sampleRate === DECODER_RATE ? null : new RationalResampler(DECODER_RATE / g, sampleRate / g);
    this.formatTurns = query.get("format_turns") === "true";
    this.cutter = new TurnCutter(turnSettings(query));
    this.silenceRms = knobs.silenceRms ?? 0.01;
    /** @type {import("../pocketsphinx.mjs").Decoder | null} */
    this.decoder = null;
    this.openedAt = Date.now();
    this.maxSessionS = maxSessionS;
    this.sessionLimit = setTimeout(() => this.closeWith(3008, "Session Expired: Maximum session duration exceeded"), maxSessionS * 1000).unref();
    this.started = false;
    this.closed = false;
    this.closedByServer = false;
    /** Inbound items in arrival order: audio (16 kHz) or a control message. @type {({ pcm: Float32Array } | { control: any })[]} */
    this.inbox = [];
    this.pending = new Float32Array(0);
    this.processed16k = 0;
    this.audioSamples = 0;
    this.turnOrder = 0;
    /** @type {Int16Array[]} */
    this.preroll = [];
    this.inUtterance = false;
    this.utteranceStartS = 0;
    /** @type {{ text: string, start: number, end: number, confidence: number }[]} */
    this.finalWords = [];
    /** @type {string[][]} */
    this.recent = [];
    this.lastSent = "";
    /** @type {Promise<void>} */
    this.pumping = Promise.resolve();
    this.pumpScheduled = false;
  }

  start() {
    if (this.closed) return;
    this.started = true;
    this.send({ type: "Begin", id: randomUUID(), expires_at: Math.floor(this.openedAt / 1000) + this.maxSessionS });
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformed === "notype" ? JSON.stringify({ transcript: "this message has no type" }) : "{not json");
    if (oversize) this.send({ ...turnBody(this.turnOrder, false, false, 0, []), transcript: "x".repeat(oversize) });
    this.schedulePump();
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    this.faults.send(JSON.stringify(message));
  }

  /** @param {number} code @param {string} reason */
  closeWith(code, reason) {
    if (this.closedByServer) return;
    this.closedByServer = true;
    this.closed = true;
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason.slice(0, 120));
  }

  /** @param {Buffer} data @param {boolean} isBinary */
  receive(data, isBinary) {
    if (this.closed) return;
    this.stats.add("stt", "bytesIn", data.length);
    if (isBinary) {
      const ms = ((data.length / 2) * 1000) / this.sampleRate;
      if (ms < 50 || ms > 1000) return this.closeWith(3007, `Input duration violation: ${ms.toFixed(0)} ms. Expected between 50 and 1000 ms`);
      const samples = new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length - (data.length % 2)));
      this.audioSamples += samples.length;
      const f32 = int16ToFloat(samples);
      this.inbox.push({ pcm: this.resampler ? this.resampler.process(f32) : f32 });
    } else {
      /** @type {any} */
      let control;
      try {
        control = JSON.parse(data.toString("utf8"));
      } catch {
        return this.closeWith(3006, `Invalid JSON: ${data.toString("utf8").slice(0, 60)}`);
      }
      if (typeof control !== "object" || control === null || Array.isArray(control)) return this.closeWith(3006, `Invalid Message: ${data.toString("utf8").slice(0, 60)}`);
      if (!["ForceEndpoint", "UpdateConfiguration", "KeepAlive", "Terminate"].includes(control.type)) {
        return this.closeWith(3006, `Invalid Message Type: ${String(control.type)}`);
      }
      this.inbox.push({ control });
    }
    this.schedulePump();
  }

  schedulePump() {
    if (!this.started || this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    this.pumping = this.pumping.then(() => this.pump()).catch((err) => this.closeWith(3005, `Session Cancelled: ${err.message}`));
  }

  /** Handles the inbox in order: audio is decoded in whole 80 ms frames; a control message first decodes what came before it. */
  async pump() {
    this.pumpScheduled = false;
    while (!this.closed) {
      const item = this.inbox.shift();
      if (!item) break;
      if ("pcm" in item) {
        this.pending = concat(this.pending, item.pcm);
        while (this.pending.length >= FRAME_16K && !this.closed) await this.nextFrame(FRAME_16K);
        continue;
      }
      const { control } = item;
      if (control.type === "KeepAlive") continue;
      if (control.type === "UpdateConfiguration") {
        const s = this.cutter.settings;
        if (typeof control.end_of_turn_confidence_threshold === "number") s.endOfTurnConfidenceThreshold = control.end_of_turn_confidence_threshold;
        if (typeof control.min_turn_silence === "number") s.minTurnSilenceMs = control.min_turn_silence;
        if (typeof control.max_turn_silence === "number") s.maxTurnSilenceMs = control.max_turn_silence;
        continue;
      }
      // ForceEndpoint and Terminate: the audio before them counts, partial frame included.
      if (this.pending.length > 0) await this.nextFrame(this.pending.length);
      if (this.inUtterance && this.cutter.force()) await this.endTurn();
      if (control.type === "Terminate") return this.terminate();
    }
  }

  /** @param {number} n 16 kHz samples */
  async nextFrame(n) {
    await this.faults.stall.waitIfStalled();
    const frame = this.pending.slice(0, n);
    this.pending = this.pending.slice(n);
    await this.processFrame(frame);
    this.processed16k += n;
  }

  /** @param {Float32Array} frame 16 kHz */
  async processFrame(frame) {
    const decoder = /** @type {import("../pocketsphinx.mjs").Decoder} */ (this.decoder);
    let energy = 0;
    for (let i = 0; i < frame.length; i++) energy += frame[i] * frame[i];
    const speech = Math.sqrt(energy / Math.max(1, frame.length)) >= this.silenceRms;
    const pcm = floatToInt16(frame);
    const cut = this.cutter.frame(speech, (frame.length / DECODER_RATE) * 1000);
    if (cut === "speech-started" && !this.inUtterance) {
      const prerolled = this.preroll.reduce((n, p) => n + p.length, 0);
      this.inUtterance = true;
      this.utteranceStartS = (this.processed16k - prerolled) / DECODER_RATE;
      this.recent = [];
      this.finalWords = [];
      this.lastSent = "";
      decoder.startUtterance();
      for (const p of this.preroll) await this.feed(p);
      this.preroll = [];
      this.send({ type: "SpeechStarted", timestamp: Math.round((this.processed16k / DECODER_RATE) * 1000), confidence: 0.9 });
    }
    if (!this.inUtterance) {
      this.preroll.push(pcm);
      if (this.preroll.length > PREROLL_FRAMES) this.preroll.shift();
      return;
    }
    await this.feed(pcm);
    if (cut === "end-of-turn") return this.endTurn();
    this.sendPartial();
  }

  /** @param {Int16Array} pcm 16 kHz */
  async feed(pcm) {
    const decoder = /** @type {import("../pocketsphinx.mjs").Decoder} */ (this.decoder);
    await decoder.process(pcm);
  }

  /** The hypothesis's words, with times in ms on the stream's timeline. */
  hypothesis() {
    const segments = /** @type {import("../pocketsphinx.mjs").Decoder} */ (this.decoder).segments();
    const ms = (/** @type {number} */ frame) => Math.round((this.utteranceStartS + frame / FRAME_RATE) * 1000);
    return segments.map((s, i) => {
      const next = segments[i + 1];
      return { text: s.word, start: ms(s.startFrame), end: ms(Math.min(s.endFrame + 1, next ? next.startFrame : Infinity)), confidence: 0.9 };
    });
  }

  /** A Turn with the words so far: the finalized ones, then the hypothesis's newer ones, not final. */
  sendPartial() {
    const words = this.hypothesis();
    this.recent.push(words.map((w) => w.text));
    if (this.recent.length > STABLE_FRAMES) this.recent.shift();
    // pocketsphinx revises its newest words, so a word is final once it and the one after it held for STABLE_FRAMES frames.
    let stable = this.recent.length < STABLE_FRAMES ? 0 : words.length;
    for (const earlier of this.recent) {
      let same = 0;
      while (same < stable && earlier[same] === words[same].text) same++;
      stable = same;
    }
    stable = Math.max(0, stable - 1);
    while (this.finalWords.length < stable) this.finalWords.push(words[this.finalWords.length]);
    const tail = words.slice(this.finalWords.length).map((w) => ({ ...w, word_is_final: false }));
    const all = [...this.finalWords.map((w) => ({ ...w, word_is_final: true })), ...tail];
    const key = all.map((w) => `${w.text}${w.word_is_final ? "" : "*"}`).join(" ");
    if (all.length === 0 || key === this.lastSent) return;
    this.lastSent = key;
    this.send(turnBody(this.turnOrder, false, false, this.cutter.confidence, all));
  }

  /** Ends the turn: every word final, `end_of_turn: true`; then the formatted repeat if asked for. */
  async endTurn() {
    const decoder = /** @type {import("../pocketsphinx.mjs").Decoder} */ (this.decoder);
    decoder.endUtterance();
    this.inUtterance = false;
    const words = this.hypothesis();
    const final = [...this.finalWords, ...words.slice(this.finalWords.length)].map((w) => ({ ...w, word_is_final: true }));
    if (final.length === 0) return; // noise with no words: no turn
    this.stats.add("stt", "words", final.length);
    const confidence = this.cutter.endConfidence;
    const ended = turnBody(this.turnOrder, true, false, confidence, final);
    this.send({ ...ended, utterance: ended.transcript });
    if (this.formatTurns) this.send(turnBody(this.turnOrder, true, true, confidence, formatted(final)));
    this.turnOrder++;
  }

  terminate() {
    this.send({
      type: "Termination",
      audio_duration_seconds: Math.round(this.audioSamples / this.sampleRate),
      session_duration_seconds: Math.round((Date.now() - this.openedAt) / 1000),
    });
    this.closeWith(1000, "");
  }

  /** Stops decoding; resolves with the decoder once no call into it is in flight. */
  async dispose() {
    this.closed = true;
    clearTimeout(this.sessionLimit);
    this.faults.dispose();
    await this.pumping.catch(() => {});
    return this.decoder;
  }
}

/**
 * @param {number} order @param {boolean} endOfTurn @param {boolean} isFormatted @param {number} confidence
 * @param {{ text: string, start: number, end: number, confidence: number, word_is_final: boolean }[]} words
 */
function turnBody(order, endOfTurn, isFormatted, confidence, words) {
  return {
    turn_order: order,
    turn_is_formatted: isFormatted,
    end_of_turn: endOfTurn,
    transcript: words.filter((w) => w.word_is_final).map((w) => w.text).join(" "),
    end_of_turn_confidence: Number(confidence.toFixed(6)),
    words,
    utterance: "",
    type: "Turn",
  };
}

/** The emulator's formatting: a capital first letter and a full stop, as the docs' examples show. @param {any[]} words */
function formatted(words) {
  return words.map((w, i) => {
    let text = i === 0 ? w.text.charAt(0).toUpperCase() + w.text.slice(1) : w.text;
    if (i === words.length - 1) text += ".";
    return { ...w, text };
  });
}

/** @param {Float32Array} a @param {Float32Array} b */
function concat(a, b) {
  if (a.length === 0) return b;
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** @param {number} a @param {number} b @returns {number} */
function gcd(a, b) {
  return b === 0 ? a : gcd(b, a % b);
}
