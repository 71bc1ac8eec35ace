// Types for backend.mjs, so TypeScript tests, browser specs and benchmarks can use it.
import type { EventEmitter } from "node:events";

/** Fault and pacing knobs; on the wire they are snake_case query parameters (delay_ms…). */
export interface Knobs {
  capacity?: number;
  delayMs?: number;
  stallMs?: number;
  stallAfterMs?: number;
  rateBps?: number;
  dropAfterMs?: number;
  dropAfter?: number;
  malformed?: string;
  oversize?: number;
  wordMs?: number;
  pace?: number;
  burstS?: number;
  chunkWords?: number;
  silenceRms?: number;
  endpointMs?: number;
  /** STT: 0 = read the audio but run no recogniser (load tests). */
  recognise?: number;
  /** STT: 0 = pocketsphinx alone, even on a backend with `knownSpeech` (a test of real recognition). */
  knownSpeech?: number;
  /** STT: 1 = never answer a Marker. */
  ignoreMarkers?: number;
  /** Gemini Live: 1 = server messages as binary frames holding their JSON. */
  binaryFrames?: number;
  /** Gemini Live: the model's time before its turn's first message, ms. */
  thinkMs?: number;
}

export interface BackendOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, `auth_id` (query) or `Authorization: Bearer` must match. */
  token?: string;
  /** Knob defaults per emulator (its name: stt, tts, llm, deepgram…); query parameters override them. */
  defaults?: { stt?: Knobs; tts?: Knobs; llm?: Knobs; [emulator: string]: Knobs | undefined };
  /** Serve dist/, demo/, test/, bench/ (default true). */
  serveStatic?: boolean;
  /** Send a file's pre-compressed copy (FILE.br, FILE.gz, from `npm run build`) to a browser that accepts it (default true). */
  precompressed?: boolean;
  /** Load one recogniser at start-up (default true). */
  prewarm?: boolean;
  /** false: run as if pocketsphinx were not installed (STT streams get an Error, health says so). */
  recogniser?: boolean;
  /**
   * A folder of test fixtures (WAV + sidecar with `recognised` words): an utterance that matches one
   * gets exactly those words (known-speech.mjs). Default: the BARGEIN_KNOWN_SPEECH environment variable.
   */
  knownSpeech?: string;
  /** Sent back as the X-Bargein-Instance header on every HTTP answer (who spawned it can tell it from a stale backend on the port). */
  instance?: string;
}

export interface BackendStats {
  stt: { open: number; opened: number; rejected: number; closedByClient: number; closedNormally: number; dropped: number; words: number; markers: number; bytesIn: number };
  tts: { open: number; opened: number; rejected: number; closedByClient: number; completed: number; dropped: number; framesSent: number; contexts: number; contextsCancelled: number };
  llm: {
    open: number;
    opened: number;
    rejected: number;
    requestsStarted: number;
    requestsEnded: number;
    requestsAborted: number;
    active: number;
    piecesSent: number;
    /** Tool calls the scripted model made (eliza-tools.mjs). */
    toolCalls: number;
    dropped: number;
  };
  http: { unauthorized: number };
}

export interface BackendHealth {
  stt: { recogniser: boolean; reason: string | null; install: string | null };
  tts: { synthesiser: string; voices: string[] };
  llm: { model: string; languageModel: false };
}

export interface ReferenceBackend {
  /** http://host:port */
  url: string;
  /** ws://host:port */
  wsUrl: string;
  port: number;
  stats(): BackendStats;
  /** Emits ("count", { service, name, value }) on every counter change. */
  events: EventEmitter;
  health(): BackendHealth;
  close(): Promise<void>;
}

export const INSTANCE_HEADER: "X-Bargein-Instance";
export function startReferenceBackend(options?: BackendOptions): Promise<ReferenceBackend>;
