/**
 * Every default of bargein's public options, in one place, grouped as the
 * options are: `DEFAULTS.turn.flushTimeoutMs` is `turn.flushTimeoutMs`'s
 * default. An option that is on/off and also takes settings (`true` or
 * `{ holdMs }`) has its own default as `enabled` beside its settings'.
 * Groups named after a class (`vadWorker`, `microphone`, `player`, the
 * providers) are that class's or factory's options, used on its own.
 *
 * The option types' `@defaultValue` tags must agree with this object;
 * `scripts/doc-drift.mjs` (in `npm test`) checks that they do.
 */

/** vad-web 0.0.31's FrameProcessor defaults: a standalone VadWorker keeps vad-web's behaviour. */
const VAD_WEB = {
  positiveSpeechThreshold: 0.3,
  negativeSpeechThreshold: 0.25,
  redemptionMs: 1400,
  minSpeechMs: 400,
  preSpeechPadMs: 800,
  submitUserSpeechOnPause: false,
} as const;

/** The VadWorker's own settings beyond vad-web's, shared by the session's VAD. */
const VAD_SHARED = {
  model: "v5",
  speechEndAudio: false,
  /**
   * Real voices that begin with a fricative or a breath reach Silero's threshold late; the cue acts
   * sooner. Chosen by the curve of `npm run bench -- noise` (bench/results/noise.json, `curve`): no
   * setting met both goals. Silencing at the rise is the only one that silences voices in time, and
   * it pauses the bot at every room sound; of the settings that leave room sounds no audible pause,
   * this one dips the bot for the least time and silences voices as soon as the others (at Silero's
   * speech start). Holding the duck (no quick release) ducks every voice sooner but dips room sounds
   * longer; `voicing` and `resetModel` silence some voices sooner but pause the bot at room sounds.
   */
  onsetPause: { enabled: true, action: "duck", duckDb: 12, silenceProbability: 0.15, quickReleaseMs: 96, voicing: 0, resetModel: false },
  meterIntervalMs: 100,
  loadTimeoutMs: 30_000,
} as const;

/** The speech that confirms a barge-in (also the session VAD's `minSpeechMs`). */
const BARGE_IN_MIN_SPEECH_MS = 200;

/** How long a turn whose words (or whose turn detector) say it is unfinished waits for more. */
const HOLD_MS = 700;

/** A Kyutai (moshi-server) instance: what both of its services take. */
const KYUTAI_SERVICE = {
  maxMessageBytes: 1 << 20,
  /**
   * Each instance must say Ready within this. Unmute's 0.5 s fails healthy
   * instances: a server that must start a new recogniser first (a second
   * stream, a reconnect) says Ready seconds later on a loaded machine. This
   * leaves a wide margin over that, while a dead instance is still given up on.
   */
  startupTimeoutMs: 10_000,
  maxTries: 3,
} as const;

/** A hosted service across the internet: a TLS handshake and the service's own start. */
const HOSTED_CONNECT_TIMEOUT_MS = 5000;
const HOSTED_STARTUP_TIMEOUT_MS = 3000;

export const DEFAULTS = deepFreeze({
  /** `VoiceSessionOptions.turn`. */
  turn: {
    mode: "vad",
    pauseThreshold: 0.8,
    flushTimeoutMs: 1500,
    /**
     * With a `realtime` service: it transcribes the committed turn after the
     * commit (gpt-4o-transcribe: often over a second), and the turn's words
     * are what the turn machine replies to.
     */
    realtimeFlushTimeoutMs: 5000,
    replyStallMs: 8000,
    resumeUnheard: true,
    holdUnfinished: { enabled: true, holdMs: HOLD_MS },
    /**
     * The VAD's quiet a service's end of turn waits for: about three 32 ms
     * frames, so the VAD has seen the voice stop (the service may judge from
     * words alone) and a breath's dip mid-word is not taken for the end.
     */
    serviceEndOfTurn: { enabled: true, quietMs: 100 },
    /**
     * Five VAD frames: under `vad.redemptionMs` by enough that the reply's LLM
     * and TTS get a head start; not so short that every breath starts one.
     */
    preemptive: { enabled: false, quietMs: 160 },
    detector: { threshold: 0.5, holdMs: HOLD_MS },
  },
  /** `VoiceSessionOptions.bargeIn`. */
  bargeIn: {
    enabled: true,
    minSpeechMs: BARGE_IN_MIN_SPEECH_MS,
    /** One 32 ms VAD frame: less and `speechRealStart` could never fire. */
    minSpeechFloorMs: 32,
    confirmByWords: true,
    backchannels: { enabled: false, minWords: 3, maxMs: 700, wordWaitMs: 700 },
  },
  /**
   * `VoiceSessionOptions.vad`: vad-web's names, but the session's own
   * `redemptionMs` and `minSpeechMs` (see `vadWorker` for a VadWorker alone).
   */
  vad: {
    ...VAD_WEB,
    ...VAD_SHARED,
    /**
     * vad-web waits 1.4 s of quiet, tuned for whole utterances; a conversation
     * wants the turn back sooner. 300 ms with `turn.holdUnfinished` holding
     * turns whose words are unfinished was chosen by `npm run bench -- turn`
     * (bench/results/turn.json): sooner answers, fewer premature ends.
     */
    redemptionMs: 300,
    /** The session's VAD confirms what confirms a barge-in: one setting. */
    minSpeechMs: BARGE_IN_MIN_SPEECH_MS,
    /**
     * The session listens once the microphone, the worklets and the STT are up; a level-based
     * fallback decides until Silero is ready (on a cold page that is most of the bytes of a first
     * start: `npm run bench -- coldstart`).
     */
    waitForModel: false,
  },
  /** `VoiceSessionOptions.echoGuard`. */
  echoGuard: {
    /** On when the session builds its own audio; off with the app's `components` (no capture worklet to run in). */
    enabled: true,
    tailMs: 256,
    wordWindowMs: 1500,
    cleanUplink: false,
  },
  /** `VoiceSessionOptions.uplink`, and the Uplink class's options. */
  uplink: {
    budgetMs: 500,
    /** The Uplink class's; the session uses "gap" when its STT supports gaps. */
    policy: "end",
    observe: false,
    replayMs: 3000,
    retryMs: 10,
  },
  /** `VoiceSessionOptions.reconnect`: `backoffReconnectPolicy()`'s options. */
  reconnect: {
    /** At once (the user may be mid-word, and the replay covers only `uplink.replayMs`), then with backoff. */
    delaysMs: [0, 300, 1000],
    jitter: 0.2,
    stableMs: 10_000,
  },
  /** `VoiceSessionOptions.llmAdmission`, and LlmAdmission's options. */
  llmAdmission: { concurrency: 1, maxQueue: 8, deadlineMs: 10_000 },
  /** `VoiceSessionOptions.tools`. */
  tools: { timeoutMs: 10_000, maxRoundsPerReply: 5 },
  /** `VoiceSessionOptions.audio`. */
  audio: { prebufferMs: 40, outputRoute: "context", sessionType: "auto" },
  /** `VoiceSessionOptions`' own switches. */
  session: { meter: false, releaseMicOnHide: true },
  /** A VadWorker made by the app: vad-web's defaults, so it behaves as vad-web does; its start() waits for the model. */
  vadWorker: { ...VAD_WEB, ...VAD_SHARED, waitForModel: true },
  /** Microphone's options, used on its own. */
  microphone: { vad: true, meterIntervalMs: 50, uplink: { format: "s16", frameMs: 20 } },
  /** Player's options, used on its own. */
  player: { prebufferMs: 40, capacitySeconds: 10 },
  /** The providers' options, by factory. */
  providers: {
    kyutaiStt: { ...KYUTAI_SERVICE, path: "/api/asr-streaming", pauseHead: 2, warmupSteps: 12, flushPaddingS: 0.5 },
    kyutaiTts: {
      ...KYUTAI_SERVICE,
      path: "/api/tts_streaming",
      backoff: { firstDelayMs: 50, factor: 1.5, maxDelayMs: 1000, tries: 5 },
    },
    deepgramStt: {
      urls: "wss://api.deepgram.com",
      tokenKind: "bearer",
      model: "nova-3",
      language: "en",
      sampleRate: 16_000,
      vadEvents: true,
      keepAliveMs: 5000,
      maxMessageBytes: 256 * 1024,
      startupTimeoutMs: HOSTED_STARTUP_TIMEOUT_MS,
      maxTries: 3,
    },
    assemblyaiStt: {
      urls: "wss://streaming.assemblyai.com",
      speechModel: "universal-streaming-english",
      sampleRate: 16_000,
      formatTurns: false,
      chunkMs: 50,
      flushGraceMs: 800,
      maxMessageBytes: 256 * 1024,
      startupTimeoutMs: HOSTED_STARTUP_TIMEOUT_MS,
      maxTries: 3,
    },
    elevenlabsTts: {
      url: "wss://api.elevenlabs.io",
      modelId: "eleven_flash_v2_5",
      outputFormat: "pcm_24000",
      maxMessageBytes: 1 << 20,
      connectTimeoutMs: HOSTED_CONNECT_TIMEOUT_MS,
    },
    cartesiaTts: {
      url: "wss://api.cartesia.ai",
      modelId: "sonic-3",
      version: "2025-04-16",
      language: "en",
      encoding: "pcm_s16le",
      sampleRate: 24_000,
      maxMessageBytes: 1 << 20,
      connectTimeoutMs: HOSTED_CONNECT_TIMEOUT_MS,
    },
    openaiChat: { maxEventBytes: 256 * 1024, responseTimeoutMs: 10_000 },
    websocketLlm: { tokenIn: "query", tokenParam: "auth_id", subprotocolPrefix: "bearer.", maxMessageBytes: 256 * 1024, connectTimeoutMs: HOSTED_CONNECT_TIMEOUT_MS },
    openaiRealtime: { turnDetection: "client", transcriptionModel: "gpt-4o-transcribe", connectTimeoutMs: HOSTED_CONNECT_TIMEOUT_MS },
    geminiLive: { turnDetection: "client", connectTimeoutMs: HOSTED_CONNECT_TIMEOUT_MS },
  },
} as const);

export type Defaults = typeof DEFAULTS;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
