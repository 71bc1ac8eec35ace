// What a new user writes after reading the README: imports from "bargein" and
// nothing else; no assetsPath, no files copied to public/. The test drives it
// through `window.consumer`, with known speech fed to `input` in the same
// AudioContext (the fake microphone is not deterministic).
import {
  AtCapacityError,
  BargeinError,
  VoiceSession,
  kyutaiStt,
  kyutaiTts,
  openaiChat,
  type AssetUrls,
  type SessionState,
  type VoiceSessionOptions,
} from "bargein";
// The explicit form: each file's URL from Vite (hashed, under assets/).
import captureWorklet from "bargein/capture-worklet?url";
import playbackWorklet from "bargein/playback-worklet?url";
import vadWorker from "bargein/vad-worker?url";
import model from "bargein/silero_vad_v5.onnx?url";
import wasm from "bargein/ort-wasm-simd-threaded.wasm?url";

const explicitAssets: AssetUrls = { captureWorklet, playbackWorklet, vadWorker, model, wasm };
const ws = `ws://${location.host}`;

interface TurnResult {
  afterStart: SessionState;
  states: SessionState[];
  /** Why each STT reconnect happened ("overload": a starved page's uplink fell behind its budget). */
  reconnects: string[];
  history: { role: string; text: string }[];
  errors: string[];
}

function options(context: AudioContext, mic: MediaStreamAudioDestinationNode, sttQuery = ""): VoiceSessionOptions {
  return {
    stt: kyutaiStt({ urls: `${ws}${sttQuery}`, startupTimeoutMs: 3000 }),
    tts: kyutaiTts({ urls: ws, voice: "slt" }),
    llm: openaiChat({ url: `${location.origin}/v1`, model: "eliza" }),
    input: mic.stream,
    audio: { context },
  };
}

function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const check = () => {
      if (cond()) return resolve();
      if (performance.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(check, 20);
    };
    check();
  });
}

async function say(context: AudioContext, mic: MediaStreamAudioDestinationNode, name: string): Promise<void> {
  const data = await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer();
  const source = context.createBufferSource();
  source.buffer = await context.decodeAudioData(data);
  source.connect(mic);
  source.start();
}

/** One spoken question, one reply, with every asset at its default (or explicit) URL. */
async function turn({ explicit = false, speech = "weather-question" } = {}): Promise<TurnResult> {
  const context = new AudioContext();
  const mic = context.createMediaStreamDestination();
  const session = new VoiceSession({ ...options(context, mic), ...(explicit ? { assets: explicitAssets } : {}) });
  const states: SessionState[] = [];
  const errors: string[] = [];
  const reconnects: string[] = [];
  session.on("state", (e) => states.push(e.state));
  session.on("reconnecting", (e) => reconnects.push(e.reason));
  session.on("error", (e) => errors.push(`${e.error.name}: ${e.error.message}`));
  try {
    await session.start();
    const afterStart = session.state;
    if (speech) {
      // The question waits for the VAD's model: while the worker compiles it on a loaded machine the
      // level fallback's events lag, and the STT's pause could end the turn before the VAD's speech
      // start came (a reply begun, then cut by the late start). Answering before the model is
      // cold-start.spec.ts's business; this test is the built app's.
      await until(() => !session.degraded, 30000, "the VAD's model");
      await say(context, mic, speech);
      await until(() => session.history.length >= 2 && session.state === "listening", 30000, "a turn and its reply");
    }
    const history = session.history.map((m) => ({ role: m.role, text: m.text }));
    return { afterStart, states, reconnects, history, errors };
  } finally {
    await session.stop();
    await context.close();
  }
}

/** Error identity in a minified build: the STT refuses ("no free channels"). */
async function capacity() {
  try {
    const stream = await kyutaiStt({ urls: `${ws}?capacity=0`, startupTimeoutMs: 3000 }).connect();
    await stream.close();
    return { connected: true };
  } catch (err) {
    const e = err as BargeinError;
    return {
      name: e.name,
      code: e.code,
      isAtCapacity: e.name === "AtCapacityError",
      instanceOf: e instanceof AtCapacityError && e instanceof BargeinError,
      constructorName: e.constructor.name,
      message: e.message,
    };
  }
}

/** A wrong asset URL: what the error says, in the minified build. */
/**
 * A wrong URL for a file start() needs (a worklet, the VAD worker) rejects start(); one for the
 * model or the wasm, which load after the session listens, is an `error` event (not fatal).
 */
async function badAsset(assets: AssetUrls) {
  const context = new AudioContext();
  const mic = context.createMediaStreamDestination();
  const session = new VoiceSession({ ...options(context, mic), assets });
  const errors: Array<{ error: Error; fatal: boolean }> = [];
  session.on("error", (e) => errors.push(e));
  const described = (e: BargeinError) => ({ name: e.name, code: e.code, url: e.url, message: e.message });
  try {
    await session.start();
    const until = performance.now() + 10_000;
    while (errors.length === 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    const first = errors[0];
    return { started: true, degraded: session.degraded, ...(first ? { fatal: first.fatal, ...described(first.error as BargeinError) } : {}) };
  } catch (err) {
    return described(err as BargeinError);
  } finally {
    await session.stop();
    await context.close();
  }
}

declare global {
  interface Window {
    consumer: { turn: typeof turn; capacity: typeof capacity; badAsset: typeof badAsset; explicitAssets: AssetUrls };
  }
}
window.consumer = { turn, capacity, badAsset, explicitAssets };
document.getElementById("status")!.textContent = "ready";
