// STT service: Kyutai's ASR streaming protocol (moshi-server /api/asr-streaming).
//
// In:  msgpack maps {type:"Audio", pcm} (24 kHz mono float32; an array of numbers
//      or the raw little-endian bytes, any chunk size) and {type:"Marker", id}.
// Out: Ready; Word{text,start_time}; EndWord{stop_time}; Step{step_idx,prs,buffered_pcm}
//      once per 80 ms of audio processed; Marker{id} once all audio sent before
//      it has been processed and its words are out (see markerDue); Error{message}.
//
// Audio is resampled to 16 kHz and decoded by pocketsphinx in 80 ms frames.
// Utterances are cut by energy: a frame louder than `silenceRms` starts one (with
// 240 ms of pre-roll), `endpointMs` of silence ends it and flushes its last words.
// A word is sent once it is stable: no longer the last word of the hypothesis,
// and it, the words before it and the word after it have been unchanged for 4 frames (320 ms). Pause probabilities `prs` come from
// the same energy detector: prs[k] = (silence run so far) / horizon[k].
import { decode } from "@msgpack/msgpack";
import { downsampler24to16, floatToInt16 } from "./resample.mjs";
import { FRAME_RATE } from "./pocketsphinx.mjs";
import { SocketFaults } from "./socket-faults.mjs";
import { sleep } from "./knobs.mjs";
import { encodeMessage, malformedBytes, rejectAtCapacity } from "./msgpack-wire.mjs";

const INPUT_RATE = 24000;
const DECODER_RATE = 16000;
const FRAME_16K = 1280; // 80 ms
const FRAME_SECONDS = FRAME_16K / DECODER_RATE;
const PREROLL_FRAMES = 3;
/** Frames (80 ms each) a word must stay unchanged in the hypothesis before it is sent. */
const STABLE_FRAMES = 4;
/** Longest a Marker waits for its utterance to end, in seconds of audio after it. */
const MARKER_MAX_DELAY_S = 1.0;
/** Horizons of the pause probabilities, in seconds (Unmute reads prs[2]). */
const PAUSE_HORIZONS = [0.24, 0.48, 0.8, 1.6];

/**
 * @param {{ stats: import("./stats.mjs").Stats, pool: import("./pocketsphinx.mjs").DecoderPool | null, install: string }} deps
 *   `pool` is null when there is no recogniser: each stream then gets an Error and a close (1011).
 */
export function createSttService({ stats, pool, install }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("./knobs.mjs").Knobs} knobs
   */
  return async function handleStt(ws, knobs) {
    if (knobs.capacity !== undefined && stats.counters.stt.open >= knobs.capacity) {
      stats.add("stt", "rejected");
      rejectAtCapacity(ws);
      return;
    }
    stats.add("stt", "open");
    stats.add("stt", "opened");
    const session = new SttSession(ws, knobs, stats);
    let closedByServer = false;
    // A bad frame or a broken socket ends this stream (ws closes it), never the server. One way
    // to get here: a rate-limited socket closed with bytes still queued in SocketFaults, whose
    // remaining raw bytes ws then parses out of order (see limitReadRate).
    ws.on("error", () => {});
    ws.on("close", (code) => {
      stats.add("stt", "open", -1);
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
    const decoder = await (pool ? pool.acquire() : Promise.resolve(null)).catch((err) => {
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
    session.decoder = decoder;
    await sleep(knobs.delayMs ?? 0);
    session.start();
  };
}

class SttSession {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("./knobs.mjs").Knobs} knobs
   * @param {import("./stats.mjs").Stats} stats
   */
  constructor(ws, knobs, stats) {
    this.ws = ws;
    this.knobs = knobs;
    this.stats = stats;
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("stt", "dropped") });
    /** @type {import("./pocketsphinx.mjs").Decoder | null} */
    this.decoder = null;
    this.resampler = downsampler24to16();
    this.silenceRms = knobs.silenceRms ?? 0.01;
    this.endpointFrames = Math.ceil((knobs.endpointMs ?? 480) / 1000 / FRAME_SECONDS);
    this.started = false;
    this.closed = false;
    /** 16 kHz samples waiting to be decoded. */
    this.pending = new Float32Array(0);
    this.received24k = 0;
    this.processed16k = 0;
    /** @type {{ id: unknown, at16k: number }[]} */
    this.markers = [];
    this.stepIdx = 0;
    this.silentRun = 0;
    /** @type {Int16Array[]} */
    this.preroll = [];
    this.inUtterance = false;
    this.utteranceStart = 0;
    /** The word sequences of the last STABLE_FRAMES hypotheses, oldest first. */
    /** @type {string[][]} */
    this.recentHypotheses = [];
    this.emittedWords = 0;
    /** Index in the utterance of the word sent without its EndWord yet. @type {number | null} */
    this.openWord = null;
    /** @type {Promise<void>} */
    this.pumping = Promise.resolve();
    this.pumpScheduled = false;
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
        this.processed16k += n;
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
    const utteranceBeganAfter = this.utteranceStart * DECODER_RATE >= at16k;
    return !this.inUtterance || utteranceBeganAfter || this.processed16k >= at16k + MARKER_MAX_DELAY_S * DECODER_RATE;
  }

  /** @param {Float32Array} frame 16 kHz */
  async processFrame(frame) {
    const decoder = /** @type {import("./pocketsphinx.mjs").Decoder} */ (this.decoder);
    const recognising = decoder !== null;
    let energy = 0;
    for (let i = 0; i < frame.length; i++) energy += frame[i] * frame[i];
    const silent = Math.sqrt(energy / frame.length) < this.silenceRms;
    this.silentRun = silent ? this.silentRun + 1 : 0;
    const pcm = floatToInt16(frame);

    if (recognising && !this.inUtterance && !silent) {
      this.inUtterance = true;
      this.utteranceStart = (this.processed16k - this.preroll.reduce((n, p) => n + p.length, 0)) / DECODER_RATE;
      this.recentHypotheses = [];
      this.emittedWords = 0;
      decoder.startUtterance();
      for (const p of this.preroll) await decoder.process(p);
      this.preroll = [];
    }
    if (this.inUtterance) {
      await decoder.process(pcm);
      this.emitStableWords(false);
      if (this.silentRun >= this.endpointFrames) {
        decoder.endUtterance();
        this.emitStableWords(true);
        this.inUtterance = false;
      }
    } else if (recognising) {
      this.preroll.push(pcm);
      if (this.preroll.length > PREROLL_FRAMES) this.preroll.shift();
    }

    const bufferedPcm = Math.round(((this.pending.length - frame.length) * INPUT_RATE) / DECODER_RATE);
    const silentSeconds = this.silentRun * FRAME_SECONDS;
    this.send({
      type: "Step",
      step_idx: this.stepIdx++,
      prs: PAUSE_HORIZONS.map((h) => Math.min(1, silentSeconds / h)),
      buffered_pcm: Math.max(0, bufferedPcm),
    });
  }

  /** @param {boolean} final the utterance has ended: every word left is sent. */
  emitStableWords(final) {
    const decoder = /** @type {import("./pocketsphinx.mjs").Decoder} */ (this.decoder);
    const segments = decoder.segments();
    const words = segments.map((s) => s.word);
    this.recentHypotheses.push(words);
    if (this.recentHypotheses.length > STABLE_FRAMES) this.recentHypotheses.shift();
    let stableCount = segments.length;
    if (!final) {
      // pocketsphinx revises its newest words ("to" becomes "tomorrow"), so a word is
      // sent only when it and the word after it have been unchanged for STABLE_FRAMES frames.
      if (this.recentHypotheses.length < STABLE_FRAMES) stableCount = 0;
      for (const earlier of this.recentHypotheses) {
        let same = 0;
        while (same < stableCount && earlier[same] === words[same]) same++;
        stableCount = same;
      }
      stableCount = Math.max(0, stableCount - 1);
    }
    for (let i = this.emittedWords; i < stableCount; i++) {
      this.closeOpenWord(segments);
      this.stats.add("stt", "words");
      this.send({ type: "Word", text: words[i], start_time: this.secondsAt(segments[i].startFrame) });
      this.openWord = i;
      this.emittedWords = i + 1;
    }
    if (final) this.closeOpenWord(segments);
  }

  /** Utterance frame index to seconds on the stream's timeline. @param {number} frame */
  secondsAt(frame) {
    return this.utteranceStart + frame / FRAME_RATE;
  }

  /**
   * Sends EndWord for the last word sent, with its end in the newest hypothesis
   * (never past the start of the word after it).
   * @param {import("./pocketsphinx.mjs").Segment[]} segments
   */
  closeOpenWord(segments) {
    if (this.openWord === null) return;
    const seg = segments[this.openWord];
    const next = segments[this.openWord + 1];
    const stopFrame = seg ? Math.min(seg.endFrame + 1, next ? next.startFrame : Infinity) : segments.at(-1)?.endFrame ?? 0;
    this.send({ type: "EndWord", stop_time: this.secondsAt(stopFrame) });
    this.openWord = null;
  }

  /** Stops decoding; resolves with the decoder once no call into it is in flight. */
  async dispose() {
    this.closed = true;
    this.faults.dispose();
    await this.pumping.catch(() => {});
    return this.decoder;
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
