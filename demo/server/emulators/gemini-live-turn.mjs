// One model turn of the Gemini Live emulator: the scripted model (core/scripted-model.mjs)
// reads the conversation as it stands, then either speaks (flite at 24 kHz, paced as the
// other TTS emulators) or asks for a function call. Server messages of a spoken turn, as the
// Live API reference and the capabilities guide describe them:
//   per phrase: serverContent.outputTranscription { text } (when the setup asked for it), then
//   serverContent.modelTurn.parts[].inlineData { mimeType: "audio/pcm;rate=24000", data } in
//   100 ms pieces; then serverContent.generationComplete, serverContent.turnComplete with
//   usageMetadata.
// An interruption (activityStart, speech with automatic activity detection, or clientContent)
// drops every message not yet sent and sends serverContent.interrupted, then turnComplete,
// with no generationComplete ("interrupted > turn_complete", the genai SDKs' LiveServerContent
// reference). What was sent of the turn stays in the conversation: "only the information
// already sent to the client is retained in the session history" (capabilities guide). Here
// that is the words whose audio reached the client (midpoint rule, as the OpenAI emulator's
// truncate), since the transcript of a phrase goes out ahead of its audio.
// A function call: toolCall { functionCalls: [{ id, name, args }] }; the turn then waits for
// the client's toolResponse (the next GeminiTurn continues it).
//   https://ai.google.dev/api/live  https://ai.google.dev/gemini-api/docs/live-guide
//   https://ai.google.dev/gemini-api/docs/live-tools
import { randomUUID } from "node:crypto";
import { planReply } from "../core/scripted-model.mjs";
import { heardWords } from "../core/realtime-conversation.mjs";
import { SpokenContext, base64Pcm, fliteVoice } from "./flite-speech.mjs";
import { sleep } from "../knobs.mjs";

export const OUTPUT_RATE = 24000;
export const OUTPUT_MIME = `audio/pcm;rate=${OUTPUT_RATE}`;
const PIECE_S = 0.1;

/**
 * @typedef {object} TurnHost what a turn needs from its socket
 * @property {(message: Record<string, unknown>) => void} sendNow
 * @property {(message: Record<string, unknown>, seconds: number, wanted: () => boolean, onSent?: () => void) => Promise<void>} sendPaced
 * @property {{ role: string, text: string }[]} context  the conversation; the turn appends its own line
 * @property {{ toolNames: string[], voice: string | null, outputTranscription: boolean }} setup
 * @property {(entry: Record<string, any>) => void} log  the turn's log entry (kept and updated in place)
 * @property {number} thinkMs  the model's time before the turn's first message (knob think_ms)
 * @property {AbortSignal} signal  the socket's
 */

export class GeminiTurn {
  /** @param {TurnHost} host */
  constructor(host) {
    this.host = host;
    /** False once the turn ended (completed, interrupted or handed to a tool call). */
    this.open = true;
    /** @type {string[]} ids of a function call waiting for its toolResponse */
    this.pendingCalls = [];
    /** @type {Record<string, any>} */
    this.entry = {};
    this.words = /** @type {{ text: string, start: number, stop: number }[]} */ ([]);
    this.sentMs = 0;
    this.sentTranscript = "";
    /** Resolves once the turn stopped sending (completed, interrupted, or handed to a tool call). */
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
  }

  async start() {
    const input = this.host.context.map((c) => ({ ...c }));
    const plan = planReply(input, this.host.setup.toolNames);
    this.entry = { input, plan, status: "generating", audioSentMs: 0, sentTranscript: "", contextText: null };
    this.host.log(this.entry);
    // Thinking: an interruption now ends the turn before anything of it was sent.
    if (this.host.thinkMs > 0) await sleep(this.host.thinkMs, this.host.signal);
    if (!this.open) return;
    if (plan.kind === "function_call") return this.call(plan.name);
    return this.speak(plan.text);
  }

  /** @param {string} name */
  call(name) {
    const id = `function-call-${randomUUID().replace(/-/g, "").slice(0, 19)}`;
    this.pendingCalls = [id];
    this.open = false;
    this.entry.status = "tool_call";
    this.host.context.push({ role: "function_call", text: `${name}()` });
    this.host.sendNow({ toolCall: { functionCalls: [{ id, name, args: {} }] } });
    this.resolveFinished?.(undefined);
  }

  /** @param {string} text */
  async speak(text) {
    const speech = new SpokenContext({ voice: fliteVoice(this.host.setup.voice), rate: OUTPUT_RATE });
    speech.push(text);
    const phrases = speech.takePhrases(true);
    const tail = speech.finish();
    this.words = phrases.flatMap((p) => p.words);
    // The turn's words with their times in its audio (s), for the realtime bench's history check.
    this.entry.words = this.words.map((w) => ({ text: w.text, start: w.start, stop: w.stop }));
    const wanted = () => this.open;
    for (const [k, phrase] of phrases.entries()) {
      const pcm = k === phrases.length - 1 ? concat(phrase.pcm, tail) : phrase.pcm;
      const said = (k > 0 ? " " : "") + phrase.words.map((w) => w.text).join(" ");
      if (this.host.setup.outputTranscription) {
        void this.host.sendPaced({ serverContent: { outputTranscription: { text: said } } }, 0, wanted, () => (this.sentTranscript += said));
      }
      const step = Math.round(PIECE_S * OUTPUT_RATE);
      for (let at = 0; at < pcm.length; at += step) {
        const piece = pcm.subarray(at, at + step);
        const message = { serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: OUTPUT_MIME, data: base64Pcm(piece, "pcm_s16le") } }] } } };
        void this.host.sendPaced(message, piece.length / OUTPUT_RATE, wanted, () => {
          this.sentMs += (piece.length / OUTPUT_RATE) * 1000;
          this.entry.audioSentMs = this.sentMs;
        });
      }
    }
    await this.host.sendPaced({ serverContent: { generationComplete: true } }, 0, wanted);
    if (!this.open) return;
    this.end("completed", text);
    const words = text.split(/\s+/).filter(Boolean).length;
    const prompt = this.host.context.reduce((n, c) => n + c.text.split(/\s+/).filter(Boolean).length, 0);
    this.host.sendNow({ serverContent: { turnComplete: true }, usageMetadata: { promptTokenCount: prompt, responseTokenCount: words, totalTokenCount: prompt + words } });
    this.resolveFinished?.(undefined);
  }

  /** Stops the turn at once: nothing queued goes out, and the conversation keeps what was sent. */
  interrupt() {
    if (!this.open) return false;
    this.end("interrupted", heardWords({ words: this.words, sentMs: 0, totalMs: 0, truncatedMs: null }, this.sentMs).join(" "));
    this.host.sendNow({ serverContent: { interrupted: true } });
    this.host.sendNow({ serverContent: { turnComplete: true } });
    this.resolveFinished?.(undefined);
    return true;
  }

  /** @param {"completed" | "interrupted"} status @param {string} kept what the conversation keeps of the turn */
  end(status, kept) {
    this.open = false;
    this.entry.status = status;
    this.entry.sentTranscript = this.sentTranscript;
    this.entry.contextText = kept;
    if (kept) this.host.context.push({ role: "model", text: kept });
  }
}

/** @param {Float32Array} a @param {Float32Array} b */
function concat(a, b) {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
