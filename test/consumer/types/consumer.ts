/**
 * An app's view of bargein's types: this file is only type-checked (never
 * run), against the built dist/types, resolved as `bargein`,
 * `bargein/advanced` and `bargein/testing` through the package.json `exports` (the package's own
 * name resolves to the repo root from inside it). The tsconfig beside it has
 * the app settings the types must compile under: `lib: ["ES2022", "DOM"]`,
 * `strict`, `skipLibCheck: false`, no @types.
 *
 * If a change to the public types breaks an app, it breaks this file: a new
 * session event without a handler here, or an event payload without a name.
 */
import {
  AtCapacityError,
  BargeinError,
  ConnectionClosedError,
  MicrophoneError,
  VoiceSession,
  kyutaiStt,
  kyutaiTts,
  openaiChat,
  type InterruptionEvent,
  type BackchannelEvent,
  type LoadProgressEvent,
  type DeviceChangeEvent,
  type InputDeviceEvent,
  type AudioLevels,
  type OverloadEvent,
  type ReconnectedEvent,
  type ReconnectingEvent,
  type SessionErrorEvent,
  type SessionMetrics,
  type SessionStateEvent,
  type TranscriptEvent,
  type TurnMetrics,
  type VadEvent,
  type VoiceSessionEvents,
  type MuteEvent,
  type WarningEvent,
  type ToolCallEvent,
  type ToolDefinition,
  type ToolHandler,
  type ToolResultEvent,
} from "bargein";
// The building blocks: bargein/advanced, beside the app entry.
import {
  Microphone,
  Player,
  QuestManager,
  Quest,
  Uplink,
  VadWorker,
  isAbort,
  type Listener,
  type MicrophoneEcho,
  type MicrophoneSwapGap,
  type MicrophoneEvents,
  type MicrophoneFrame,
  type MicrophoneGap,
  type MicrophoneLevel,
  type MicrophoneStarted,
  type PlayerEnded,
  type PlayerEvents,
  type PlayerFlushed,
  type PlayerStarted,
  type PlayerUnderrun,
  type UplinkEnded,
  type UplinkEvents,
  type UplinkOverload,
  type VadLoadProgress,
  type VadReady,
  type VadMisfire,
  type VadSpeechQuiet,
  type VadTurnPrediction,
  type VadSpeechResumed,
  type VadSpeechVoiced,
  type VadPauseLapse,
  type VadOnsetPause,
  type VadProbability,
  type VadJudged,
  type VadSpeechEnd,
  type VadSpeechRealStart,
  type VadSpeechStart,
  type VadWorkerEvents,
  type ToolCall,
  type LlmOutput,
  type AudioStateEvent,
} from "bargein/advanced";
import { fakeLlm, fakeStt, fakeTts, scriptedQuest } from "bargein/testing";
import { useVoiceSession, type UseVoiceSessionResult } from "bargein/react";

// bargein/react's types need no @types/react.
export function VoicePanel(): string {
  const voice: UseVoiceSessionResult = useVoiceSession({
    stt: kyutaiStt({ urls: "wss://stt.example/" }),
    llm: openaiChat({ url: "https://llm.example/v1", model: "m" }),
    tts: kyutaiTts({ urls: "wss://tts.example/" }),
  });
  return `${voice.state} ${voice.transcript.length} ${voice.muted} ${voice.levels().input.rmsDb}`;
}

// ─── Each event's payload has a name, and it is that payload's type ─────────

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

/** Every key of `Events` is listed in `Named`, with the payload's named type. */
type Names<Events, Named extends { [K in keyof Events]: unknown }> = {
  [K in keyof Events]: Equal<Events[K], Named[K]>;
};
type AllTrue<T> = Equal<T[keyof T], true>;

export type SessionPayloadsNamed = Expect<
  AllTrue<
    Names<
      VoiceSessionEvents,
      {
        state: SessionStateEvent;
        transcript: TranscriptEvent;
        vad: VadEvent;
        interruption: InterruptionEvent;
        backchannel: BackchannelEvent;
        turn: TurnMetrics;
        metrics: SessionMetrics;
        warning: WarningEvent;
        error: SessionErrorEvent;
        reconnecting: ReconnectingEvent;
        reconnected: ReconnectedEvent;
        progress: LoadProgressEvent;
        mute: MuteEvent;
        overload: OverloadEvent;
        toolCall: ToolCallEvent;
        toolResult: ToolResultEvent;
        devicechange: DeviceChangeEvent;
        inputDevice: InputDeviceEvent;
        audioState: AudioStateEvent;
      }
    >
  >
>;
export type MicrophonePayloadsNamed = Expect<
  AllTrue<
    Names<
      MicrophoneEvents,
      {
        frame: MicrophoneFrame;
        level: MicrophoneLevel;
        started: MicrophoneStarted;
        ended: undefined;
        gap: MicrophoneGap;
        echo: MicrophoneEcho;
        swapGap: MicrophoneSwapGap;
      }
    >
  >
>;
export type PlayerPayloadsNamed = Expect<
  AllTrue<Names<PlayerEvents, { started: PlayerStarted; underrun: PlayerUnderrun; ended: PlayerEnded; flushed: PlayerFlushed }>>
>;
export type VadPayloadsNamed = Expect<
  AllTrue<
    Names<
      VadWorkerEvents,
      {
        speechStart: VadSpeechStart;
        speechRealStart: VadSpeechRealStart;
        speechEnd: VadSpeechEnd;
        misfire: VadMisfire;
        pauseLapse: VadPauseLapse;
        speechQuiet: VadSpeechQuiet;
        turnPrediction: VadTurnPrediction;
        speechResumed: VadSpeechResumed;
        speechVoiced: VadSpeechVoiced;
        onsetPause: VadOnsetPause;
        probability: VadProbability;
        judged: VadJudged;
        progress: VadLoadProgress;
        ready: VadReady;
        loadError: BargeinError;
        error: BargeinError;
      }
    >
  >
>;
export type UplinkPayloadsNamed = Expect<AllTrue<Names<UplinkEvents, { overload: UplinkOverload; ended: UplinkEnded }>>>;

// The DOM's ErrorEvent is still the DOM's: bargein's payload does not shadow it.
export type DomErrorEventIntact = Expect<Equal<ErrorEvent["message"], string>>;

// ─── A session, with every event handled ────────────────────────────────────

export async function app(log: (line: string) => void): Promise<void> {
  const session = new VoiceSession({
    stt: kyutaiStt({ urls: ["wss://stt.example/"], token: async () => "t" }),
    llm: openaiChat({ url: "https://llm.example/v1", model: "m" }),
    tts: kyutaiTts({ urls: "wss://tts.example/" }),
    instructions: "Be brief.",
    bargeIn: { minSpeechMs: 200, backchannels: { maxMs: 700 } },
    uplink: { budgetMs: 500, policy: "end" },
    meter: true,
  });

  // A handler for every event: adding an event to VoiceSessionEvents fails here until it is handled.
  const handlers: { [K in keyof VoiceSessionEvents]: Listener<VoiceSessionEvents[K]> } = {
    state: ({ state, previous }: SessionStateEvent) => log(`${previous} → ${state}`),
    transcript: (e: TranscriptEvent) => log(`${e.role}${e.final ? "" : "…"}: ${e.text}`),
    vad: (e: VadEvent) => log(e.kind === "meter" ? `level ${e.level.toFixed(2)}` : `${e.kind} at ${e.contextTime}`),
    interruption: (e: InterruptionEvent) => log(`${e.reason}: heard "${e.heardText}" (${e.heardMs} ms)`),
    backchannel: (e: BackchannelEvent) => log(`backchannel "${e.words.join(" ")}" (${e.speechMs} ms)`),
    turn: (m: TurnMetrics) => log(`turn ${m.turn}: ${m.speechEndToFirstAudibleMs ?? "?"} ms`),
    metrics: (m: SessionMetrics) => log(`${m.turns} turns, llm queue ${m.llm.queued}`),
    warning: (w: WarningEvent) => log(`${w.service}: ${w.message}`),
    error: ({ error, fatal }: SessionErrorEvent) => log(`${fatal ? "fatal " : ""}${error.name}: ${error.message}`),
    reconnecting: (e: ReconnectingEvent) => log(`${e.service} attempt ${e.attempt} in ${e.delayMs} ms (${e.reason})`),
    reconnected: (e: ReconnectedEvent) => log(`${e.service} back after ${e.attempts}`),
    progress: (e: LoadProgressEvent) => log(`loading ${e.asset}: ${e.loaded} of ${e.total || "?"} bytes`),
    overload: (e: OverloadEvent) => log(`${e.service} ${e.reason}: ${e.pendingBytes}/${e.budgetBytes} (${e.policy})`),
    mute: (e: MuteEvent) => log(e.muted ? "muted" : "unmuted"),
    toolCall: ({ messageId, call }: ToolCallEvent) => log(`${messageId} calls ${call.name}(${call.rawArguments})`),
    toolResult: (e: ToolResultEvent) => log(`${e.name}: ${e.status} ${e.output ?? ""} in ${e.durationMs} ms`),
    devicechange: (e: DeviceChangeEvent) => log(`${e.inputs.length} inputs, ${e.outputs.length} outputs${e.inputLost ? ", input lost" : ""}`),
    inputDevice: (e: InputDeviceEvent) => log(`input ${e.deviceId ?? "default"} (${e.reason}), ${e.gapMs} ms lost`),
    audioState: (e: AudioStateEvent) => log(e.state === "running" ? "audio back" : `audio ${e.state}: tap to resume`),
  };
  const levels: AudioLevels = session.getLevels({ bins: true });
  log(`${levels.input.rmsDb} dB in, ${levels.output.bins?.length ?? 0} bins out`);
  await session.setInputDevice(undefined);
  await session.setOutputDevice("");
  const unsubscribe: Array<() => void> = [];
  for (const name of Object.keys(handlers) as Array<keyof VoiceSessionEvents>) {
    unsubscribe.push(session.on(name, handlers[name] as Listener<VoiceSessionEvents[typeof name]>));
  }
  // Payloads are inferred from the event's name, too.
  session.on("state", (e) => {
    const s: "idle" | "connecting" | "listening" | "reconnecting" | "user_speaking" | "bot_thinking" | "bot_speaking" = e.state;
    void s;
  });

  // once / off.
  const firstFinal = (e: TranscriptEvent) => log(`first: ${e.text}`);
  const stopFirst: () => void = session.once("transcript", firstFinal);
  session.off("transcript", firstFinal);
  stopFirst();
  const nextTurn: Promise<TurnMetrics> = session.once("turn");
  const withSignal: Promise<SessionErrorEvent> = session.once("error", AbortSignal.timeout(10_000));
  void nextTurn;
  void withSignal;
  // @ts-expect-error: the listener's payload must match the event's.
  session.off("turn", (e: TranscriptEvent) => log(e.text));
  // @ts-expect-error: no such event.
  session.on("nope", () => {});

  try {
    await session.start();
    const m: SessionMetrics = session.metrics;
    const p50: number | undefined = m.lastTurn?.speechEndToFirstTokenMs;
    const gaps: number = m.captureGaps.count;
    const erle: number | undefined = m.echo?.erleDb;
    log(`${p50} ${gaps} ${erle} ${m.uplink?.admissionRejects ?? 0} ${m.sttReplayedSamples}`);
    for (const message of session.history) log(`${message.role}: ${message.text}`);
    await session.interrupt();
  } catch (err) {
    if (isAbort(err)) return;
    // By name (survives minification and two copies of the SDK)…
    if (err instanceof Error && err.name === "MicrophoneError") log("microphone");
    // …or by class, which narrows to the subclass's own fields.
    if (err instanceof MicrophoneError) {
      const reason: "denied" | "not-found" | "in-use" | "unsupported" | "ended" | "unknown" = err.reason;
      log(reason);
    } else if (err instanceof ConnectionClosedError) {
      const code: number | undefined = err.closeCode;
      log(`${err.service} closed ${code}`);
    } else if (err instanceof AtCapacityError || (err instanceof BargeinError && err.code === "at_capacity")) {
      log(`${err.service} at capacity (${err.url})`);
    } else {
      throw err;
    }
  } finally {
    for (const off of unsubscribe) off();
    await session.stop();
  }
}

// ─── The building blocks' events ────────────────────────────────────────────

export async function blocks(context: AudioContext, log: (line: string) => void): Promise<void> {
  const mic = new Microphone({ context, assetsPath: "/bargein/", uplink: { sampleRate: 24000, format: "f32" } });
  const onFrame = (f: MicrophoneFrame) => log(`${f.sampleIndex}`);
  mic.on("frame", onFrame);
  mic.off("frame", onFrame);
  mic.on("gap", (g: MicrophoneGap) => log(`${g.frames}`));
  mic.once("ended", () => log("ended"));
  const started: MicrophoneStarted = await mic.once("started");
  log(`${started.sampleRate}`);

  const player = new Player({ context, assetsPath: "/bargein/" });
  const onFlushed = (f: PlayerFlushed) => log(`${f.dropped}`);
  player.once("flushed", onFlushed);
  player.off("flushed", onFlushed);
  const ended: PlayerEnded = await player.once("ended", AbortSignal.timeout(1000));
  log(`${ended.samples}`);

  const vad = new VadWorker({ assetsPath: "/bargein/" });
  const onStart = (e: VadSpeechStart) => log(`${e.probability}`);
  vad.on("speechStart", onStart);
  vad.once("speechEnd", (e: VadSpeechEnd) => log(`${e.audioStartIndex}`));
  vad.off("speechStart", onStart);
  vad.on("error", (e: BargeinError) => log(e.code));
  await vad.start();
  await vad.stop();

  const uplink = new Uplink({ sendAudio: (pcm) => pcm.length * 2, bufferedAmount: 0 }, { sampleRate: 16000, bytesPerSample: 2 });
  uplink.once("ended", (e: UplinkEnded) => log(e.reason));
  const onOverload = (e: UplinkOverload) => log(`${e.pendingBytes}`);
  uplink.on("overload", onOverload);
  uplink.off("overload", onOverload);
  uplink.close();

  // Without esnext's disposable lib there is no `await using`; the named methods do the same.
  const quests = new QuestManager();
  const quest = new Quest("llm", () => 1, async (n: number, signal: AbortSignal) => signal.throwIfAborted());
  await quests.add(quest);
  await quest.remove();
  await quests.dispose();
}

// ─── bargein/testing ────────────────────────────────────────────────────────

export async function withFakes(): Promise<SessionMetrics> {
  const stt = fakeStt({ sampleRate: 16000 });
  const session = new VoiceSession({ stt: stt.provider, llm: fakeLlm({ reply: () => "Hello there." }).provider, tts: fakeTts().provider });
  const heard = session.once("transcript");
  stt.word("hi");
  await heard;
  void scriptedQuest;
  return session.metrics;
}

// ─── Tool calls ─────────────────────────────────────────────────────────────

export async function withTools(log: (line: string) => void): Promise<void> {
  const getTime: ToolDefinition = { name: "get_time", description: "The time now.", parameters: { type: "object", properties: {} } };
  const llm = fakeLlm({
    reply: (messages) => (messages.at(-1)?.role === "tool" ? `It is ${messages.at(-1)!.content}.` : { toolCalls: [{ name: "get_time", arguments: {} }] }),
  });
  const session = new VoiceSession({ stt: fakeStt().provider, llm: llm.provider, tts: fakeTts().provider, tools: { definitions: [getTime], timeoutMs: 5000 } });
  const handler: ToolHandler = async (call: ToolCall, { signal }: { signal: AbortSignal }) => {
    signal.throwIfAborted();
    return { time: new Date().toISOString(), asked: call.arguments };
  };
  const removeHandler: () => void = session.handleTool("get_time", handler);
  session.on("toolCall", (e) => log(e.call.name));
  removeHandler();
  // What a provider's stream yields: text, and the calls last.
  for await (const piece of llm.provider.stream([{ role: "user", content: "what time is it" }], undefined, { tools: [getTime] })) {
    const out: LlmOutput = piece;
    log(typeof out === "string" ? out : out.calls.map((c) => c.name).join());
  }
}
