// Kyutai TTS emulator: Kyutai's TTS streaming protocol (/api/tts_streaming?format=PcmMessagePack&voice=…).
//
// In:  {type:"Text", text} (words or phrases; joined with a space when neither
//      side has one), then {type:"Eos"}.
// Out: Ready; Audio{pcm} (24 kHz float32, 1920-sample frames); Text{text,start_s,stop_s}
//      (each word's span in the output audio timeline, sent just before the frame
//      where the word starts); a normal close (1000) once the audio after Eos is sent.
//
// Text is synthesised incrementally, phrase by phrase (core/phrase-cutter.mjs: at
// punctuation or every `chunkWords` words), as it arrives, by the shared
// PhraseSynthesiser (flite). Sending is paced (core/send-pacing.mjs): the first
// `burstS` seconds go at once, then `pace` × real time (0 = as fast as synthesised).
import { decode } from "@msgpack/msgpack";
import { FLITE_VOICES } from "../flite.mjs";
import { SocketFaults } from "../socket-faults.mjs";
import { sleep } from "../knobs.mjs";
import { admitStream } from "../stream-gate.mjs";
import { PhraseSynthesiser } from "../synthesiser.mjs";
import { appendText, nextPhrase } from "../core/phrase-cutter.mjs";
import { frameDueAt } from "../core/send-pacing.mjs";
import { encodeMessage, malformedBytes, rejectAtCapacity } from "./kyutai-wire.mjs";

const OUTPUT_RATE = 24000;
export const FRAME_SAMPLES = 1920;

/** Kyutai voices are paths like "expresso/ex03-ex01_happy_001_channel1_334s.wav"; any name containing rms/slt picks that flite voice. */
export function fliteVoiceFor(/** @type {string | null} */ requested) {
  const name = (requested ?? "").toLowerCase();
  return FLITE_VOICES.find((v) => name.includes(v)) ?? "slt";
}

/**
 * @param {import("../backend.mjs").EmulatorDeps} deps
 * @returns {import("../backend.mjs").Emulator}
 */
export function kyutaiTtsEmulator({ stats }) {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {URL} url
   */
  async function handleTts(ws, knobs, url) {
    const gate = admitStream(stats, "tts", knobs, () => rejectAtCapacity(ws));
    if (!gate) return;
    const session = new TtsSession(ws, knobs, stats, fliteVoiceFor(url.searchParams.get("voice")));
    ws.on("close", () => {
      gate.closed();
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
  }
  return {
    name: "tts",
    sockets: { "/api/tts_streaming": handleTts },
    health: () => ({ synthesiser: "flite", voices: FLITE_VOICES }),
  };
}

class TtsSession {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("../knobs.mjs").Knobs} knobs
   * @param {import("../stats.mjs").Stats} stats
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
    this.synthesiser = new PhraseSynthesiser(voice, OUTPUT_RATE);
    /** 24 kHz audio synthesised and not yet framed. */
    this.audio = new Float32Array(0);
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
      this.text = appendText(this.text, message.text);
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
    const next = nextPhrase(this.text, this.eos, this.chunkWords);
    if (next === null) return null;
    this.text = next.rest;
    return next.phrase;
  }

  /** @param {string} phrase */
  synthesisePhrase(phrase) {
    const { pcm, words } = this.synthesiser.synthesise(phrase);
    for (const w of words) this.words.push({ text: w.text, start_s: round3(w.start), stop_s: round3(w.stop) });
    const joined = new Float32Array(this.audio.length + pcm.length);
    joined.set(this.audio);
    joined.set(pcm, this.audio.length);
    this.audio = joined;
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
    const sentSeconds = (this.framesSent * FRAME_SAMPLES) / OUTPUT_RATE;
    await sleep(frameDueAt({ firstAt: this.firstFrameAt, sentSeconds, burstS: this.burstS, pace: this.pace }) - now, signal);
  }
}

/** @param {number} x */
const round3 = (x) => Math.round(x * 1000) / 1000;
