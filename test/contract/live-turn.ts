/**
 * One spoken turn per service, through the SDK's real provider, for `npm run check:live` (which runs
 * it against the emulator, then against the live service) and for live-turn.test.ts (the emulators).
 *
 * - speech to speech (openai, gemini): a VoiceSession on the provider with bargein/testing's fakes
 *   (test/backend/speech-to-speech-rig.ts): the user asks for a story, the reply starts playing, the
 *   user barges in with "please stop", and the service answers that.
 * - STT (deepgram, assemblyai): a speech fixture streamed through the provider; its final words.
 * - TTS (elevenlabs, cartesia): a reply synthesised, cut after its first audio (the stream's
 *   close(): the provider's cancel), then a second reply in full.
 *
 * Each turn returns what it observed, in order (`observed`), and its rules with whether each held
 * (`checks`, as the contract sequences' checks). The same code runs on both sides; only the target
 * (URLs and credentials) differs. The providers use the global WebSocket (Node 20: run with
 * --experimental-websocket, as vitest.config.ts and the check:live script do).
 */
import { readFileSync } from "node:fs";
import { readWav } from "../../demo/server/wav.mjs";
import { assemblyaiStt, type AssemblyaiSttOptions } from "../../src/providers/assemblyai-stt.js";
import { cartesiaTts, type CartesiaTtsOptions } from "../../src/providers/cartesia-tts.js";
import { deepgramStt, type DeepgramSttOptions } from "../../src/providers/deepgram-stt.js";
import { elevenlabsTts, type ElevenlabsTtsOptions } from "../../src/providers/elevenlabs-tts.js";
import type { SttProvider, TtsEvent, TtsProvider } from "../../src/providers/types.js";
import { speechToSpeechRig, type SpeechToSpeech } from "../backend/speech-to-speech-rig.js";
import { sleep } from "../lib/wait.mjs";

export interface Check {
  rule: string;
  ok: boolean;
  got: string;
}
export interface TurnResult {
  /** What happened, in order, as one line each ("first audio", "sent response.cancel", …). */
  observed: string[];
  checks: Check[];
}

/** The question, the barge-in, and the fixture the STT turn streams (test/fixtures/speech). */
export const QUESTION = "tell me a long story";
export const BARGE_IN = "please stop";
export const STT_FIXTURE = "weather-question";
export const STT_WORDS = "what is the weather like today";
export const TTS_FIRST = "Here is a long reply that the user will cut short before it is over, so most of it is never heard.";
export const TTS_SECOND = "Sure, I will stop.";

const check = (rule: string, ok: boolean, got: unknown): Check => ({ rule, ok, got: typeof got === "string" ? got : JSON.stringify(got) });

// ─── speech to speech ───────────────────────────────────────────────────────

/**
 * Where the session connects: the reference backend's emulator (its URLs and the key it was started
 * with; the rig's defaults), or another endpoint (the live service) with its token function.
 */
export type SpeechToSpeechTarget =
  | { backend: { url: string; wsUrl: string }; key: string }
  | { endpoint: { url: string; model: string }; token: () => Promise<string> };

/** What the session must send to cut the reply: OpenAI cancels and truncates; Gemini opens the user's activity. */
const CUT: Record<SpeechToSpeech, string[]> = {
  openai: ["response.cancel", "conversation.item.truncate"],
  gemini: ["realtimeInput.activityStart"],
};

export async function speechToSpeechTurn(kind: SpeechToSpeech, target: SpeechToSpeechTarget, timeoutMs = 30_000): Promise<TurnResult> {
  // A session's setup can take seconds on a busy machine (the emulator loads a decoder first).
  const provider = { connectTimeoutMs: 15_000 };
  const r =
    "backend" in target
      ? speechToSpeechRig(target.backend, kind, target.key, { provider })
      : speechToSpeechRig({ url: "", wsUrl: "" }, kind, "", { endpoint: target.endpoint, token: target.token, provider });
  const observed: string[] = [];
  const checks: Check[] = [];
  let interruption: { heardText: string; reason: string } | null = null;
  let speakingAfterCut = false;
  // The cut's messages, logged among the events as they go out.
  const cut: string[] = [];
  let watched = 0;
  const watch = setInterval(() => {
    const sent = r.sent();
    for (const t of sent.slice(watched)) {
      if (interruption && CUT[kind].includes(t)) {
        cut.push(t);
        observed.push(`sent ${t}`);
      }
    }
    watched = sent.length;
  }, 5);
  r.session.on("interruption", (e) => {
    interruption = { heardText: e.heardText, reason: e.reason };
    observed.push(`interruption (${e.reason}), heard: "${e.heardText}"`);
  });
  r.session.on("state", (e) => {
    if (e.state === "bot_speaking" && interruption && !speakingAfterCut) {
      speakingAfterCut = true;
      observed.push("the second reply's first audio");
    }
  });
  try {
    await r.session.start();
    observed.push("connected");
    await r.say(QUESTION);
    observed.push(`said "${QUESTION}"`);
    await r.until("the reply's first audio", () => r.session.state === "bot_speaking" && r.player.renderedSeconds() > 0.3, timeoutMs);
    observed.push("the reply's first audio (0.3 s played)");
    observed.push(`says "${BARGE_IN}" over the reply`);
    await r.say(BARGE_IN);
    await r.until("the interruption", () => interruption !== null, timeoutMs);
    // The answer: its audio plays and its words come (the turn ends there, mid-reply).
    await r.until("the answer to the barge-in", () => speakingAfterCut && r.session.history[3]?.role === "assistant" && r.session.history[3].text.trim().length > 0, timeoutMs);
    const history = r.session.history.map((m) => `${m.role}${"interrupted" in m && m.interrupted ? " (interrupted)" : ""}: ${m.text}`);
    observed.push(...history.map((h) => `history ${h}`));
    const first = r.session.history[1];
    const answer = r.session.history[3];
    const heard = (interruption as { heardText: string } | null)?.heardText ?? "";
    checks.push(
      check("the reply started: its audio played", true, "0.3 s played"),
      // The heard text is reported, not required: 0.3 s into a live reply its words may not have come yet.
      check("the barge-in interrupted it: an interruption event (its heard text below)", interruption !== null, heard ? `heard: "${heard}"` : "heard: (nothing yet)"),
      check(`the cut went out: ${CUT[kind].join(" and ")}`, CUT[kind].every((t) => cut.includes(t)), cut.length ? cut.join(", ") : `sent: ${r.sent().slice(-6).join(", ")}`),
      check("the first reply is kept as interrupted, cut to the heard words", first?.role === "assistant" && "interrupted" in first && first.interrupted === true, first),
      check("the second question was answered: its reply's audio and words came", speakingAfterCut && !!answer?.text, answer?.text ?? "(none)"),
      check("no errors", r.seen.errors.length === 0, r.seen.errors.map((e) => `${e.name}: ${e.message}`).join("; ") || "none"),
    );
  } catch (err) {
    checks.push(check("the turn runs to its end", false, (err as Error).message));
    if (r.seen.errors.length) checks.push(check("no errors", false, r.seen.errors.map((e) => `${e.name}: ${e.message}`).join("; ")));
  } finally {
    clearInterval(watch);
    await r.close();
  }
  return { observed, checks };
}

// ─── STT ────────────────────────────────────────────────────────────────────

export type SttKind = "deepgram" | "assemblyai";
export type SttTarget = DeepgramSttOptions | AssemblyaiSttOptions;

/** `name`'s 16 kHz samples (test/fixtures/speech/<name>.wav). */
export function speechFixture(name: string): Int16Array {
  // From the repository's root two folders up: here (test/contract/) and in check:live's bundle (.cache/check-live/).
  return readWav(readFileSync(new URL(`../../test/fixtures/speech/${name}.wav`, import.meta.url))).samples;
}

/** Streams the fixture (and 0.6 s of silence) at real-time pace in 20 ms chunks, then flushes; reports the words. */
export async function sttTurn(kind: SttKind, target: SttTarget, timeoutMs = 20_000): Promise<TurnResult> {
  const provider: SttProvider = kind === "deepgram" ? deepgramStt(target as DeepgramSttOptions) : assemblyaiStt(target as AssemblyaiSttOptions);
  const observed: string[] = [];
  const checks: Check[] = [];
  const words: string[] = [];
  let endOfTurn = false;
  try {
    const stream = await provider.connect();
    observed.push(`connected (${provider.name})`);
    const reading = (async () => {
      for await (const e of stream.events()) {
        if (e.kind === "word") words.push(e.text);
        if (e.kind === "end-of-turn" && !e.eager) {
          endOfTurn = true;
          observed.push("end of turn");
        }
      }
    })();
    reading.catch(() => {});
    const speech = speechFixture(STT_FIXTURE);
    const all = new Int16Array(speech.length + 9600);
    all.set(speech);
    const started = performance.now();
    for (let i = 0, n = 0; i < all.length; i += 320, n++) {
      stream.sendAudio(all.subarray(i, i + 320));
      const due = started + (n + 1) * 20;
      if (due > performance.now()) await sleep(due - performance.now());
    }
    observed.push(`streamed ${STT_FIXTURE}.wav and 0.6 s of silence`);
    await stream.flush(AbortSignal.timeout(timeoutMs));
    observed.push("flushed");
    await stream.close();
    await Promise.race([reading, sleep(timeoutMs)]);
    const said = words.join(" ");
    const normal = said.toLowerCase().replace(/[^a-z' ]/g, "").replace(/\s+/g, " ").trim();
    observed.push(`final words: "${said}"`);
    checks.push(check(`the final words are the fixture's: "${STT_WORDS}"`, normal === STT_WORDS, said || "(none)"));
    // Nova (deepgramStt's default model) has no end of turn; AssemblyAI's turns end with end_of_turn.
    if (kind === "assemblyai") checks.push(check("the service ended the turn (end_of_turn)", endOfTurn, endOfTurn ? "yes" : "no end-of-turn"));
  } catch (err) {
    checks.push(check("the turn runs to its end", false, (err as Error).message));
  }
  return { observed, checks };
}

// ─── TTS ────────────────────────────────────────────────────────────────────

export type TtsKind = "elevenlabs" | "cartesia";
export type TtsTarget = ElevenlabsTtsOptions | CartesiaTtsOptions;

/** Whether a TTS socket's message carries audio (ElevenLabs: `audio`; Cartesia: a `chunk`; or binary). */
function carriesAudio(data: unknown): boolean {
  if (typeof data !== "string") return true;
  try {
    const m = JSON.parse(data) as { audio?: unknown; type?: unknown };
    return (typeof m.audio === "string" && m.audio.length > 0) || m.type === "chunk";
  } catch {
    return false;
  }
}

/** Each TTS socket's path, by which the recording below tells the services' sockets apart. */
const TTS_PATH: Record<TtsKind, RegExp> = { elevenlabs: /\/multi-stream-input$/, cartesia: /\/tts\/websocket$/ };
/** Per TTS socket opened, in order: its service, and when each of its audio messages arrived. */
const ttsSockets: Array<{ kind: TtsKind; arrivals: number[] }> = [];
let recording = false;

/**
 * Records when each TTS socket receives audio (the service's side of a cut, which the provider's
 * events cannot show: they also yield what came before the cut and was still queued). Installed once
 * over the global WebSocket, as the speech-to-speech rig's routing is; other sockets pass untouched.
 */
function recordAudioArrivals(): void {
  if (recording) return;
  recording = true;
  const Native = globalThis.WebSocket;
  class Recording extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      const path = new URL(String(url)).pathname;
      const kind = (Object.keys(TTS_PATH) as TtsKind[]).find((k) => TTS_PATH[k].test(path));
      if (!kind) return;
      const arrivals: number[] = [];
      ttsSockets.push({ kind, arrivals });
      this.addEventListener("message", (e) => {
        if (carriesAudio((e as MessageEvent).data)) arrivals.push(performance.now());
      });
    }
  }
  globalThis.WebSocket = Recording;
}

/** A reply cut after its first audio (close()), then a second reply to its end. */
export async function ttsTurn(kind: TtsKind, target: TtsTarget, timeoutMs = 20_000): Promise<TurnResult> {
  recordAudioArrivals();
  const provider: TtsProvider = kind === "elevenlabs" ? elevenlabsTts(target as ElevenlabsTtsOptions) : cartesiaTts(target as CartesiaTtsOptions);
  const observed: string[] = [];
  const checks: Check[] = [];
  try {
    // The first reply: read until its first audio, cut it, and count what still comes.
    const opened = ttsSockets.length;
    const first = await provider.connect();
    observed.push(`connected (${provider.name})`);
    first.sendText(TTS_FIRST);
    first.end();
    const socket = ttsSockets.slice(opened).find((t) => t.kind === kind)?.arrivals ?? [];
    let firstAudio = 0;
    let gotFirst!: () => void;
    const firstHeard = new Promise<void>((r) => (gotFirst = r));
    const reading = (async () => {
      for await (const e of first.events()) {
        if (e.kind !== "audio") continue;
        firstAudio += e.pcm.length;
        gotFirst();
      }
    })();
    reading.catch(() => {});
    await Promise.race([firstHeard, sleep(timeoutMs)]);
    observed.push(firstAudio ? "the first reply's first audio" : "no audio from the first reply");
    const cutAt = performance.now();
    await first.close();
    observed.push("cut (close)");
    const ended = await Promise.race([reading.then(() => true, () => true), sleep(2000).then(() => false)]);
    // A moment for anything the service still sends on that socket (closed by now: nothing can come).
    await sleep(300);
    const afterCut = socket.filter((at) => at > cutAt).length;
    observed.push(afterCut ? `${afterCut} audio message(s) after the cut` : "nothing after the cut");

    // The second reply, in full.
    const second = await provider.connect();
    second.sendText(TTS_SECOND);
    second.end();
    const events: TtsEvent[] = [];
    const done = (async () => {
      for await (const e of second.events()) events.push(e);
      return true;
    })();
    const finished = await Promise.race([done, sleep(timeoutMs).then(() => false)]);
    const audio = events.filter((e): e is Extract<TtsEvent, { kind: "audio" }> => e.kind === "audio");
    const seconds = audio.reduce((s, a) => s + a.pcm.length / a.sampleRate, 0);
    const words = events.flatMap((e) => (e.kind === "text" ? [e.text] : [])).join(" ");
    observed.push(`the second reply: ${seconds.toFixed(1)} s of audio${words ? `, words "${words}"` : ""}`);
    await second.close();
    checks.push(
      check("the first reply's audio came", firstAudio > 0, `${firstAudio} samples`),
      check("the cut reply sent nothing more, and its stream ended", afterCut === 0 && ended, `${afterCut} audio message(s) after the cut${ended ? "" : ", the stream did not end"}`),
      check("the second reply's audio came, to its end", finished && seconds > 0.3, `${seconds.toFixed(2)} s${finished ? "" : ", not finished"}`),
    );
  } catch (err) {
    checks.push(check("the turn runs to its end", false, (err as Error).message));
  }
  return { observed, checks };
}

// ─── the targets: the emulator's, the live service's ────────────────────────

export type Service = SpeechToSpeech | SttKind | TtsKind;
export type Target = SpeechToSpeechTarget | SttTarget | TtsTarget;
export const SERVICES: readonly Service[] = ["openai", "gemini", "deepgram", "assemblyai", "elevenlabs", "cartesia"];

/** Each service's HTTP base for its token endpoint (the live one; the emulator's is the backend's URL). */
const LIVE_HTTP: Record<SttKind | TtsKind, string> = {
  deepgram: "https://api.deepgram.com",
  assemblyai: "https://streaming.assemblyai.com",
  elevenlabs: "https://api.elevenlabs.io",
  cartesia: "https://api.cartesia.ai",
};
const CARTESIA_VERSION = "2025-04-16";

async function json(res: Response, what: string): Promise<any> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

/**
 * The token function a page's server would give the provider: a short-lived token minted with the
 * key at `http` (the same documented endpoint on the emulator and the live service), or the key
 * itself where the provider takes one (Deepgram's `tokenKind: "token"`).
 */
function tokenFunction(service: SttKind | TtsKind, http: string, key: string): () => Promise<string> {
  switch (service) {
    case "deepgram":
      return async () => key;
    case "assemblyai":
      return async () => (await json(await fetch(`${http}/v3/token?expires_in_seconds=60`, { headers: { Authorization: key } }), "GET /v3/token")).token;
    case "elevenlabs":
      return async () => (await json(await fetch(`${http}/v1/single-use-token/tts_websocket`, { method: "POST", headers: { "xi-api-key": key } }), "POST /v1/single-use-token")).token;
    case "cartesia":
      return async () =>
        (
          await json(
            await fetch(`${http}/access-token`, {
              method: "POST",
              headers: { "X-API-Key": key, "Cartesia-Version": CARTESIA_VERSION, "Content-Type": "application/json" },
              body: JSON.stringify({ grants: { tts: true }, expires_in: 60 }),
            }),
            "POST /access-token",
          )
        ).token;
  }
}

/** The voices of the live TTS checks; override with ELEVENLABS_VOICE_ID and CARTESIA_VOICE_ID. */
export const LIVE_VOICE = { elevenlabs: "21m00Tcm4TlvDq8ikWAM", cartesia: "a0e99841-438c-4a64-b679-ae501e7d6091" };

/** The target of `service` on the reference backend's emulator (started with `key`). */
export function emulatorTarget(service: Service, backend: { url: string; wsUrl: string }, key: string): Target {
  switch (service) {
    case "openai":
    case "gemini":
      return { backend, key };
    case "deepgram":
      return { urls: backend.wsUrl, token: tokenFunction(service, backend.url, key), tokenKind: "token", sampleRate: 16000 };
    case "assemblyai":
      return { urls: backend.wsUrl, token: tokenFunction(service, backend.url, key), startupTimeoutMs: 15_000 };
    case "elevenlabs":
      return { voiceId: "voice-slt", url: backend.wsUrl, token: tokenFunction(service, backend.url, key) };
    case "cartesia":
      return { voiceId: "voice-rms", url: backend.wsUrl, token: tokenFunction(service, backend.url, key), version: CARTESIA_VERSION };
  }
}

/** The target of `service` on the live service, with its API key (`env`: the voice and model overrides). */
export function liveTarget(service: Service, key: string, env: Record<string, string | undefined> = {}): Target {
  switch (service) {
    case "openai":
      return { endpoint: { url: "wss://api.openai.com/v1/realtime", model: env.OPENAI_REALTIME_MODEL ?? "gpt-realtime" }, token: async () => key };
    case "gemini":
      return {
        endpoint: { url: "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", model: env.GEMINI_LIVE_MODEL ?? "models/gemini-live-2.5-flash-preview" },
        token: async () => key,
      };
    case "deepgram":
      return { token: tokenFunction(service, LIVE_HTTP.deepgram, key), tokenKind: "token", sampleRate: 16000 };
    case "assemblyai":
      return { token: tokenFunction(service, LIVE_HTTP.assemblyai, key) };
    case "elevenlabs":
      return { voiceId: env.ELEVENLABS_VOICE_ID ?? LIVE_VOICE.elevenlabs, token: tokenFunction(service, LIVE_HTTP.elevenlabs, key) };
    case "cartesia":
      return { voiceId: env.CARTESIA_VOICE_ID ?? LIVE_VOICE.cartesia, token: tokenFunction(service, LIVE_HTTP.cartesia, key), version: CARTESIA_VERSION };
  }
}

/** What the spoken turn of `service` is, in a few words (the check's heading). */
export const TURN_TITLE: Record<Service, string> = {
  openai: `a spoken turn with a barge-in: "${QUESTION}", then "${BARGE_IN}" over the reply (openaiRealtime in a VoiceSession)`,
  gemini: `a spoken turn with a barge-in: "${QUESTION}", then "${BARGE_IN}" over the reply (geminiLive in a VoiceSession)`,
  deepgram: `a spoken turn's STT half: ${STT_FIXTURE}.wav through deepgramStt`,
  assemblyai: `a spoken turn's STT half: ${STT_FIXTURE}.wav through assemblyaiStt`,
  elevenlabs: "a spoken turn's TTS half: a reply cut after its first audio, then a second one (elevenlabsTts)",
  cartesia: "a spoken turn's TTS half: a reply cut after its first audio, then a second one (cartesiaTts)",
};

/** The spoken turn of `service` against `target`. */
export function spokenTurn(service: Service, target: Target): Promise<TurnResult> {
  switch (service) {
    case "openai":
    case "gemini":
      return speechToSpeechTurn(service, target as SpeechToSpeechTarget);
    case "deepgram":
    case "assemblyai":
      return sttTurn(service, target as SttTarget);
    case "elevenlabs":
    case "cartesia":
      return ttsTurn(service, target as TtsTarget);
  }
}
