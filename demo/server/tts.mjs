// TTS service: Kyutai's TTS streaming protocol (/api/tts_streaming?format=PcmMessagePack&voice=…).
//
// In:  {type:"Text", text} (words or phrases; joined with a space when neither
//      side has one), then {type:"Eos"}.
// Out: Ready; Audio{pcm} (24 kHz float32, 1920-sample frames); Text{text,start_s,stop_s}
//      (each word's span in the output audio timeline, sent just before the frame
//      where the word starts); a normal close (1000) once the audio after Eos is sent.
//
// Text is synthesised incrementally, phrase by phrase (at punctuation or every
// `chunkWords` words), as it arrives. Sending is paced: the first `burstS`
// seconds go at once, then `pace` × real time (0 = as fast as synthesised).
import { decode } from "@msgpack/msgpack";
import { synthesize, FLITE_VOICES } from "./flite.mjs";
import { upsampler16to24, int16ToFloat } from "./resample.mjs";
import { SocketFaults } from "./socket-faults.mjs";
import { sleep } from "./knobs.mjs";
import { encodeMessage, malformedBytes, rejectAtCapacity } from "./msgpack-wire.mjs";

const OUTPUT_RATE = 24000;
export const FRAME_SAMPLES = 1920;

/** Kyutai voices are paths like "expresso/ex03-ex01_happy_001_channel1_334s.wav"; any name containing rms/slt picks that flite voice. */
export function fliteVoiceFor(/** @type {string | null} */ requested) {
  const name = (requested ?? "").toLowerCase();
  return FLITE_VOICES.find((v) => name.includes(v)) ?? "slt";
}

/** @param {{ stats: import("./stats.mjs").Stats }} deps */
export function createTtsService({ stats }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("./knobs.mjs").Knobs} knobs
   * @param {URL} url
   */
  return async function handleTts(ws, knobs, url) {
    if (knobs.capacity !== undefined && stats.counters.tts.open >= knobs.capacity) {
      stats.add("tts", "rejected");
      rejectAtCapacity(ws);
      return;
    }
    stats.add("tts", "open");
    stats.add("tts", "opened");
    const session = new TtsSession(ws, knobs, stats, fliteVoiceFor(url.searchParams.get("voice")));
    ws.on("close", () => {
      stats.add("tts", "open", -1);
      if (!session.finished && !session.faults.dropped) stats.add("tts", "closedByClient");
      session.abort.abort();
      session.faults.dispose();
    });
    ws.on("message", (data, isBinary) => {
      try {
        session.receive(/** @type {Buffer} */ (data), isBinary);
      } catch (err) {
        session.send({ type: "Error", message: `bad message: ${/** @type {Error} */ (err).message}` });
      }
    });
    await sleep(knobs.delayMs ?? 0, session.abort.signal);
    session.start();
  };
}

class TtsSession {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("./knobs.mjs").Knobs} knobs
   * @param {import("./stats.mjs").Stats} stats
   * @param {string} voice
   */
  constructor(ws, knobs, stats, voice) {
    this.ws = ws;
    this.knobs = knobs;
    this.stats = stats;
    this.voice = voice;
    this.faults = new SocketFaults(ws, knobs, { onDrop: () => stats.add("tts", "dropped") });
    this.abort = new AbortController();
    this.chunkWords = knobs.chunkWords ?? 6;
    this.pace = knobs.pace ?? 1.5;
    this.burstS = knobs.burstS ?? 0.5;
    this.started = false;
    this.finished = false;
    this.eos = false;
    /** Text received and not yet synthesised. */
    this.text = "";
    /** Phrases taken from `text` whose synthesis has not run yet. */
    this.phrasesPending = 0;
    this.upsampler = upsampler16to24();
    /** 24 kHz audio synthesised and not yet framed. */
    this.audio = new Float32Array(0);
    /** Samples already synthesised (the output timeline). */
    this.timeline = 0;
    /** @type {{ text: string, start_s: number, stop_s: number }[]} */
    this.words = [];
    this.framesSent = 0;
    /** @type {number | null} */
    this.firstFrameAt = null;
    /** Wakes the sender when audio or the end arrives. */
    this.wake = () => {};
    this.sending = null;
  }

  start() {
    if (this.abort.signal.aborted) return;
    this.started = true;
    this.send({ type: "Ready" });
    const { malformed, oversize } = this.knobs;
    if (malformed) this.faults.send(malformedBytes(malformed));
    // 0.001 is not an integer, so each sample takes 5 bytes (float32) like real audio.
    if (oversize) this.send({ type: "Audio", pcm: new Array(Math.ceil(oversize / 5)).fill(0.001) });
    this.sending = this.sendLoop().catch((err) => this.send({ type: "Error", message: String(err?.message ?? err) }));
    this.synthesiseReady();
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    this.faults.send(encodeMessage(message));
  }

  /** @param {Buffer} data @param {boolean} isBinary */
  receive(data, isBinary) {
    /** @type {any} */
    let message;
    try {
      message = isBinary ? decode(data) : JSON.parse(data.toString("utf8"));
    } catch {
      this.send({ type: "Error", message: "message is not msgpack" });
      return;
    }
    if (message?.type === "Text" && typeof message.text === "string") {
      if (this.eos) return;
      const needsSpace = this.text && !/\s$/.test(this.text) && !/^\s/.test(message.text);
      this.text += (needsSpace ? " " : "") + message.text;
    } else if (message?.type === "Eos") {
      this.eos = true;
    } else {
      this.send({ type: "Error", message: `unknown message type ${JSON.stringify(message?.type)}` });
      return;
    }
    if (this.started) this.synthesiseReady();
  }

  /**
   * Takes the phrases that are complete and synthesises them, in order. Called
   * after each message; flite runs synchronously (~50 ms a phrase), deferred with
   * setImmediate so queued socket messages are read in between.
   */
  synthesiseReady() {
    const phrase = this.nextPhrase();
    if (phrase === null) {
      this.wake();
      return;
    }
    this.phrasesPending++;
    setImmediate(() => {
      if (this.abort.signal.aborted) return;
      this.synthesisePhrase(phrase);
      this.phrasesPending--;
      this.synthesiseReady();
    });
  }

  /** @returns {string | null} the next phrase to speak, removed from `text`. */
  nextPhrase() {
    const words = this.text.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return null;
    // A word ending a sentence or clause closes a phrase, but only once the next word has started
    // (until then "Mr." or "3." may still be growing), or at Eos.
    const complete = this.eos || /\s$/.test(this.text) ? words.length : words.length - 1;
    let end = 0;
    for (let i = 0; i < complete; i++) {
      if (/[.!?;:]["')\]]*$/.test(words[i]) || (/,$/.test(words[i]) && i >= 2) || i + 1 >= this.chunkWords) {
        end = i + 1;
        break;
      }
    }
    if (end === 0 && this.eos) end = words.length;
    if (end === 0) return null;
    const phrase = words.slice(0, end).join(" ");
    this.text = words.slice(end).join(" ") + (/\s$/.test(this.text) && end < words.length ? " " : "");
    return phrase;
  }

  /** @param {string} phrase */
  synthesisePhrase(phrase) {
    const result = synthesize(phrase, this.voice);
    const pcm = this.upsampler.process(int16ToFloat(result.samples));
    // Word times move by where this phrase starts in the output, plus the filter's delay.
    const offset = (this.timeline + this.upsampler.delayOutputSamples) / OUTPUT_RATE;
    for (const w of result.words) {
      this.words.push({ text: w.text, start_s: round3(offset + w.start), stop_s: round3(offset + w.stop) });
    }
    const joined = new Float32Array(this.audio.length + pcm.length);
    joined.set(this.audio);
    joined.set(pcm, this.audio.length);
    this.audio = joined;
    this.timeline += pcm.length;
    this.wake();
  }

  get allSynthesised() {
    return this.eos && this.text.trim() === "" && this.phrasesPending === 0;
  }

  /** Sends whole frames as they become due; the last frame is padded with silence. */
  async sendLoop() {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const last = this.allSynthesised && this.audio.length < FRAME_SAMPLES;
      if (this.audio.length >= FRAME_SAMPLES || (last && this.audio.length > 0)) {
        await this.waitForFrameSlot(signal);
        if (signal.aborted) return;
        const frame = new Float32Array(FRAME_SAMPLES);
        frame.set(this.audio.subarray(0, FRAME_SAMPLES));
        this.audio = this.audio.slice(Math.min(FRAME_SAMPLES, this.audio.length));
        const frameStart = this.framesSent * FRAME_SAMPLES;
        const frameEnd = frameStart + FRAME_SAMPLES;
        while (this.words.length > 0 && this.words[0].start_s * OUTPUT_RATE < frameEnd) {
          this.send({ type: "Text", ...this.words.shift() });
        }
        this.send({ type: "Audio", pcm: Array.from(frame) });
        this.framesSent++;
        this.stats.add("tts", "framesSent");
        continue;
      }
      if (last) {
        for (const w of this.words.splice(0)) this.send({ type: "Text", ...w });
        this.finished = true;
        this.stats.add("tts", "completed");
        this.ws.close(1000, "done");
        return;
      }
      // One listener per wait, removed when woken: a long reply waits many times.
      await new Promise((resolve) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          resolve(undefined);
        };
        this.wake = done;
        signal.addEventListener("abort", done, { once: true });
      });
      this.wake = () => {};
    }
  }

  /** @param {AbortSignal} signal */
  async waitForFrameSlot(signal) {
    await this.faults.stall.waitIfStalled(signal);
    const now = Date.now();
    if (this.firstFrameAt === null) this.firstFrameAt = now;
    if (this.pace <= 0) return;
    const audioSeconds = (this.framesSent * FRAME_SAMPLES) / OUTPUT_RATE;
    const due = this.firstFrameAt + (Math.max(0, audioSeconds - this.burstS) / this.pace) * 1000;
    await sleep(due - now, signal);
  }
}

/** @param {number} x */
const round3 = (x) => Math.round(x * 1000) / 1000;
