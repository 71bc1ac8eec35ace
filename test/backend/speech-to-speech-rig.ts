/**
 * One VoiceSession on a speech-to-speech provider (`openaiRealtime` or
 * `geminiLive`) against the reference backend's emulator in this process,
 * with bargein/testing's public fakes, as the rigs of the realtime-session and
 * gemini-session tests: a FakePlayer on a FakeClock that runs with real
 * time, a FakeVad whose speech events the rig emits where its speech is, and a
 * FakeMicrophone fed with flite's speech (24 kHz for OpenAI, 16 kHz for
 * Gemini) and silence in 20 ms frames at real-time pace.
 *
 * Fault knobs per connection: `knobs` is the query (demo/server/knobs.mjs)
 * of every connection, or a function of the connection's index (0: the one
 * start() opens), so a fault can hit the first connection only and the
 * session's reconnect can prove the next turn works (as the cascaded fault
 * matrix's switchable URL, test/browser/pages/faults/faults.js). The
 * providers open their sockets with the global WebSocket, as in a page; the
 * rig installs a subclass of it that puts the knobs of the connection on the
 * URL (the provider's URL carries a `s2s_rig` id instead, removed there).
 *
 * The rig's socket also logs what the client sent (`sent()`: each message's type, audio left out),
 * and `endpoint` points the session at another URL (the live service: scripts/check-live.mjs).
 *
 * Used by speech-to-speech-faults.test.ts, the realtime-session* and gemini-session* tests, and the
 * spoken turn of the live check (test/contract/live-turn.ts).
 */
import type { ReferenceBackend } from "../../demo/server/backend.mjs";
import { synthesize } from "../../demo/server/flite.mjs";
import { floatToInt16, int16ToFloat, upsampler16to24 } from "../../demo/server/resample.mjs";
import { geminiLive, type GeminiLiveOptions } from "../../src/providers/gemini-live.js";
import { openaiRealtime, type OpenaiRealtimeOptions } from "../../src/providers/openai-realtime.js";
import type { SpeechToSpeechProvider } from "../../src/providers/types.js";
import type { SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { FakeClock, FakeMicrophone, FakePlayer, FakeVad } from "../../src/testing/index.js";
import { sleep, until as waitUntil } from "../lib/wait.mjs";

export type SpeechToSpeech = "openai" | "gemini";

/** Each emulator's counter group in GET /__stats. */
export const STATS_GROUP: Record<SpeechToSpeech, string> = { openai: "openai-realtime", gemini: "gemini-live" };

const PATH: Record<SpeechToSpeech, string> = {
  openai: "/v1/realtime",
  gemini: "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained",
};
const MODEL: Record<SpeechToSpeech, string> = { openai: "gpt-realtime", gemini: "gemini-live-2.5-flash-preview" };
export const RATE: Record<SpeechToSpeech, number> = { openai: 24000, gemini: 16000 };

/** The query of each connection: the same on every one, or by the connection's index (0: start()'s). */
export type Knobs = string | ((connection: number) => string);

// ─── the knobs, per connection, on the socket's URL ─────────────────────────

const RIG_PARAM = "s2s_rig";
const routes = new Map<string, { knobs: (connection: number) => string; sockets: number; sent: string[] }>();
let rigs = 0;
let routing = false;

function installKnobRouting(): void {
  if (routing) return;
  const Native = globalThis.WebSocket;
  if (!Native) throw new Error("speech-to-speech-rig: no global WebSocket (vitest.config.ts runs the workers with --experimental-websocket)");
  routing = true;
  class KnobbedWebSocket extends Native {
    readonly #sent: string[] | undefined;
    constructor(url: string | URL, protocols?: string | string[]) {
      const route = routes.get(new URL(String(url)).searchParams.get(RIG_PARAM) ?? "");
      super(withKnobs(url), protocols);
      this.#sent = route?.sent;
    }
    override send(data: Parameters<WebSocket["send"]>[0]): void {
      if (this.#sent && typeof data === "string") {
        const label = sentLabel(data);
        if (label) this.#sent.push(label);
      }
      super.send(data);
    }
  }
  globalThis.WebSocket = KnobbedWebSocket;
}

/**
 * A sent JSON message's name: its `type` (OpenAI), or its keys down to the first one that is not an
 * object of one key (Gemini: "realtimeInput.activityStart"). Audio (appends, realtimeInput.audio) is left out.
 */
function sentLabel(text: string): string | null {
  if (text.includes('"input_audio_buffer.append"') || /^\{"realtimeInput":\{"(audio|mediaChunks)"/.test(text)) return null;
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (m === null || typeof m !== "object") return null;
  const o = m as Record<string, unknown>;
  if (typeof o.type === "string") return o.type === "input_audio_buffer.append" ? null : o.type;
  const path: string[] = [];
  let at: unknown = o;
  while (at !== null && typeof at === "object" && !Array.isArray(at) && Object.keys(at).length === 1) {
    const k = Object.keys(at)[0]!;
    path.push(k);
    at = (at as Record<string, unknown>)[k];
  }
  if (path.length === 0) path.push(...Object.keys(o).slice(0, 1));
  const label = path.join(".");
  return /^realtimeInput\.(audio|mediaChunks)/.test(label) ? null : label;
}

function withKnobs(url: string | URL): string {
  const u = new URL(String(url));
  const route = routes.get(u.searchParams.get(RIG_PARAM) ?? "");
  if (!route) return String(url);
  u.searchParams.delete(RIG_PARAM);
  for (const [name, value] of new URLSearchParams(route.knobs(route.sockets++))) u.searchParams.set(name, value);
  return u.toString();
}

// ─── the backend's side ─────────────────────────────────────────────────────

/** The emulator's stream counters (GET /__stats): `open` now, `opened` in all, `rejected` (HTTP 429), `dropped` (drop knobs). */
export async function emulatorStreams(backend: ReferenceBackend, kind: SpeechToSpeech): Promise<{ open: number; opened: number; rejected: number; dropped: number }> {
  const stats = (await (await fetch(`${backend.url}/__stats`)).json()) as Record<string, Record<string, number> | undefined>;
  const group = stats[STATS_GROUP[kind]] ?? {};
  return { open: group.open ?? 0, opened: group.opened ?? 0, rejected: group.rejected ?? 0, dropped: group.dropped ?? 0 };
}

/** Waits (up to `ms`) for the emulator's open streams to be back to 0; returns how many are open then. */
export async function emulatorOpenAfter(backend: ReferenceBackend, kind: SpeechToSpeech, ms = 3000): Promise<number> {
  const end = performance.now() + ms;
  for (;;) {
    const { open } = await emulatorStreams(backend, kind);
    if (open === 0 || performance.now() > end) return open;
    await sleep(50);
  }
}

/** A Gemini ephemeral token, minted as an app's server would (POST /v1alpha/auth_tokens with the API key). */
export async function mintGeminiToken(backend: Pick<ReferenceBackend, "url">, key: string): Promise<string> {
  const res = await fetch(`${backend.url}/v1alpha/auth_tokens`, { method: "POST", headers: { "x-goog-api-key": key }, body: JSON.stringify({ uses: 1 }) });
  return ((await res.json()) as { name: string }).name;
}

// ─── the rig ────────────────────────────────────────────────────────────────

export interface RigOptions {
  /** Fault knobs: the query of every connection, or of each by its index. */
  knobs?: Knobs;
  /** The provider's other options (`maxMessageBytes`, `connectTimeoutMs`, `turnDetection`: each provider's own values). */
  provider?: { maxMessageBytes?: number; connectTimeoutMs?: number; turnDetection?: string };
  /** The token function; default: the backend's key (OpenAI) or a freshly minted ephemeral token (Gemini). */
  token?: () => Promise<string>;
  /** The session's other options. */
  session?: Partial<ConstructorParameters<typeof VoiceSession>[0]>;
  /** Another service than the backend's emulator (the live one): its URL and model; give `token` too. */
  endpoint?: { url: string; model: string };
}

/** What the session reported, in order. */
export interface Seen {
  errors: Array<{ name: string; message: string; fatal: boolean; service: string | undefined }>;
  warnings: Array<{ service: string; message: string }>;
  /** "reconnecting <reason>", "reconnected <attempts>", "interruption <reason>", "error <name> fatal|non-fatal". */
  events: string[];
  states: string[];
  /** The user's words of the turn still open (its last partial transcript), "" once it is final. */
  partial: string;
}

const speechCache = new Map<string, Int16Array>();

/** flite's voice of `text` at the provider's input rate, s16. */
function speech(kind: SpeechToSpeech, text: string): Int16Array {
  const key = `${kind}:${text}`;
  let pcm = speechCache.get(key);
  if (!pcm) {
    const s = synthesize(text, "slt");
    pcm = kind === "openai" ? floatToInt16(upsampler16to24().process(int16ToFloat(s.samples))) : s.samples;
    speechCache.set(key, pcm);
  }
  return pcm;
}

export type Rig = ReturnType<typeof speechToSpeechRig>;

/**
 * One session on `kind`'s emulator at `backend` (started with `key`), with
 * the fakes; the mic streams silence until `say`. `tokens()`: how many
 * connections were attempted (the token function runs once per attempt).
 */
export function speechToSpeechRig(backend: Pick<ReferenceBackend, "url" | "wsUrl">, kind: SpeechToSpeech, key: string, options: RigOptions = {}) {
  installKnobRouting();
  const id = `${++rigs}`;
  const knobs = options.knobs ?? "";
  const route = { knobs: typeof knobs === "function" ? knobs : () => knobs, sockets: 0, sent: [] as string[] };
  routes.set(id, route);
  let tokens = 0;
  const token = async () => {
    tokens++;
    if (options.token) return options.token();
    return kind === "openai" ? key : mintGeminiToken(backend, key);
  };
  const url = new URL(options.endpoint?.url ?? `${backend.wsUrl}${PATH[kind]}`);
  url.searchParams.set(RIG_PARAM, id);
  const common = { url: url.toString(), model: options.endpoint?.model ?? MODEL[kind], token, ...options.provider };
  // `turnDetection` is each provider's own ("client" | "server_vad" | "semantic_vad", or "client" | "server").
  const realtime: SpeechToSpeechProvider = kind === "openai" ? openaiRealtime(common as OpenaiRealtimeOptions) : geminiLive(common as GeminiLiveOptions);

  const clock = new FakeClock();
  const player = new FakePlayer({ clock });
  const vad = new FakeVad();
  const mic = new FakeMicrophone();
  const components: SessionComponents = { player, vad, capture: mic, dispose: async () => {} };
  // This process's event loop can stall (the backend files run four at once on two cores, and the
  // speech-to-speech-faults file hosts its emulators in this process): the frames due meanwhile then
  // go out in one burst, which the default 0.5 s uplink budget would end the stream for. A page's mic
  // never bursts like that; the uplink policy has its own tests.
  // The emulator's flite synthesises a sentence before it sends any of it, and under two CPU burners a
  // long one took over the default replyStallMs (8 s): the reply was cut as stalled. The stall policy has
  // its own rows (speech-to-speech-faults.test.ts sets its own replyStallMs).
  const session = new VoiceSession({
    realtime,
    components: async () => components,
    bargeIn: { minSpeechMs: 200 },
    ...options.session,
    uplink: { budgetMs: 4000, ...options.session?.uplink },
    turn: { replyStallMs: 30_000, ...options.session?.turn },
  });

  const seen: Seen = { errors: [], warnings: [], events: [], states: [], partial: "" };
  session.on("transcript", (e) => {
    if (e.role === "user") seen.partial = e.final ? "" : e.text;
  });
  session.on("error", ({ error, fatal }) => {
    seen.errors.push({ name: error.name, message: error.message, fatal, service: (error as { service?: string }).service });
    seen.events.push(`error ${error.name} ${fatal ? "fatal" : "non-fatal"}`);
  });
  session.on("warning", (w) => seen.warnings.push({ service: w.service, message: w.message }));
  session.on("reconnecting", (e) => seen.events.push(`reconnecting ${e.reason}`));
  session.on("reconnected", (e) => seen.events.push(`reconnected ${e.attempts}`));
  session.on("interruption", (e) => seen.events.push(`interruption ${e.reason}`));
  session.on("state", (e) => seen.states.push(e.state));

  const FRAME = RATE[kind] / 50;
  let queue: Int16Array[] = [];
  let sent = 0;
  const started = performance.now();
  // Frames at real-time pace, by the wall clock (setInterval drifts).
  const pumpDue = () => {
    const due = Math.floor((performance.now() - started) / 20);
    for (; sent < due; sent++) mic.emit("frame", { pcm: queue.shift() ?? new Int16Array(FRAME), capturedAt: sent * 0.02 });
  };
  const pump = setInterval(pumpDue, 10);
  clock.run();

  /**
   * The user says `text`: its speech goes out; the VAD starts 60 ms in, confirms at 260 ms and ends 400 ms after it.
   * `misfire`: the VAD calls it a misfire 120 ms after its start instead.
   * `stallAtOnsetMs`: this thread is busy that long just before the onset's event, as a page's main
   * thread can be: the frames since the onset then come in one burst with the event.
   */
  async function say(text: string, { misfire = false, stallAtOnsetMs = 0 } = {}): Promise<void> {
    const pcm = speech(kind, text);
    const frames: Int16Array[] = [];
    for (let i = 0; i < pcm.length; i += FRAME) {
      const f = new Int16Array(FRAME);
      f.set(pcm.subarray(i, i + FRAME));
      frames.push(f);
    }
    // The silence already due goes first, so that the speech starts now: queued behind a late pump's backlog,
    // its first frames went out at once in the catch-up burst, as if said in the past.
    pumpDue();
    queue = frames;
    // The onset on the audio's clock (the frames' capturedAt), as a VAD stamps it: 60 ms into the
    // speech, however late this process's timer fires under load.
    const onsetTime = sent * 0.02 + 0.06;
    await sleep(60);
    if (stallAtOnsetMs > 0) {
      for (const t = performance.now(); performance.now() - t < stallAtOnsetMs; );
      await sleep(15); // the pump's burst first, as queued frames come before the event
    }
    vad.emit("speechStart", { pausedPlayback: false, contextTime: onsetTime });
    if (misfire) {
      await sleep(120);
      vad.emit("misfire", { resumedPlayback: false, contextTime: clock.now / 1000 });
      return;
    }
    await sleep(200);
    vad.emit("speechRealStart", { contextTime: clock.now / 1000 });
    // The VAD ends 400 ms after the speech's last frame went out. Not by a sleep counted from the frames
    // left (the pump shifts them out of `frames` meanwhile): under load that ended the turn before the
    // last word was sent, and the service heard "can you help me" as "can you help her own" (CI).
    while (queue.length > 0) await sleep(10);
    await sleep(400);
    vad.emit("speechEnd", { contextTime: clock.now / 1000 });
  }

  /** Waits for `ok`, or fails naming `what` and where the session stood. */
  function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
    const where = () => ({ state: session.state, history: session.history.map((m) => `${m.role}: ${m.text}`), events: seen.events, warnings: seen.warnings.map((w) => w.message), errors: seen.errors.map((e) => e.message) });
    return waitUntil(ok, ms, () => `${what}: ${JSON.stringify(where())}`, 20);
  }

  async function close(): Promise<void> {
    clearInterval(pump);
    clock.pause();
    await session.stop();
    routes.delete(id);
  }

  return {
    session,
    player,
    vad,
    seen,
    say,
    until,
    close,
    /** Connection attempts so far (token function calls). */
    tokens: () => tokens,
    /** Sockets opened so far (the rig's WebSocket saw them). */
    sockets: () => route.sockets,
    /** What the client sent so far, in order: each JSON message's type (audio left out). */
    sent: () => [...route.sent],
  };
}
