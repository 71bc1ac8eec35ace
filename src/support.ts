/**
 * What bargein needs of the browser, checked without side effects (no
 * AudioContext, no worker, no network): `isSupported()` for an app's
 * feature gate, `browserSupport()` for the missing parts by name. The
 * session checks the same list in `start()` before it opens anything, and
 * fails with an UnsupportedError naming the first missing part.
 */

/** A browser feature bargein needs and lacks here. */
export interface MissingFeature {
  /** The feature, as the platform names it ("AudioWorklet", "WebAssembly", …). */
  feature: string;
  /** What bargein needs it for. */
  neededFor: string;
}

/** The answer of `browserSupport()`. */
export interface BrowserSupport {
  /** True when nothing bargein needs is missing. */
  supported: boolean;
  /** What is missing, in the order bargein would need it. */
  missing: MissingFeature[];
  /**
   * Whether playback and the VAD can share memory (a cross-origin isolated page
   * with SharedArrayBuffer). Not required: without it they talk by messages.
   */
  sharedMemory: boolean;
}

type Scope = Record<string, any>;

/** Whether `new Worker(url, { type: "module" })` is understood; reads the option, fetches nothing. */
function moduleWorkers(scope: Scope): boolean {
  if (typeof scope.Worker !== "function") return false;
  let read = false;
  try {
    // The options are read before the URL is parsed; the URL is invalid, so nothing starts.
    new scope.Worker("http://[", {
      get type() {
        read = true;
        return "module";
      },
    });
  } catch {}
  return read;
}

/** The features bargein needs, each with a check of `scope` (globalThis in a page). */
const NEEDS: ReadonlyArray<[feature: string, neededFor: string, has: (scope: Scope) => boolean]> = [
  ["AudioContext", "playing the bot's voice and reading the microphone (Web Audio)", (s) => typeof s.AudioContext === "function"],
  ["AudioWorklet", "the capture and playback processors", (s) => typeof s.AudioWorkletNode === "function"],
  ["secure context", "the microphone (serve the page over https, or from localhost)", (s) => s.isSecureContext !== false],
  ["getUserMedia", "the microphone", (s) => typeof s.navigator?.mediaDevices?.getUserMedia === "function"],
  ["WebAssembly", "the voice activity detector (Silero in onnxruntime's wasm)", (s) => typeof s.WebAssembly?.instantiate === "function"],
  ["module Worker", "the voice activity detector's worker", moduleWorkers],
  ["MessageChannel", "the direct links between the microphone's worklet, the VAD worker and playback", (s) => typeof s.MessageChannel === "function"],
  ["WebSocket", "the streams of the speech services", (s) => typeof s.WebSocket === "function"],
  ["fetch with streamed bodies", "the language model's streamed reply and the VAD's files", (s) => typeof s.fetch === "function" && typeof s.ReadableStream === "function"],
];

/** What of bargein's needs this browser lacks, by name. Side-effect free; cheap enough to call on every render. */
export function browserSupport(scope: Scope = globalThis): BrowserSupport {
  const missing = NEEDS.filter(([, , has]) => !has(scope)).map(([feature, neededFor]) => ({ feature, neededFor }));
  return { supported: missing.length === 0, missing, sharedMemory: scope.crossOriginIsolated === true && typeof scope.SharedArrayBuffer === "function" };
}

/**
 * Whether this browser has everything a VoiceSession needs. Check it before
 * offering voice; `browserSupport()` (from `bargein/advanced`) names what is
 * missing, and `start()` fails with an UnsupportedError that names it too.
 */
export function isSupported(): boolean {
  return browserSupport().supported;
}
