/**
 * The turn machine's types: its configuration, state, events and effects
 * (turn-machine.ts is the machine). Apart, so that the machine's helper
 * modules can name them without an import circle.
 */
import type { BackchannelPolicy } from "./backchannel.js";
import type { BargeIn, PlaybackEffect } from "./barge-in.js";
import type { FloorPhase } from "./floor.js";
import type { HeldWord } from "./held-words.js";
import type { TurnDetectorPolicy, TurnEndPolicy } from "./turn-end.js";
import type { InterruptionEvent, SessionState } from "./types.js";

export interface TurnConfig {
  /** `bargeIn.enabled`: when false, speech while the bot has the floor is ignored. */
  bargeInEnabled: boolean;
  /** `bargeIn.confirmByWords`: an STT word while a barge-in is pending confirms it. */
  confirmByWords: boolean;
  /** `turn.pauseThreshold`: an STT pause probability at or above it ends the user's turn (once they said a word). */
  pauseThreshold: number;
  /** `turn.mode` "push-to-talk": only the app's `pushEnd` ends the user's turn, not the VAD or the STT's pause. */
  pushToTalk?: boolean;
  /**
   * With the echo guard on (`echoGuard.wordWindowMs`; undefined when off): an
   * STT word that comes while the bot is audible, or this soon after, counts
   * only if the VAD heard real speech (`minSpeechMs` of frames the guard calls
   * the user's) within this many ms. Until then it is held; unvouched, it is
   * the bot's echo misheard (see `heldWords`).
   */
  vouchWordsMs?: number;
  /** `bargeIn.backchannels`: a listener's "yeah" over the bot does not interrupt (backchannel.ts). Undefined: off. */
  backchannel?: BackchannelPolicy;
  /** `turn.holdUnfinished`: a turn whose last word leaves it unfinished waits for more speech (turn-end.ts). Undefined: off. */
  turnEnd?: TurnEndPolicy;
  /**
   * `turn.serviceEndOfTurn`: the STT service's own end of turn (Deepgram Flux
   * `EndOfTurn`, AssemblyAI `end_of_turn`) ends the user's turn once the VAD
   * has heard `quietMs` of quiet, without waiting for `vad.redemptionMs`, and
   * a turn it ends is not held for unfinished words. Undefined: off.
   */
  serviceEndOfTurn?: { quietMs: number };
  /**
   * `turn.preemptive`: once the VAD's utterance has been quiet `quietMs`
   * (its `speechQuiet`, before `vad.redemptionMs` ends it) the turn's words
   * are flushed and its reply is prepared, held (it does not play); the
   * utterance's end releases it, the voice coming back drops it. At most one
   * a turn. Undefined: off.
   */
  preemptive?: { quietMs: number };
  /**
   * `turn.resumeUnheard`: the user's speech cutting a reply to their spoken
   * turn before any of it reached them (resumed-turn.ts) resumes that turn: their words so far
   * come back as the start of the new ones, and the message it ends with
   * replaces the last (`addUserMessage` with `resumed`).
   */
  resumeUnheard?: boolean;
  /**
   * `turn.detector`: the app's end-of-turn model judges each utterance at its
   * end (`turnPredicted`); its verdict decides whether a flushed turn is
   * held, instead of the last word. A flush that comes before the verdict
   * holds the turn for it (up to `holdMs`). Undefined: off.
   */
  turnDetector?: TurnDetectorPolicy;
}

/**
 * The VAD's utterance. `startAt`: when the current (or last) one began (ms),
 * and `startTime` the same onset on the audio clock (AudioContext s, the VAD
 * frame's), when the VAD gave it. `realAt`: when real speech (its
 * `speechRealStart`) last began or ended (ms): it vouches for the words near
 * it (held-words.ts).
 */
export type Voice =
  /**
   * No utterance goes on. `end`: where the last one really ended (its last
   * speech frame, AudioContext s), when the VAD said. `verdict`: the turn
   * detector's verdict on it (0..1) once it came, or "due" while the detector
   * is judging it (its `turnPredicted` follows).
   */
  | { readonly kind: "quiet"; readonly startAt: number; readonly startTime?: number; readonly realAt: number; readonly end?: number; readonly verdict?: number | "due" }
  /** Between the VAD's speech start and its real start (`bargeIn.minSpeechMs` of speech), end or misfire. */
  | { readonly kind: "onset"; readonly startAt: number; readonly startTime?: number; readonly realAt: number }
  /** Inside an utterance the VAD confirmed (its real start came, at `realAt`). */
  | { readonly kind: "real"; readonly startAt: number; readonly startTime?: number; readonly realAt: number };

/**
 * What judges the user's voice (the VAD's events): Silero's model, or, while
 * it loads (`vad.waitForModel: false`), the VAD worker's level-based fallback.
 * The level cannot tell the user from the bot's echo or a noise as loud, so
 * over the bot its speech pauses the bot but confirms nothing: the user's
 * words do (vad-source.ts). Both feed one speech detector in the worker, so
 * an utterance goes on across the hand-over.
 */
export type VadSource = { readonly kind: "model" } | { readonly kind: "level" };

/** What the user's turn has been through, in whichever state it is. */
export interface TurnMarks {
  /**
   * The user's speech cut a reply they never heard (TurnConfig.resumeUnheard):
   * the turn they go on with replaces their last message, and starts with its words.
   */
  readonly resumed?: true;
  /** The STT service judged this turn over (TurnConfig.serviceEndOfTurn): it is not held for unfinished words. */
  readonly serviceEnded?: true;
  /** The turn had its one preemptive reply (kept or dropped); cleared when a reply starts or the turn is flushed. */
  readonly speculated?: true;
}

/** The user's turn: its words are `TurnState.userWords`; this is what is under way with them. */
export type UserTurn =
  /** Nothing ends it yet: the user may speak, and words may come. */
  | (TurnMarks & { readonly kind: "open" })
  /**
   * The STT is being flushed for the turn's last words (an `endUserTurn`
   * effect is in flight, answered by `turnFlushed`). `heldUntil`: the turn
   * was held (see "held") when this flush began, and still is.
   */
  | (TurnMarks & { readonly kind: "ending"; readonly heldUntil?: number })
  /**
   * The preemptive flush (TurnConfig.preemptive): the utterance went quiet and
   * the STT is flushed for a held reply's words, while the turn goes on.
   * `voiceBack`: the voice came back meanwhile, so it starts no reply.
   */
  | (TurnMarks & { readonly kind: "flushing"; readonly speculated: true; readonly voiceBack?: true })
  /**
   * The turn was flushed and its words left it unfinished (turn-end.ts): it
   * is answered at `until` (ms) unless the user speaks again first.
   */
  | (TurnMarks & { readonly kind: "held"; readonly until: number });

/** The reply to the user, from its start to its end or interruption. */
export type ReplyState =
  | { readonly kind: "none" }
  /**
   * The turn's preemptive reply (TurnConfig.preemptive), being prepared for
   * `text`, held: nothing of it plays or shows until it is released.
   * `eager`: started on the STT service's eager end of turn (its words), not the VAD's quiet.
   */
  | { readonly kind: "speculative"; readonly generation: number; readonly text: string; readonly eager?: true }
  /**
   * The reply that holds the floor. `turnText`: the spoken user turn it
   * answers (not for a typed one): a turn resumed before it is heard goes on
   * from it. Once `audible`, `audibleAt`: when its first sample reached the
   * ear (AudioContext s), when the player said.
   */
  | ({ readonly kind: "playing"; readonly generation: number; readonly turnText?: string } & (
      | { readonly audible: false }
      | { readonly audible: true; readonly audibleAt?: number }
    ));

/** The STT stream. */
export type SttLink =
  | { readonly kind: "up" }
  /**
   * Up, and the last turn ended without the STT confirming its last words in
   * time: words that still come before its marker belong to that turn's message.
   */
  | { readonly kind: "owing" }
  /** The stream failed and is being reconnected (from `sttLost` to `sttConnected`); `owing` as above. */
  | { readonly kind: "down"; readonly owing?: true };

export interface TurnState {
  /** Who holds the floor. */
  readonly phase: FloorPhase;
  readonly stt: SttLink;
  /** What judges the voice: the session is degraded while the level does (`presentedDegraded`). */
  readonly vad: VadSource;
  readonly voice: Voice;
  readonly turn: UserTurn;
  readonly reply: ReplyState;
  readonly bargeIn: BargeIn;
  /** The words of the user's turn so far. */
  readonly userWords: readonly string[];
  /** The newest playback generation; each reply gets a new one, and so does each interruption (the fence). */
  readonly generation: number;
  /**
   * Words heard near the bot's audio with no real speech yet to vouch for
   * them (TurnConfig.vouchWordsMs): real speech soon after makes them the
   * user's, a misfire or the window passing makes them echo.
   */
  readonly heldWords: readonly HeldWord[];
}

export type InterruptReason = InterruptionEvent["reason"];

export type TurnEvent =
  /** start() began: the microphone, the VAD and the STT are being opened. */
  | { kind: "connect" }
  /** start() is done: the session listens; `vad`: what judges the voice now ("level" until the model is ready; absent: the model). */
  | { kind: "listen"; vad?: VadSource["kind"] }
  /** The VAD's model is ready: it judges the voice from now on, in the utterance under way if there is one. */
  | { kind: "vadReady" }
  /** `contextTime`: the onset's AudioContext time (s), when the VAD gives it. */
  | { kind: "speechStart"; pausedByWorker: boolean; at: number; contextTime?: number }
  /** `bargeIn.minSpeechMs` of speech frames since the speech start. */
  | { kind: "speechRealStart"; at: number }
  /**
   * `voiceEnd`: the utterance's last speech frame (AudioContext s), when the VAD says. `verdictDue`: the
   * turn detector will judge the utterance (a `turnPredicted` follows).
   */
  | { kind: "speechEnd"; at: number; voiceEnd?: number; verdictDue?: boolean }
  /** `at`: when it came (ms); without it, a misfire over the bot does not wait for its burst's words. */
  | { kind: "misfire"; resumedByWorker: boolean; at?: number }
  /** The VAD's confirmed utterance has been quiet `preemptive.quietMs` (it goes on); `voiceEnd`: its last speech frame (AudioContext s). */
  | { kind: "speechQuiet"; at: number; voiceEnd?: number }
  /** The voice came back after a `speechQuiet`, in the same utterance. */
  | { kind: "speechResumed"; at: number }
  /** The VAD's confirmed utterance has been voiced `bargeIn.backchannels.maxMs` from its onset (it goes on). */
  | { kind: "speechVoiced"; at: number }
  /**
   * The turn detector's verdict on the utterance that ended last: the probability that the turn is over,
   * or undefined when it could give none (its words decide).
   */
  | { kind: "turnPredicted"; at: number; probability: number | undefined }
  /**
   * An STT word; `echo`: the bot just said it (see echo-words.ts), so it is
   * the bot's own voice heard back; `nearBot`: the bot was audible within the
   * echo guard's word window (only with the guard on). `at`: when it arrived;
   * `spokenAt`: when its audio was captured, when known (same clock).
   */
  | { kind: "word"; text: string; at: number; spokenAt?: number; echo?: boolean; nearBot?: boolean }
  /** A new STT stream will hear the user's last word again (see SpeechReplay): it is taken back. */
  | { kind: "wordRetracted" }
  | { kind: "sttPause"; probability: number }
  /** The STT service judged the user's turn over (`eager`: likely, may resume; SttEvent "end-of-turn"). */
  | { kind: "sttEndOfTurn"; eager: boolean; at: number; text?: string }
  /** The STT service heard the user go on after its end of turn, or a new turn of speech begin. */
  | { kind: "sttTurnResumed" }
  | { kind: "sttMarker" }
  /** A new STT stream is up: its words are new speech. */
  | { kind: "sttConnected" }
  /** The STT stream failed; the link reconnects it (the user is not heard until `sttConnected`). */
  | { kind: "sttLost" }
  /**
   * The `endUserTurn` effect is done (at `at`, ms); `missed`: the STT did not confirm its last words in time.
   * `talkHeld`: with push-to-talk, whether the button is held as it comes (pressed again during the flush).
   */
  | { kind: "turnFlushed"; missed: boolean; at: number; talkHeld?: boolean }
  /** The first sample of reply `generation` is audible; `contextTime`: when it reaches the ear (AudioContext s), when known. */
  | { kind: "replyAudible"; generation: number; contextTime?: number }
  /** Reply `generation` has played out (or ended with no audio). */
  | { kind: "replyDone"; generation: number }
  | { kind: "interrupt"; reason: "api" | "stall" | "audio" }
  /** The time an `armTimer` effect asked for has come (the machine's one timer: a backchannel's word wait, a held turn). */
  | { kind: "timer"; at: number }
  /** sendText(): a user turn typed instead of spoken. */
  | { kind: "text"; text: string }
  /** Push-to-talk: the app's button went down (startTurn()) or up (endTurn()). */
  | { kind: "pushStart" }
  | { kind: "pushEnd" }
  /** stop(): the session is ending. */
  | { kind: "stop" }
  /** stop() has released everything. */
  | { kind: "stopped" };

export type TurnEffect =
  | { kind: "setState"; state: SessionState }
  | PlaybackEffect
  /** Arms the VAD worker's own pause of playback with this token, or disarms it (null). */
  | { kind: "armAutoPause"; token: number | null }
  /** The user's words so far (not final). */
  | { kind: "userTranscript"; text: string }
  /** An STT word dropped: the bot's own echo, or words held over the bot's audio that no real speech vouched for (counted with the echo guard on). */
  | { kind: "echoWord"; text: string }
  /** A word that belongs to the last user message (its flush timed out). */
  | { kind: "lateUserWord"; text: string }
  /** Flush the STT for the turn's last words; answer with `turnFlushed`. `voiceEnd`: where the user's voice ended (AudioContext s), if known. */
  | { kind: "endUserTurn"; voiceEnd: number | undefined }
  /** End the VAD's utterance (its `speechEnd`) once it has been quiet `quietMs` (VadPort.endWhenQuiet). */
  | { kind: "endVadWhenQuiet"; quietMs: number }
  /** The user's turn goes into the history, final; `resumed`: it replaces the last user message (TurnMarks.resumed). */
  | { kind: "addUserMessage"; text: string; resumed?: boolean }
  /** The user's speech cut a reply they never heard: their next message replaces the last (its transcript id, in the history). */
  | { kind: "resumeUserTurn" }
  /** Send `timer` at `at` (one timer: a new one replaces the last). */
  | { kind: "armTimer"; at: number }
  /** The speech over the bot was a backchannel: its pause resumed, and it is no user turn. */
  | { kind: "backchannel"; words: readonly string[]; speechMs: number }
  /** Make `generation` the player's current one: older audio is fenced off. */
  | { kind: "fence"; generation: number }
  /**
   * Start reply `generation` (LLM → TTS → player) for the history as it is.
   * `held`: a preemptive reply to the user's turn `text`, not in the history
   * yet: it is prepared but nothing of it plays or shows until `releaseReply`.
   */
  | { kind: "startReply"; generation: number; held?: { text: string; resumed?: boolean } }
  /**
   * The held reply `generation` is the reply now: its message joins the history, and its audio and transcript go out.
   * `voiceEnd`: where the user's voice ended (AudioContext s), when the VAD has said: the turn's timing starts here.
   */
  | { kind: "releaseReply"; generation: number; voiceEnd: number | undefined }
  /** The held reply `generation` is not needed (the user went on): its streams are cancelled, and it is counted as wasted. */
  | { kind: "dropHeldReply"; generation: number }
  /** Interrupt step 1: the reply's history message keeps what was heard. */
  | { kind: "cutReplyToHeard"; generation: number }
  /** Interrupt step 2: silence within one render quantum. */
  | { kind: "flushPlayback" }
  /** Tell the app: the `interruption` event and the reply's final transcript. */
  | { kind: "announceInterruption"; generation: number; reason: InterruptReason; speechStartToConfirmMs?: number; userTurnResumed?: boolean }
  /** Interrupt step 4: close the TTS stream, then abort the LLM request; then report the turn. */
  | { kind: "cancelReply"; generation: number }
  /** Reply `generation` ended: its final transcript and turn report. */
  | { kind: "finishReply"; generation: number }
  /** stop() mid-turn: the words said so far go into the history. */
  | { kind: "keepUserWords"; text: string; resumed?: boolean }
  /** stop() mid-reply: the history keeps what was heard of it. */
  | { kind: "keepHeardReply"; generation: number };

export interface TurnStep {
  state: TurnState;
  effects: TurnEffect[];
}
