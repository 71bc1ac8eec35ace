// Kyutai STT emulator: moshi-server's ASR streaming protocol at /api/asr-streaming.
//
// In:  msgpack maps {type:"Audio", pcm} (24 kHz mono float32; an array of numbers
//      or the raw little-endian bytes, any chunk size) and {type:"Marker", id}.
// Out: Ready; Word{text,start_time}; EndWord{stop_time}; Step{step_idx,prs,buffered_pcm}
//      once per 80 ms of audio processed; Marker{id} once all audio sent before
//      it has been processed and its words are out (see markerDue); Error{message}.
//
// Audio is resampled to 16 kHz and recognised by the shared StreamingRecogniser
// (recogniser.mjs: pocketsphinx, utterances cut by energy). A Word is sent once it
// is stable (core/word-stability.mjs); its EndWord when the next word is sent or the
// utterance ends. Pause probabilities `prs` come from the same energy detector:
// prs[k] = (silence run so far) / horizon[k].
import { decode } from "@msgpack/msgpack";
import { downsampler24to16 } from "../resample.mjs";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { admitStream } from "../stream-gate.mjs";
import { DECODER_RATE, FRAME_16K, StreamingRecogniser } from "../recogniser.mjs";
import { pauseProbabilities } from "../core/utterance-cutter.mjs";
import { encodeMessage, malformedBytes, rejectAtCapacity } from "./kyutai-wire.mjs";

const INPUT_RATE = 24000;
/** Longest a Marker waits for its utterance to end, in seconds of audio after it. */
const MARKER_MAX_DELAY_S = 1.0;
/** Horizons of the pause probabilities, in seconds (Unmute reads prs[2]). */
const PAUSE_HORIZONS = [0.24, 0.48, 0.8, 1.6];

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 *   `pool` is null when there is no recogniser: each stream then gets an Error and a close (1011).
 * @returns {import("../backend.mjs").Emulator}
 */
export function kyutaiSttEmulator({ stats, pool, install, recogniserMissingReason }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   */
  async function handleStt(ws, knobs) {
    const gate = admitStream(stats, "stt", knobs, () => rejectAtCapacity(ws));
    if (!gate) return;
    const session = new SttSession(ws, knobs, stats);
    let closedByServer = false;
    // A bad frame or a broken socket ends this stream (ws closes it), never the server. One way
    // to get here: a rate-limited socket closed with bytes still queued in SocketFaults, whose
    // remaining raw bytes ws then parses out of order (see limitReadRate).
    ws.on("error", () => {});
    ws.on("close", (code) => {
      gate.closed();
      if (code === 1000) stats.add("stt", "closedNormally");
      if (!closedByServer && !session.faults.dropped) stats.add("stt", "closedByClient");
      session.dispose().then((decoder) => decoder && pool?.release(decoder));
    });
    // Listen before any await, so no Audio sent right after the upgrade is lost.
    ws.on("message", (data, isBinary) => {
      try {
        session.receive(data, isBinary);
      } catch (err) {
        session.sendError(`bad message: ${/** @type {Error} */ (err).message}`);
      }
    });
    if (knobs.recognise === 0) {
      // Load-test mode: audio is read, counted and stepped through, but no decoder is taken from the pool.
      await sleep(knobs.delayMs ?? 0);
      session.start();
      return;
    }
    const decoder = await (pool ? pool.acquire(knobs) : Promise.resolve(null)).catch((err) => {
      session.sendError(`speech recogniser failed to start: ${err.message}`);
      return null;
    });
    if (!decoder) {
      if (ws.readyState === ws.OPEN) {
        session.sendError(`no speech recogniser on this server (pocketsphinx is not installed); ${install}`);
        closedByServer = true;
        ws.close(1011, "no recogniser");
      }
      return;
    }
    if (session.closed) {
      pool?.release(decoder);
      return;
    }
    session.useDecoder(decoder);
    await sleep(knobs.delayMs ?? 0);
    session.start();
  }
  return {
    name: "stt",
    sockets: { "/api/asr-streaming": handleStt },
    health: () => ({
      recogniser: pool !== null,
      reason: pool !== null ? null : recogniserMissingReason,
      install: pool !== null ? null : install,
    }),
  };
}

class SttSession {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {import("../stats.mjs").Stats} stats
   */
  constructor(ws, knobs, stats) {
    this.ws = ws;
    this.knobs = knobs;
    this.stats = stats;
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("stt", "dropped") });
    this.recogniser = new StreamingRecogniser(null, knobs);
    this.resampler = downsampler24to16();
    this.started = false;
    this.closed = false;
    /** 16 kHz samples waiting to be decoded. */
    this.pending = new Float32Array(0);
    this.received24k = 0;
    /** @type {{ id: unknown, at16k: number }[]} */
    this.markers = [];
    this.stepIdx = 0;
    this.emittedWords = 0;
    /** Index in the utterance of the word sent without its EndWord yet. @type {number | null} */
    this.openWord = null;
    /** @type {Promise<void>} */
    this.pumping = Promise.resolve();
    this.pumpScheduled = false;
  }

  /** @param {import("../pocketsphinx.mjs").Decoder} decoder */
  useDecoder(decoder) {
    this.recogniser = new StreamingRecogniser(decoder, this.knobs);
  }

  get processed16k() {
    return this.recogniser.processed;
  }

  start() {
    if (this.closed) return;
    this.started = true;
    this.send({ type: "Ready" });
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformedBytes(malformed));
    if (oversize) this.send({ type: "Word", text: "x".repeat(oversize), start_time: 0 });
    this.schedulePump();
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    this.faults.send(encodeMessage(message));
  }

  /** @param {string} message */
  sendError(message) {
    this.send({ type: "Error", message });
  }

  /** @param {import("ws").RawData} data @param {boolean} isBinary */
  receive(data, isBinary) {
    const bytes = /** @type {Buffer} */ (data);
    this.stats.add("stt", "bytesIn", bytes.length);
    /** @type {any} */
    let message;
    try {
      message = isBinary ? decode(bytes) : JSON.parse(bytes.toString("utf8"));
    } catch {
      this.sendError("message is not msgpack");
      return;
    }
    if (message?.type === "Audio") {
      const pcm = toFloat32(message.pcm);
      if (!pcm) return this.sendError("Audio.pcm must be an array of numbers or float32 bytes");
      this.received24k += pcm.length;
      const resampled = this.resampler.process(pcm);
      const joined = new Float32Array(this.pending.length + resampled.length);
      joined.set(this.pending);
      joined.set(resampled, this.pending.length);
      this.pending = joined;
    } else if (message?.type === "Marker") {
      this.markers.push({ id: message.id, at16k: Math.floor((this.received24k * DECODER_RATE) / INPUT_RATE) });
    } else {
      this.sendError(`unknown message type ${JSON.stringify(message?.type)}`);
      return;
    }
    this.schedulePump();
  }

  schedulePump() {
    if (!this.started || this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    this.pumping = this.pumping.then(() => this.pump()).catch((err) => {
      this.sendError(`recogniser failed: ${err.message}`);
    });
  }

  /** Decodes every whole frame; a pending Marker also flushes a partial frame. Runs one at a time. */
  async pump() {
    this.pumpScheduled = false;
    while (!this.closed) {
      // A partial frame is decoded only when it holds audio sent before a Marker.
      const flushPartial = this.markers.length > 0 && this.markers[0].at16k > this.processed16k && this.pending.length > 0;
      if (this.pending.length >= FRAME_16K || flushPartial) {
        // A stall hangs the whole stream: no reads (SocketFaults) and no decoding or sending.
        await this.faults.stall.waitIfStalled();
        const n = Math.min(FRAME_16K, this.pending.length);
        const frame = this.pending.slice(0, n);
        this.pending = this.pending.slice(n);
        await this.processFrame(frame);
      }
      while (this.markers.length > 0 && this.markerDue(this.markers[0].at16k)) {
        const marker = /** @type {{ id: unknown }} */ (this.markers.shift());
        if (this.knobs.ignoreMarkers) continue; // a service that never confirms a flush
        this.stats.add("stt", "markers");
        this.send({ type: "Marker", id: marker.id });
      }
      const more = this.pending.length >= FRAME_16K || (this.markers.length > 0 && this.markers[0].at16k > this.processed16k && this.pending.length > 0);
      if (!more) return;
    }
  }

  /**
   * Like moshi-server, where a Marker comes out after the model's delay, a Marker
   * waits for the words of the audio before it: until its utterance has ended
   * (`endpointMs` of silence, which the client's flush padding provides), but at
   * most MARKER_MAX_DELAY_S of further audio.
   * @param {number} at16k the marker's position
   */
  markerDue(at16k) {
    if (this.processed16k < at16k) return false;
    const { cutter, utteranceStart } = this.recogniser;
    const utteranceBeganAfter = utteranceStart * DECODER_RATE >= at16k;
    return !cutter.inUtterance || utteranceBeganAfter || this.processed16k >= at16k + MARKER_MAX_DELAY_S * DECODER_RATE;
  }

  /** @param {Float32Array} frame 16 kHz */
  async processFrame(frame) {
    const result = await this.recogniser.processFrame(frame);
    if (result.started) this.emittedWords = 0;
    if (result.inUtterance || result.ended) this.emitStableWords(result.words, result.stableCount, result.ended);
    const bufferedPcm = Math.round(((this.pending.length - frame.length) * INPUT_RATE) / DECODER_RATE);
    this.send({
      type: "Step",
      step_idx: this.stepIdx++,
      prs: pauseProbabilities(result.silentSeconds, PAUSE_HORIZONS),
      buffered_pcm: Math.max(0, bufferedPcm),
    });
  }

  /**
   * Sends the words that became stable since the last frame, each closing the one before it.
   * @param {import("../recogniser.mjs").TimedWord[]} words @param {number} stableCount @param {boolean} final
   */
  emitStableWords(words, stableCount, final) {
    for (let i = this.emittedWords; i < stableCount; i++) {
      this.closeOpenWord(words);
      this.stats.add("stt", "words");
      this.send({ type: "Word", text: words[i].word, start_time: words[i].start });
      this.openWord = i;
      this.emittedWords = i + 1;
    }
    if (final) this.closeOpenWord(words);
  }

  /**
   * Sends EndWord for the last word sent, with its end in the newest hypothesis
   * (never past the start of the word after it).
   * @param {import("../recogniser.mjs").TimedWord[]} words
   */
  closeOpenWord(words) {
    if (this.openWord === null) return;
    const word = words[this.openWord];
    const next = words[this.openWord + 1];
    const last = words.at(-1);
    const stop = word
      ? Math.min(word.end, next ? next.start : Infinity)
      : last ? this.recogniser.secondsAt(last.endFrame) : this.recogniser.utteranceStart;
    this.send({ type: "EndWord", stop_time: stop });
    this.openWord = null;
  }

  /** Stops decoding; resolves with the decoder once no call into it is in flight. */
  async dispose() {
    this.closed = true;
    this.faults.dispose();
    await this.pumping.catch(() => {});
    return this.recogniser.decoder;
  }
}

/**
 * @param {unknown} pcm
 * @returns {Float32Array | null}
 */
function toFloat32(pcm) {
  if (Array.isArray(pcm)) return Float32Array.from(pcm);
  if (pcm instanceof Uint8Array) {
    // Copy: msgpack hands out a view into the socket's Buffer, which may be unaligned.
    const copy = new Uint8Array(pcm.subarray(0, pcm.length - (pcm.length % 4)));
    return new Float32Array(copy.buffer);
  }
  return null;
}
