/**
 * Scripted providers for users' own tests (and the SDK's Node tests): they
 * follow the provider contracts of providers/types.ts with no network, so UI
 * code built on VoiceSession can be tested deterministically. These are fakes:
 * use the real providers against a real service to test the wire.
 */
import type {
  ChatMessage,
  LlmProvider,
  SttEvent,
  SttProvider,
  SttStream,
  ToolCallRequest,
  ToolDefinition,
  TtsEvent,
  TtsProvider,
  TtsStream,
} from "../providers/types.js";
import { ConnectionClosedError } from "../index.js";
import { abortable } from "../util/abort.js";
import { AsyncQueue } from "../util/async-queue.js";
import { delay } from "../util/timeout.js";

/** Drives a fake STT from the test: what the "service" recognises and when. */
export interface FakeSttControl {
  provider: SttProvider;
  /** Samples received so far. */
  readonly samplesReceived: number;
  /** With `keepAudio`: the frames each stream received (as float), one array per stream opened, in order. */
  readonly received: Float32Array[][];
  /** The open stream count (0 or 1). */
  readonly openStreams: number;
  /** Emits a recognised word. */
  word(text: string, startS?: number): void;
  /** Emits the end of the last word, `stopS` into the stream's audio. */
  wordEnd(stopS: number): void;
  /** Emits a pause probability step. */
  pause(probability: number): void;
  /** Emits the service's own end of turn (Flux `EndOfTurn`; `eager`: `EagerEndOfTurn`). */
  endOfTurn(eager?: boolean): void;
  /** Emits the service hearing the user go on after an end of turn (Flux `TurnResumed`). */
  turnResumed(): void;
  /** Ends the current stream abnormally (a dropped socket). */
  drop(error: Error): void;
}

/**
 * `flushDelayMs`: how long the "service" takes to return a flush marker (a
 * slow STT); words emitted meanwhile arrive before it, as they would.
 * `keepAudio`: keep a copy of every frame received (`received`), for tests
 * that check what the service heard; off by default, as it grows unbounded.
 */
export function fakeStt(options: { sampleRate?: number; encoding?: "f32" | "s16"; flushDelayMs?: number; keepAudio?: boolean } = {}): FakeSttControl {
  let current: { queue: AsyncQueue<SttEvent> } | undefined;
  let markerId = 0;
  let samples = 0;
  let step = 0;
  let open = 0;
  const received: Float32Array[][] = [];
  const provider: SttProvider = {
    name: "fake-stt",
    audioFormat: { sampleRate: options.sampleRate ?? 24000, encoding: options.encoding ?? "f32" },
    supportsGap: false,
    async connect(signal) {
      signal?.throwIfAborted();
      const queue = new AsyncQueue<SttEvent>();
      const markers = new Map<number, () => void>();
      async function* withMarkers(events: AsyncGenerator<SttEvent>) {
        for await (const event of events) {
          if (event.kind === "marker") markers.get(event.id)?.();
          yield event;
        }
      }
      current = { queue };
      open++;
      const mine: Float32Array[] = [];
      received.push(mine);
      let closed = false;
      const stream: SttStream = {
        bytesPerSample: 4,
        bufferedAmount: 0,
        sendAudio(pcm) {
          if (closed) throw new ConnectionClosedError("fake-stt: cannot send, the stream is closed", { service: "stt" });
          samples += pcm.length;
          if (options.keepAudio) mine.push(pcm instanceof Float32Array ? pcm.slice() : Float32Array.from(pcm, (v) => v / 32768));
          return pcm.length * 4;
        },
        // Like a real Marker round trip: resolves once every event before the
        // marker has been handed to the consumer of events().
        flush(signal) {
          signal?.throwIfAborted();
          const id = ++markerId;
          return abortable<void>((resolve) => {
            markers.set(id, resolve);
            const push = () => queue.push({ kind: "marker", id });
            if (options.flushDelayMs) void delay(options.flushDelayMs).then(push);
            else push();
            return () => markers.delete(id);
          }, signal);
        },
        events: (signal) => withMarkers(queue.iterate(signal)),
        async close() {
          if (closed) return;
          closed = true;
          open--;
          queue.end();
        },
      };
      return stream;
    },
  };
  return {
    provider,
    get samplesReceived() {
      return samples;
    },
    get openStreams() {
      return open;
    },
    received,
    word: (text, startS = 0) => current?.queue.push({ kind: "word", text, startS }),
    wordEnd: (stopS) => current?.queue.push({ kind: "word-end", stopS }),
    pause: (probability) => current?.queue.push({ kind: "pause", probability, stepIndex: step++ }),
    endOfTurn: (eager = false) => current?.queue.push({ kind: "end-of-turn", eager }),
    turnResumed: () => current?.queue.push({ kind: "turn-resumed" }),
    drop: (error) => current?.queue.fail(error),
  };
}

/**
 * A scripted turn of the fake LLM that calls tools: it says `text` first (if
 * any), then stops to ask for `toolCalls`, as a real model's message with
 * `finish_reason: "tool_calls"` does. `arguments` is an object (sent as
 * JSON) or a raw string (to test a model that sends bad JSON). The session
 * answers, and asks again with the results: `reply` then sees `role: "tool"`
 * messages last.
 */
export interface FakeLlmTurn {
  text?: string;
  toolCalls: { id?: string; name: string; arguments?: Record<string, unknown> | string }[];
}

/** What the fake LLM was asked: the messages and tools, and how the request ended. */
export interface FakeLlmRequest {
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[] | undefined;
  aborted: boolean;
  completed: boolean;
  /** The answer was a call of tools (the reply goes on in a next request). */
  calledTools: boolean;
}

/**
 * A scripted LLM: `reply` decides the answer to each request (text, or a
 * FakeLlmTurn that calls tools); words stream `msPerWord` apart.
 */
export function fakeLlm(options: { reply?: (messages: readonly ChatMessage[]) => string | FakeLlmTurn | undefined; msPerWord?: number } = {}) {
  const requests: FakeLlmRequest[] = [];
  let callCount = 0;
  const provider: LlmProvider = {
    name: "fake-llm",
    async *stream(messages, signal, llmRequest) {
      const request: FakeLlmRequest = { messages: [...messages], tools: llmRequest?.tools, aborted: false, completed: false, calledTools: false };
      requests.push(request);
      const last = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const answer = options.reply?.(messages) ?? `You said ${last}.`;
      const turn: FakeLlmTurn = typeof answer === "string" ? { text: answer, toolCalls: [] } : answer;
      const words = (turn.text ?? "").split(" ").filter(Boolean);
      try {
        for (let i = 0; i < words.length; i++) {
          await delay(options.msPerWord ?? 5, signal);
          yield (i ? " " : "") + words[i];
        }
        if (turn.toolCalls.length) {
          await delay(options.msPerWord ?? 5, signal);
          const calls: ToolCallRequest[] = turn.toolCalls.map((c) => ({
            id: c.id ?? `call_${++callCount}`,
            name: c.name,
            rawArguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}),
          }));
          request.calledTools = true;
          yield { kind: "toolCalls", calls };
        }
        request.completed = true;
      } catch (err) {
        request.aborted = signal?.aborted ?? false;
        throw err;
      }
    },
  };
  return { provider, requests };
}

/**
 * A fake TTS: each word becomes `secondsPerWord` of a constant tone at
 * `sampleRate`, streamed as soon as the word arrives, with a `text` event
 * giving the word's place in the audio. `failAfterWords`: the stream fails
 * (as a dropped socket would) once it has voiced that many words.
 */
export function fakeTts(options: { sampleRate?: number; secondsPerWord?: number; amplitude?: number; failAfterWords?: number } = {}) {
  const sampleRate = options.sampleRate ?? 24000;
  const perWord = options.secondsPerWord ?? 0.25;
  const streams: { texts: string[]; ended: boolean; closedByClient: boolean }[] = [];
  const provider: TtsProvider = {
    name: "fake-tts",
    async connect(signal) {
      signal?.throwIfAborted();
      const record = { texts: [] as string[], ended: false, closedByClient: false };
      streams.push(record);
      const queue = new AsyncQueue<TtsEvent>();
      let t = 0;
      let voiced = 0;
      let failed = false;
      const stream: TtsStream = {
        sendText(text) {
          if (failed) throw new ConnectionClosedError("fake-tts: cannot send, the stream has failed", { service: "tts" });
          record.texts.push(text);
          for (const word of text.split(/\s+/).filter(Boolean)) {
            if (voiced++ === options.failAfterWords) {
              failed = true;
              queue.fail(
                new ConnectionClosedError(`fake-tts: the stream failed after ${options.failAfterWords} words (failAfterWords)`, { service: "tts" }),
              );
              return;
            }
            queue.push({ kind: "text", text: word, startS: t, stopS: t + perWord });
            queue.push({ kind: "audio", pcm: new Float32Array(Math.round(perWord * sampleRate)).fill(options.amplitude ?? 0.25), sampleRate });
            t += perWord;
          }
        },
        end() {
          record.ended = true;
          queue.end();
        },
        events: (signal) => queue.iterate(signal),
        async close() {
          if (!record.ended) record.closedByClient = true;
          queue.end();
        },
      };
      return stream;
    },
  };
  return { provider, streams };
}
