// A VoiceSession on the real parts (worklets, VAD worker, providers) against
// the reference backend that serves this page, instrumented for benchmarks:
// known speech goes in through `input` at a chosen context time, the bot's
// output is recorded in the same AudioContext (window-recorder.js), and the
// TTS stream is observed (word timestamps, first audio byte) by wrapping the
// provider, without touching the SDK. Shared by turn.js and bargein.js.
import { VoiceSession, openaiChat } from "/dist/bargein.js";
import { envelopeOnsetSeconds, until } from "/test/browser/pages/session/session.js";
import { recordedOutput } from "/test/browser/pages/session/recorded-output.js";
import { benchProviders } from "./bench-providers.js";

export { envelopeOnsetSeconds, until };

/** Samples louder than this count as sound (-80 dBFS), as in test/browser/bargein.spec.ts. */
export const SILENT = 1e-4;

/**
 * @param {object} o
 * @param {boolean} [o.story] every reply is the backend's long story (see storyLlm)
 * @param {object} [o.sessionOptions] merged into the VoiceSession options
 * @param {string} [o.provider] the STT/TTS pair by name (bench-providers.js); default the Kyutai pair
 * @param {boolean} [o.steadyReply] each reply's audio is replaced by steady noise of the same length (see observedTts)
 */
export async function makeBenchSession({ story = false, sessionOptions = {}, provider = "kyutai", steadyReply = false } = {}) {
  const { stt, tts } = benchProviders(provider);
  const context = new AudioContext({ latencyHint: "interactive" });
  const { output, recorder } = await recordedOutput(context, { module: "/bench/pages/session/window-recorder.js", processor: "window-recorder", seconds: 40 });
  const mic = context.createMediaStreamDestination();
  const clock = new ClockMap(context);
  const ttsStreams = [];
  const chat = openaiChat({ url: `${location.origin}/v1`, model: "eliza" });
  const log = { states: [], errors: [], warnings: [], overloads: [], turns: [], interruptions: [], backchannels: [], vad: [], thinkingAt: [], speakingAt: [], userText: [] };
  const session = new VoiceSession({
    stt,
    tts: observedTts(tts, ttsStreams, clock, steadyReply),
    llm: story ? storyLlm(chat) : chat,
    assetsPath: "/dist/",
    input: mic.stream,
    audio: { context, output },
    ...sessionOptions,
    // These benches measure Silero's turns and barge-ins; the level fallback before it is ready is
    // the coldstart bench's.
    vad: { waitForModel: true, ...sessionOptions.vad },
  });
  session.on("state", (e) => {
    log.states.push(e.state);
    // Context time at which this reply's generation was fenced: no audio of it can exist before.
    if (e.state === "bot_thinking") log.thinkingAt.push(context.currentTime);
    // The reply's first sample is audible (the player's report): the user hears the bot from here.
    if (e.state === "bot_speaking") log.speakingAt.push(context.currentTime);
  });
  session.on("error", (e) => log.errors.push(`${e.error.name}: ${e.error.message}`));
  session.on("warning", (e) => log.warnings.push(`${e.service}: ${e.message}`));
  session.on("overload", (e) => log.overloads.push({ ...e, contextTime: context.currentTime }));
  session.on("turn", (e) => log.turns.push({ ...e, at: performance.now() }));
  session.on("interruption", (e) => log.interruptions.push({ ...e, contextTime: context.currentTime, at: performance.now() }));
  session.on("backchannel", (e) => log.backchannels.push({ ...e, contextTime: context.currentTime }));
  // What the STT heard of the user, as the session shows it (a backchannel's held words never show).
  session.on("transcript", (e) => e.role === "user" && log.userText.push({ id: e.id, text: e.text, contextTime: context.currentTime }));
  session.on("vad", (e) => e.kind !== "meter" && log.vad.push({ kind: e.kind, direct: e.direct, contextTime: e.contextTime }));

  const buffers = new Map();
  /**
   * Plays fixture `name` into the injected mic so that its speech envelope
   * onset lands at context time `onsetAt` (default: as soon as possible),
   * `gain` times as loud as recorded (default 1).
   * Returns context times: onset, speechEnd (the fixture's labelled offset), end.
   */
  async function say(name, { onsetAt, gain = 1 } = {}) {
    if (!buffers.has(name)) {
      // "human/…": a recording of a real person, copied here by bench/lib/human-speech.mjs; "backchannel/…": the
      // turn bench's corpora (bench/lib/backchannel-corpus.mjs, turn-corpus.mjs); "noise/…": room sounds
      // (test/fixtures/noise). All are labelled; flite's fixtures are measured.
      const labelled = ["human/", "backchannel/", "turn-corpus/", "noise/"].some((prefix) => name.startsWith(prefix));
      const base = name.startsWith("noise/") ? `/test/fixtures/${name}` : labelled ? `/bench/pages/session/${name}` : `/test/fixtures/speech/${name}`;
      const data = await (await fetch(`${base}.wav`)).arrayBuffer();
      const buffer = await context.decodeAudioData(data);
      const meta = await (await fetch(`${base}.json`)).json();
      // A recording of a person has its onset labelled (bench/lib/human-speech.mjs: 20 ms held, so a click
      // before the first word is not its onset).
      const onsetS = labelled ? meta.onsetSamples / meta.sampleRate : envelopeOnsetSeconds(buffer);
      buffers.set(name, { buffer, meta, onsetS });
    }
    const { buffer, meta, onsetS } = buffers.get(name);
    const earliest = context.currentTime + 2 * (128 / context.sampleRate);
    const startedAt = Math.max(earliest, (onsetAt ?? 0) - onsetS);
    const source = context.createBufferSource();
    source.buffer = buffer;
    if (gain === 1) source.connect(mic);
    else source.connect(new GainNode(context, { gain })).connect(mic);
    source.start(startedAt);
    return {
      name,
      startedAt,
      onset: startedAt + onsetS,
      speechEnd: startedAt + meta.offsetSamples / meta.sampleRate,
      end: startedAt + buffer.duration,
      words: meta.words.length,
    };
  }

  /** The recorded output between two context times: {startFrame, samples, known (per quantum)}. */
  function recording(fromTime, toTime) {
    return new Promise((resolve) => {
      recorder.port.onmessage = (e) => resolve(e.data);
      recorder.port.postMessage({ kind: "window", fromFrame: Math.round(fromTime * context.sampleRate), toFrame: Math.round(toTime * context.sampleRate) });
    });
  }

  async function close() {
    await session.stop();
    clock.stop();
    await context.close();
  }
  /**
   * A room's noise in the mic from now on: seeded white noise at `db` dBFS RMS,
   * looped. A real microphone is never digitally silent, so a recording played
   * into a silent mic starts with a step of its own room noise, which the
   * onset cue (rightly) takes for a sound; the bed removes that step.
   */
  function noiseBed(db) {
    const buffer = context.createBuffer(1, context.sampleRate * 2, context.sampleRate);
    const data = buffer.getChannelData(0);
    const amp = Math.pow(10, db / 20) * Math.sqrt(3);
    let seed = 12345;
    for (let i = 0; i < data.length; i++) {
      seed = (seed * 16807) % 2147483647;
      data[i] = amp * ((seed / 2147483647) * 2 - 1);
    }
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.loop = true;
    source.connect(mic);
    source.start();
    return () => source.stop();
  }
  return { session, context, log, say, recording, clock, ttsStreams, close, noiseBed };
}

/** Where a bench session is, for an error that ends a run: its state, the last states, warnings, errors, overloads, user words. */
export function sessionDetail(t) {
  const tail = (list, n = 8) => list.slice(-n).join(" → ") || "none";
  const overloads = t.log.overloads.map((o) => `${o.reason} ${o.pendingBytes}/${o.budgetBytes} B at ${o.contextTime.toFixed(2)} s`).join(", ") || "none";
  const lastUser = t.session.history.filter((m) => m.role === "user").at(-1)?.text ?? "none";
  return `state ${t.session.state}; last states ${tail(t.log.states)}; warnings ${tail(t.log.warnings, 4)}; errors ${tail(t.log.errors, 4)}; overloads ${overloads}; last user message "${lastUser}"; live quests ${[...(t.session.liveQuests ?? [])].join(",") || "none"}`;
}

/** Listening, with no reply on its way: a reply playing or being thought of (the last trial's turn) is cut. */
export async function quiet(t) {
  const deadline = performance.now() + 30000;
  while (t.session.state !== "listening") {
    if (t.session.state === "bot_speaking" || t.session.state === "bot_thinking") await t.session.interrupt();
    if (performance.now() > deadline) throw new Error(`no listening state (${sessionDetail(t)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** From quiet, asks the weather question until a reply plays (3 times at most: the reference STT may hear nothing); `onAsk` counts the asks. */
export async function freshReply(t, onAsk = () => {}) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    await quiet(t);
    const replies = t.log.thinkingAt.length;
    onAsk();
    await t.say("weather-question");
    try {
      await until(() => t.log.thinkingAt.length > replies && t.session.state === "bot_speaking" && t.ttsStreams.at(-1)?.firstAudioContextTime !== undefined, 30000, "a reply");
      return;
    } catch {
      // The reference STT heard nothing: ask again.
    }
  }
  throw new Error(`no reply after asking 3 times (${sessionDetail(t)})`);
}

/**
 * Maps performance.now() (ms) to AudioContext time (s). currentTime moves in
 * bursts of one audio callback, so a single reading is off by up to a burst;
 * the offset kept is a high percentile (90th) of (currentTime − now) over the
 * last 2 s of readings every 20 ms, i.e. a reading taken right after a burst,
 * without the outliers of a context that is still settling.
 */
class ClockMap {
  #offsets = [];
  #timer;
  constructor(context) {
    this.context = context;
    this.#timer = setInterval(() => this.sample(), 20);
  }
  sample() {
    this.#offsets.push(this.context.currentTime - performance.now() / 1000);
    if (this.#offsets.length > 100) this.#offsets.shift();
  }
  contextTimeAt(perfMs) {
    this.sample();
    const sorted = [...this.#offsets].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) * 0.9)] + perfMs / 1000;
  }
  stop() {
    clearInterval(this.#timer);
  }
}

/**
 * Bench device: the reference LLM (a scripted responder, see demo/README.md)
 * answers "tell me a long story" with a ~15 s story, so every reply is long
 * enough to be interrupted at any random moment of the first seconds. The
 * user's real words still go through the STT and into the history; only the
 * text sent to the LLM for the last user message is replaced.
 */
function storyLlm(inner) {
  return {
    name: `${inner.name}+story`,
    on: inner.on,
    stream(messages, signal) {
      const lastUser = messages.map((m) => m.role).lastIndexOf("user");
      const asked = messages.map((m, i) => (i === lastUser ? { role: "user", content: "Tell me a long story." } : m));
      return inner.stream(asked, signal);
    },
  };
}

/**
 * Wraps a TTS provider to observe each stream: its word timestamps, when its
 * first audio arrived (performance.now and context time), and where its
 * first loud sample is in its own audio (seconds), to align it with the recording.
 * `steady`: each audio chunk is overwritten with seeded white noise at about
 * −26 dBFS, so a reply has no quiet of its own and any silence in the output
 * is one the session made (a pause, a flush, an underrun). Only for benches
 * where the mic cannot hear the reply (headphones): its content reaches no one.
 */
function observedTts(inner, sink, clock, steady = false) {
  let seed = 777;
  return {
    name: inner.name,
    on: inner.on,
    async connect(signal) {
      const stream = await inner.connect(signal);
      const record = { words: [], firstAudioAt: undefined, firstAudioContextTime: undefined, audioS: 0, firstLoudS: undefined };
      sink.push(record);
      return {
        sendText: (t) => stream.sendText(t),
        end: () => stream.end(),
        close: () => stream.close(),
        async *events(s) {
          for await (const e of stream.events(s)) {
            if (e.kind === "audio") {
              if (steady) {
                for (let i = 0; i < e.pcm.length; i++) {
                  seed = (seed * 16807) % 2147483647;
                  e.pcm[i] = 0.087 * ((seed / 2147483647) * 2 - 1);
                }
              }
              if (record.firstAudioAt === undefined) {
                record.firstAudioAt = performance.now();
                // Read directly: rendering has reached at most this far when the byte is handled.
                record.firstAudioContextTime = clock.context.currentTime;
              }
              if (record.firstLoudS === undefined) {
                const i = e.pcm.findIndex((x) => Math.abs(x) >= 0.01);
                if (i >= 0) record.firstLoudS = record.audioS + i / e.sampleRate;
              }
              record.audioS += e.pcm.length / e.sampleRate;
            } else {
              record.words.push({ text: e.text, startS: e.startS, stopS: e.stopS });
            }
            yield e;
          }
        },
      };
    },
  };
}

/** Sample queries over a recording window, with skipped quanta treated as unknown. */
export function windowView(rec, sampleRate) {
  const index = (t) => Math.round(t * sampleRate) - rec.startFrame;
  const known = (i) => rec.known[Math.floor(i / 128)] === 1;
  const loud = (i, threshold = SILENT) => known(i) && Math.abs(rec.samples[i]) >= threshold;
  return {
    index,
    timeOf: (i) => (rec.startFrame + i) / sampleRate,
    length: rec.samples.length,
    known,
    /** First index in [from, to) where `run` known samples in a row are below SILENT; -1 if none. */
    firstQuietRun(from, to, run) {
      for (let i = Math.max(0, from), quiet = 0; i < Math.min(to, rec.samples.length); i++) {
        quiet = known(i) && Math.abs(rec.samples[i]) < SILENT ? quiet + 1 : known(i) ? 0 : quiet;
        if (quiet === run) return i - run + 1;
      }
      return -1;
    },
    firstLoud(from, to, threshold = SILENT) {
      for (let i = Math.max(0, from); i < Math.min(to, rec.samples.length); i++) if (loud(i, threshold)) return i;
      return -1;
    },
    lastLoud(from, to, threshold = SILENT) {
      for (let i = Math.min(to, rec.samples.length) - 1; i >= Math.max(0, from); i--) if (loud(i, threshold)) return i;
      return -1;
    },
    countLoud(from, to) {
      let n = 0;
      for (let i = Math.max(0, from); i < Math.min(to, rec.samples.length); i++) if (loud(i)) n++;
      return n;
    },
    unknownQuanta(from, to) {
      let n = 0;
      for (let q = Math.max(0, Math.floor(from / 128)); q < Math.min(rec.known.length, Math.ceil(to / 128)); q++) if (!rec.known[q]) n++;
      return n;
    },
  };
}
