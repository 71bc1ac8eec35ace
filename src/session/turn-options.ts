/** `VoiceSessionOptions.turn`: when the user's turn ends (public; apart from types.ts for its length). */
import type { HoldUnfinishedOptions } from "./turn-end.js";
import type { TurnDetectorOptions } from "../vad/turn-detector.js";

/**
 * `turn.detector`: the app's own end-of-turn model, and how its verdicts are taken.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface TurnDetectorSessionOptions extends TurnDetectorOptions {
  /**
   * A verdict at or over this (0..1) says the turn is over.
   * @defaultValue 0.5
   */
  threshold?: number;
  /**
   * How long (ms) a turn the model calls unfinished waits for more speech before it is answered anyway.
   * @defaultValue 700
   */
  holdMs?: number;
}

/**
 * `turn.preemptive`: `true` for the defaults, or these.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface PreemptiveOptions {
  /**
   * The VAD's quiet (ms) after which the reply is prepared, held; less than `vad.redemptionMs`.
   * @defaultValue 160
   */
  quietMs?: number;
}

/**
 * `turn.serviceEndOfTurn`: `true` for the defaults, or these.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface ServiceEndOfTurnOptions {
  /**
   * The VAD's quiet (ms) the service's end of turn waits for, so the VAD has seen the voice stop.
   * @defaultValue 100
   */
  quietMs?: number;
}

/**
 * `turn`: when the user's turn ends.
 * @see docs/guides/barge-in-and-turn-taking.md
 */
export interface TurnOptions {
  /**
   * End the user's turn when the STT's pause probability reaches this (0..1),
   * if the STT gives one and the user said a word. Set to 1.01 to end turns
   * on the VAD's speech end only.
   * @defaultValue 0.8
   */
  pauseThreshold?: number;
  /**
   * How long to wait (ms) for the STT to return the last words after a turn
   * ends; with a `realtime` service 5000, as it transcribes after the commit.
   * @defaultValue 1500
   */
  flushTimeoutMs?: number;
  /**
   * After the VAD's end of speech and the STT's flush, a turn whose last word
   * leaves it unfinished ("…and", "…to the", "um") waits `holdMs` (700) more
   * for the user to go on, and one the user is already continuing goes on;
   * any other turn is answered at once. With it, a shorter `vad.redemptionMs`
   * answers finished turns sooner without splitting hesitations. `true` or
   * `{ holdMs, words }` (`words`: the last words that leave a turn
   * unfinished, default `CONTINUATION_WORDS_EN`). `false` turns it off.
   * On by default, with the VAD's short silence (`vad.redemptionMs`).
   * @defaultValue true
   */
  holdUnfinished?: boolean | HoldUnfinishedOptions;
  /**
   * Take the STT service's own end of turn, where it gives one (Deepgram
   * Flux's `EndOfTurn`, AssemblyAI's `end_of_turn`; not an eager one): the
   * user's turn ends as soon as the VAD has heard `quietMs` (100) of quiet,
   * without waiting for `vad.redemptionMs`, and a turn the service ended is
   * not held by `holdUnfinished` (the service judged its words complete). A
   * held turn it ends is answered at once. Voice the VAD hears before its
   * quiet keeps the turn going. `true` or `{ quietMs }`; `false` turns it off
   * (the VAD's silence and `holdUnfinished` alone decide).
   * Services without such an event (Kyutai, Deepgram Nova) are not affected.
   * @defaultValue true
   */
  serviceEndOfTurn?: boolean | ServiceEndOfTurnOptions;
  /**
   * The preemptive reply: once the VAD's utterance has been quiet `quietMs`
   * (160), before `vad.redemptionMs` ends it, the STT is flushed and, for
   * words that read as finished (see `holdUnfinished`), the reply is started
   * but held: its LLM request and TTS run, nothing of it plays or shows. The
   * utterance's end (no voice since) releases it at once, its audio often
   * ready; the voice coming back drops it (its streams are cancelled, counted
   * in `metrics.preemptive.dropped`; none of it was heard) and the turn goes
   * on. An STT service's eager end of turn (Flux's `EagerEndOfTurn`) starts
   * it too, for its words; its `TurnResumed` drops it. At most one a turn. `true` or `{ quietMs }` (less than
   * `vad.redemptionMs`); not with `realtime`.
   * @defaultValue false
   */
  preemptive?: boolean | PreemptiveOptions;
  /**
   * A turn ended too soon and resumed before its reply was heard stays one
   * turn. When the user's speech interrupts a reply none of which was audible
   * yet, or that became audible no more than 100 ms before their onset
   * (`UNHEARD_LEAD_MS`, resumed-turn.ts), the reply is cancelled as in
   * any barge-in, and the words the user goes on with join their last
   * message: one user message (its `transcript` is revised, same id), one
   * reply to all of it. The never-heard reply's empty message leaves the
   * history (one that called tools stays), and its `interruption` event has
   * `userTurnResumed: true`. Not for a reply to `sendText()`, nor once any of
   * the reply was heard (the user heard the bot start: that is a barge-in).
   * `false`: the words go on as a new user message.
   * @defaultValue true
   */
  resumeUnheard?: boolean;
  /**
   * Your own end-of-turn model (a Smart Turn ONNX file, say), run in the VAD
   * worker on each utterance's audio at its end: `{ module, options,
   * threshold, holdMs }`. `module` is the URL of an ES module exporting
   * `createTurnDetector` (resolved against `assetsPath`); it is given the
   * worker's onnxruntime-web and your `options`. Its verdict decides whether
   * the turn is held `holdMs` for more speech (under `threshold`) instead of
   * the last word (`holdUnfinished`); a flush that comes before it waits for
   * it (up to `holdMs`), and a held turn it calls over is answered at once. A
   * model that fails to load fails `start()` with an AssetLoadError naming
   * it; one that throws later gives a `warning`, and the words decide. The
   * contract: README, "Your own turn detector". Not with `realtime`, nor
   * with your own `components` (their VAD's `turnPrediction` events are
   * taken as they come).
   */
  detector?: TurnDetectorSessionOptions;
  /**
   * A reply whose LLM and TTS both send nothing for this long (ms) while it is
   * still being generated is cut off: a `warning` names the stalled service,
   * an `interruption` with reason "stall" keeps what was heard, and the
   * session listens again.
   * @defaultValue 8000
   */
  replyStallMs?: number;
  /**
   * Who ends the user's turn. "vad": the VAD's speech end or the STT's
   * pause. "push-to-talk": the app's button. The microphone is muted except
   * between `startTurn()` and `endTurn()`, and only `endTurn()` ends the
   * turn. Speech while the button is held over the bot barges in as usual.
   * @defaultValue "vad"
   */
  mode?: "vad" | "push-to-talk";
}
