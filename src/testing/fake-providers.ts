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
  TtsEvent,
  TtsProvider,
  TtsStream,
} from "../providers/types.js";
import { delay } from "../util/abort.js";

/** A push-based async queue: one producer calls push/end/fail, one consumer iterates. */
class EventQueue<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | undefined;
  #failWaiting: ((e: unknown) => void) | undefined;
  #ended = false;
  #error: { e: unknown } | undefined;

  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiting) this.#resolve({ value: item, done: false });
    else this.#items.push(item);
  }
  end(): void {
    this.#ended = true;
    if (this.#waiting && this.#items.length === 0) this.#resolve({ value: undefined, done: true });
  }
  fail(e: unknown): void {
    this.#error = { e };
    this.#ended = true;
    const reject = this.#failWaiting;
    this.#waiting = this.#failWaiting = undefined;
    reject?.(e);
  }
  #resolve(r: IteratorResult<T>): void {
    const resolve = this.#waiting!;
    this.#waiting = this.#failWaiting = undefined;
    resolve(r);
  }
  async *iterate(signal?: AbortSignal): AsyncGenerator<T> {
    for (;;) {
      if (this.#items.length) {
        yield this.#items.shift()!;
        continue;
      }
      if (this.#error) throw this.#error.e;
      if (this.#ended) return;
      signal?.throwIfAborted();
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        this.#waiting = resolve;
        this.#failWaiting = reject;
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      if (next.done) return;
      yield next.value;
    }
  }
}

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
  let current: { queue: EventQueue<SttEvent> } | undefined;
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
      const queue = new EventQueue<SttEvent>();
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
          if (closed) throw new Error("fake-stt: the stream is closed");
          samples += pcm.length;
          if (options.keepAudio) mine.push(pcm instanceof Float32Array ? pcm.slice() : Float32Array.from(pcm, (v) => v / 32768));
          return pcm.length * 4;
        },
        // Like a real Marker round trip: resolves once every event before the
        // marker has been handed to the consumer of events().
        flush(signal) {
          signal?.throwIfAborted();
          const id = ++markerId;
          return new Promise<void>((resolve, reject) => {
            markers.set(id, resolve);
            signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
            const push = () => queue.push({ kind: "marker", id });
            if (options.flushDelayMs) setTimeout(push, options.flushDelayMs);
            else push();
          });
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
    drop: (error) => current?.queue.fail(error),
  };
}

/** A scripted LLM: `reply` decides the answer; words stream `msPerWord` apart. */
export function fakeLlm(options: { reply?: (messages: readonly ChatMessage[]) => string; msPerWord?: number } = {}) {
  const requests: { messages: readonly ChatMessage[]; aborted: boolean; completed: boolean }[] = [];
  const provider: LlmProvider = {
    name: "fake-llm",
    async *stream(messages, signal) {
      const request = { messages: [...messages], aborted: false, completed: false };
      requests.push(request);
      const last = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const text = options.reply?.(messages) ?? `You said ${last}.`;
      const words = text.split(" ");
      try {
        for (let i = 0; i < words.length; i++) {
          await delay(options.msPerWord ?? 5, signal);
          yield (i ? " " : "") + words[i];
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
      const queue = new EventQueue<TtsEvent>();
      let t = 0;
      let voiced = 0;
      let failed = false;
      const stream: TtsStream = {
        sendText(text) {
          if (failed) throw new Error("fake-tts: the stream has failed");
          record.texts.push(text);
          for (const word of text.split(/\s+/).filter(Boolean)) {
            if (voiced++ === options.failAfterWords) {
              failed = true;
              queue.fail(new Error(`fake-tts: the stream failed after ${options.failAfterWords} words (failAfterWords)`));
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
