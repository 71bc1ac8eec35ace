// Node clients for the reference backend's protocols, used by the backend tests.
// `ws` is the client here (not the WebSocket global) because it exposes the HTTP
// status of a refused upgrade and the raw close code of a dropped socket.
import WebSocket from "ws";
import { decode, encode } from "@msgpack/msgpack";

export type Message = Record<string, any> & { type?: string };

/** A WebSocket client that records every message, decoded, with its arrival time. */
export class RecordingSocket {
  readonly ws: WebSocket;
  readonly messages: { at: number; message: Message | null; bytes: number; raw: Buffer | string }[] = [];
  readonly opened: Promise<void>;
  /** Resolves with the close code (1006 when the socket was dropped without a close frame). */
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
  readonly openedAt = Date.now();
  private waiters: (() => void)[] = [];

  constructor(url: string, readonly format: "msgpack" | "json" = "msgpack", protocols?: string[], headers?: Record<string, string>) {
    this.ws = new WebSocket(url, protocols, { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      this.ws.once("error", reject);
    });
    this.opened.catch(() => {});
    this.closed = new Promise((resolve) => {
      this.ws.once("close", (code, reason) => {
        resolve({ code, reason: reason.toString(), at: Date.now() });
        this.notify();
      });
    });
    this.ws.on("message", (data: Buffer, isBinary) => {
      let message: Message | null = null;
      try {
        message = format === "msgpack" ? (decode(data) as Message) : JSON.parse(data.toString());
        if (message === null || typeof message !== "object") message = null;
      } catch {
        message = null; // not decodable: kept as raw bytes for the malformed tests
      }
      this.messages.push({ at: Date.now(), message, bytes: data.length, raw: isBinary ? data : data.toString() });
      this.notify();
    });
  }

  private notify() {
    for (const w of this.waiters.splice(0)) w();
  }

  send(message: Message) {
    this.ws.send(this.format === "msgpack" ? encode(message) : JSON.stringify(message));
  }

  /** All decoded messages of a type. */
  of(type: string): Message[] {
    return this.messages.filter((m) => m.message?.type === type).map((m) => m.message as Message);
  }

  /** Waits until `predicate` holds over the messages so far. */
  async until(predicate: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.summary()}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
  }

  /** Waits for the first message of a type and returns it with its arrival time. */
  async next(type: string, timeoutMs = 10_000) {
    await this.until(() => this.messages.some((m) => m.message?.type === type), timeoutMs, type);
    return this.messages.find((m) => m.message?.type === type)!;
  }

  summary() {
    return JSON.stringify(this.messages.slice(0, 12).map((m) => m.message?.type ?? `raw(${m.bytes})`));
  }

  close() {
    this.ws.close();
  }
}

/** Tries an upgrade and returns the HTTP status of the refusal, or 101 when it opened. */
export function upgradeStatus(url: string, headers?: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => {
      ws.terminate();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once("error", (err) => reject(err));
  });
}

/** Sends 24 kHz float32 audio in 80 ms Audio messages. */
export function sendAudio(socket: RecordingSocket, pcm: Float32Array, chunk = 1920) {
  for (let i = 0; i < pcm.length; i += chunk) {
    socket.send({ type: "Audio", pcm: Array.from(pcm.subarray(i, i + chunk)) });
  }
}

/** Synthesises `text` through the TTS service (as fast as possible) and returns the 24 kHz audio and word times. */
export async function speak(wsUrl: string, text: string, voice = "slt") {
  const tts = new RecordingSocket(`${wsUrl}/api/tts_streaming?format=PcmMessagePack&voice=${voice}&pace=0`);
  await tts.opened;
  for (const word of text.split(" ")) tts.send({ type: "Text", text: word });
  tts.send({ type: "Eos" });
  const closed = await tts.closed;
  const frames = tts.of("Audio").map((m) => Float32Array.from(m.pcm as number[]));
  const pcm = new Float32Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    pcm.set(f, at);
    at += f.length;
  }
  return { pcm, frames, words: tts.of("Text"), closed, socket: tts };
}

/** Feeds audio, then 1 s of silence (to end the utterance), then a Marker; returns the words. */
export async function transcribe(wsUrl: string, pcm: Float32Array, query = "") {
  const stt = new RecordingSocket(`${wsUrl}/api/asr-streaming${query}`);
  await stt.next("Ready", 15_000);
  sendAudio(stt, pcm);
  sendAudio(stt, new Float32Array(24000));
  stt.send({ type: "Marker", id: 42 });
  await stt.next("Marker", 30_000);
  stt.close();
  return { words: stt.of("Word"), endWords: stt.of("EndWord"), steps: stt.of("Step"), socket: stt };
}

/** Loads a 16 kHz fixture and upsamples it to 24 kHz for the STT. */
export async function fixture24k(name: string) {
  const { readFileSync } = await import("node:fs");
  const { readWav } = await import("../../demo/server/wav.mjs");
  const { upsampler16to24, int16ToFloat } = await import("../../demo/server/resample.mjs");
  const dir = new URL("../fixtures/speech/", import.meta.url);
  const wav = readWav(readFileSync(new URL(`${name}.wav`, dir)));
  const meta = JSON.parse(readFileSync(new URL(`${name}.json`, dir), "utf8"));
  return { pcm: upsampler16to24().process(int16ToFloat(wav.samples)), meta, wav };
}
