/**
 * The turn machine: who holds the floor, and what happens when that changes.
 * Pure: `step(state, event)` returns the next state and the effects to carry
 * out, in order. No timers, no I/O, no clock: time comes in with the events
 * (`at`, in ms of the session's one clock). VoiceSession is the interpreter:
 * it turns the VAD, the STT and the player into events, and the effects into
 * calls (playback, history, the reply pipeline, the session's events).
 *
 * The whole table is `HANDLERS` below, one entry per event, read top to
 * bottom. The order of effects is the contract: for an interruption it is the
 * four ordered steps of DESIGN.md (history keeps what was heard → flush →
 * fence → cancel the streams), with the events the app sees in between.
 */
import { beginBargeIn, confirmBargeIn, misfireBargeIn, NO_BARGE_IN, type BargeIn, type BargeInReason, type PlaybackEffect } from "./barge-in.js";
import { botHasFloor, presentedState, userHasFloor, type FloorPhase } from "./floor.js";
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
}

export interface TurnState {
  readonly phase: FloorPhase;
  /** The STT stream failed and is being reconnected (from `sttLost` to `sttConnected`). */
  readonly sttDown: boolean;
  /** Between the VAD's speech start and its end or misfire. */
  readonly vadSpeaking: boolean;
  /** The words of the user's turn so far. */
  readonly userWords: readonly string[];
  /** The STT is being flushed for the turn's last words (an `endUserTurn` effect is in flight). */
  readonly endingTurn: boolean;
  /**
   * The last turn ended without the STT confirming its last words in time:
   * words that still come before its marker belong to that turn's message.
   */
  readonly lateWords: boolean;
  /** The newest playback generation; each reply gets a new one, and so does each interruption (the fence). */
  readonly generation: number;
  /** The reply that holds the floor, from its start to its end or interruption. */
  readonly reply: { readonly generation: number; readonly audible: boolean } | undefined;
  readonly bargeIn: BargeIn;
  /** When the VAD's current (or last) utterance began (ms). */
  readonly speechStartAt: number;
  /** Inside an utterance the VAD confirmed (its real start came), and when it last did (ms). */
  readonly realSpeech: boolean;
  readonly realSpeechAt: number;
  /** Where the VAD's last utterance really ended (its last speech frame, AudioContext s); undefined while one goes on. */
  readonly voiceEnd: number | undefined;
  /**
   * Words heard near the bot's audio with no real speech yet to vouch for
   * them (TurnConfig.vouchWordsMs): real speech soon after makes them the
   * user's, a misfire or the window passing makes them echo.
   */
  readonly heldWords: readonly { readonly text: string; readonly at: number; readonly spokenAt?: number }[];
}

export type InterruptReason = InterruptionEvent["reason"];

export type TurnEvent =
  /** start() began: the microphone, the VAD and the STT are being opened. */
  | { kind: "connect" }
  /** start() is done: the session listens. */
  | { kind: "listen" }
  | { kind: "speechStart"; pausedByWorker: boolean; at: number }
  /** `bargeIn.minSpeechMs` of speech frames since the speech start. */
  | { kind: "speechRealStart"; at: number }
  /** `voiceEnd`: the utterance's last speech frame (AudioContext s), when the VAD says. */
  | { kind: "speechEnd"; at: number; voiceEnd?: number }
  | { kind: "misfire"; resumedByWorker: boolean }
  /**
   * An STT word; `echo`: the bot just said it (see echo-words.ts), so it is
   * the bot's own voice heard back; `nearBot`: the bot was audible within the
   * echo guard's word window (only with the guard on).
   */
  /** `at`: when it arrived; `spokenAt`: when its audio was captured, when known (same clock). */
  | { kind: "word"; text: string; at: number; spokenAt?: number; echo?: boolean; nearBot?: boolean }
  /** A new STT stream will hear the user's last word again (see SpeechReplay): it is taken back. */
  | { kind: "wordRetracted" }
  | { kind: "sttPause"; probability: number }
  | { kind: "sttMarker" }
  /** A new STT stream is up: its words are new speech. */
  | { kind: "sttConnected" }
  /** The STT stream failed; the link reconnects it (the user is not heard until `sttConnected`). */
  | { kind: "sttLost" }
  /** The `endUserTurn` effect is done; `missed`: the STT did not confirm its last words in time. */
  | { kind: "turnFlushed"; missed: boolean }
  /** The first sample of reply `generation` is audible. */
  | { kind: "replyAudible"; generation: number }
  /** Reply `generation` has played out (or ended with no audio). */
  | { kind: "replyDone"; generation: number }
  | { kind: "interrupt"; reason: "api" | "stall" }
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
  /** The user's turn goes into the history, final. */
  | { kind: "addUserMessage"; text: string }
  /** Make `generation` the player's current one: older audio is fenced off. */
  | { kind: "fence"; generation: number }
  /** Start reply `generation` (LLM → TTS → player) for the history as it is. */
  | { kind: "startReply"; generation: number }
  /** Interrupt step 1: the reply's history message keeps what was heard. */
  | { kind: "cutReplyToHeard"; generation: number }
  /** Interrupt step 2: silence within one render quantum. */
  | { kind: "flushPlayback" }
  /** Tell the app: the `interruption` event and the reply's final transcript. */
  | { kind: "announceInterruption"; generation: number; reason: InterruptReason; speechStartToConfirmMs?: number }
  /** Interrupt step 4: close the TTS stream, then abort the LLM request; then report the turn. */
  | { kind: "cancelReply"; generation: number }
  /** Reply `generation` ended: its final transcript and turn report. */
  | { kind: "finishReply"; generation: number }
  /** stop() mid-turn: the words said so far go into the history. */
  | { kind: "keepUserWords"; text: string }
  /** stop() mid-reply: the history keeps what was heard of it. */
  | { kind: "keepHeardReply"; generation: number };

export interface TurnStep {
  state: TurnState;
  effects: TurnEffect[];
}

/** The vouching window without the echo guard (confirmByWords off): about the STT's lag. */
const HELD_WORD_MS = 1500;

export const INITIAL_TURN_STATE: TurnState = {
  phase: "idle",
  sttDown: false,
  vadSpeaking: false,
  userWords: [],
  endingTurn: false,
  lateWords: false,
  generation: 0,
  reply: undefined,
  bargeIn: NO_BARGE_IN,
  speechStartAt: -Infinity,
  realSpeech: false,
  realSpeechAt: -Infinity,
  voiceEnd: undefined,
  heldWords: [],
};

type Handler<E extends TurnEvent> = (state: TurnState, event: E, config: TurnConfig) => TurnStep;
type Handlers = { [K in TurnEvent["kind"]]: Handler<Extract<TurnEvent, { kind: K }>> };

const HANDLERS: Handlers = {
  connect: (s) => (s.phase === "idle" ? to(s, "connecting") : same(s)),

  listen: (s) => (s.phase === "idle" || s.phase === "connecting" ? to(s, "listening") : same(s)),

  speechStart: (s, e, config) => {
    const speaking = { ...s, vadSpeaking: true, speechStartAt: s.vadSpeaking ? s.speechStartAt : e.at, voiceEnd: undefined };
    if (botHasFloor(s) && s.reply && config.bargeInEnabled) {
      // Pause now; confirm on the VAD's real start, its end, or an STT word.
      const { bargeIn, effects } = beginBargeIn(s.reply.generation, { pausedByWorker: e.pausedByWorker, at: e.at, wordsBefore: s.userWords.length });
      return { state: { ...speaking, bargeIn }, effects };
    }
    // A pause the worker made with no reply to barge into (it raced the
    // disarm) needs no undo: its token is stale for the next reply.
    return s.phase === "listening" ? to(speaking, "user_speaking") : same(speaking);
  },

  speechRealStart: (s, e, config) => then(vouch({ ...s, realSpeech: true, realSpeechAt: e.at }, e.at, config), (next) => confirm(next, "speech", e.at)),

  speechEnd: (s, e, config) => {
    const vouched = vouch({ ...s, vadSpeaking: false, realSpeech: false, realSpeechAt: e.at, voiceEnd: e.voiceEnd }, e.at, config);
    const confirmed = then(vouched, (next) => confirm(next, "speech", e.at));
    // With push-to-talk a pause in speech is not the end of the turn: the button's release is.
    return then(confirmed, (next) => (next.phase === "user_speaking" && !config.pushToTalk ? endUserTurn(next) : same(next)));
  },

  misfire: (s, e) => {
    // Held words the VAD would not vouch for were the bot's echo misheard.
    const echo: TurnEffect[] = s.heldWords.map((w) => ({ kind: "echoWord", text: w.text }));
    const quiet = { ...s, vadSpeaking: false, realSpeech: false, heldWords: [] };
    const misfired = misfireBargeIn(s.bargeIn, e.resumedByWorker);
    if (misfired) {
      return { state: { ...quiet, bargeIn: misfired.bargeIn, userWords: s.userWords.slice(0, misfired.wordsBefore) }, effects: [...echo, ...misfired.effects] };
    }
    const next = s.phase === "user_speaking" && s.userWords.length === 0 ? to(quiet, "listening") : same(quiet);
    return { state: next.state, effects: [...echo, ...next.effects] };
  },

  word: (s, e, config) => {
    // The bot's own voice heard back: neither a confirmation nor the user's turn.
    if (e.echo) return { state: s, effects: [{ kind: "echoWord", text: e.text }] };
    // Words over the bot's audio wait for real speech: with the echo guard (its
    // echo, misheard), or with confirmByWords off (a burst that will misfire).
    const overBot = (e.nearBot && config.vouchWordsMs !== undefined) || (!config.confirmByWords && s.phase === "bot_speaking");
    if (overBot && !vouched(s, e.at, config)) {
      const { kept, expired } = splitHeld(s.heldWords, e.at, config);
      return { state: { ...s, heldWords: [...kept, { text: e.text, at: e.at, spokenAt: e.spokenAt }] }, effects: expired };
    }
    // Leading the user's turn, but spoken before the utterance began, while the bot was audible: the
    // bot's echo, however late it arrived. (Once the turn has words, a pause may start a new utterance
    // while the last one's words are still arriving: those stay the user's.)
    if (overBot && s.userWords.length === 0 && spokenBefore(e, s.speechStartAt)) return { state: s, effects: [{ kind: "echoWord", text: e.text }] };
    if (s.lateWords) return { state: s, effects: [{ kind: "lateUserWord", text: e.text }] };
    const userWords = [...s.userWords, e.text];
    const heard: TurnStep = { state: { ...s, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
    return config.confirmByWords ? then(heard, (next) => confirm(next, "words", e.at)) : heard;
  },

  wordRetracted: (s) => {
    if (s.userWords.length === 0) return same(s);
    const userWords = s.userWords.slice(0, -1);
    return { state: { ...s, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
  },

  sttPause: (s, e, config) =>
    !config.pushToTalk &&
    e.probability >= config.pauseThreshold && s.userWords.length > 0 && !s.vadSpeaking && userHasFloor(s) ? endUserTurn(s) : same(s),

  sttMarker: (s) => same({ ...s, lateWords: false }),

  sttConnected: (s) => linkChanged(s, { ...s, lateWords: false, sttDown: false }),

  sttLost: (s) => linkChanged(s, { ...s, sttDown: true }),

  turnFlushed: (s, e) => {
    const text = s.userWords.join(" ").trim();
    const flushed = { ...s, endingTurn: false, userWords: [] };
    if (!text) return userHasFloor(s) ? to(flushed, s.vadSpeaking ? "user_speaking" : "listening") : same(flushed);
    return startReply(flushed, text, e.missed);
  },

  replyAudible: (s, e, config) => {
    if (s.reply?.generation !== e.generation || s.reply.audible) return same(s);
    const audible = { ...s, reply: { generation: e.generation, audible: true } };
    const effects: TurnEffect[] = [{ kind: "armAutoPause", token: config.bargeInEnabled ? e.generation : null }];
    if (s.phase !== "bot_thinking") return { state: audible, effects };
    return { state: { ...audible, phase: "bot_speaking" }, effects: [...changeState(s, "bot_speaking"), ...effects] };
  },

  replyDone: (s, e) => {
    if (s.reply?.generation !== e.generation) return same(s);
    const phase = s.vadSpeaking ? "user_speaking" : "listening";
    return {
      state: { ...s, reply: undefined, bargeIn: NO_BARGE_IN, phase },
      effects: [{ kind: "armAutoPause", token: null }, { kind: "finishReply", generation: e.generation }, ...changeState(s, phase)],
    };
  },

  interrupt: (s, e) => interrupt(s, e.reason, undefined),

  // The button down over the bot interrupts nothing by itself: speech while it is held barges in as usual.
  pushStart: (s) => (s.phase === "listening" ? to(s, "user_speaking") : same(s)),

  pushEnd: (s) => (userHasFloor(s) && s.phase !== "listening" ? endUserTurn(s) : same(s)),

  text: (s, e) => {
    const typed = e.text.trim();
    if (!typed || s.phase === "idle" || s.phase === "connecting") return same(s);
    // Words the user was saying join the typed ones: one turn, not two replies racing.
    const text = [...s.userWords, typed].join(" ");
    if (!s.reply) return startReply(s, text, false);
    // Typed over the bot: the ordered interrupt (what was heard is kept), then the reply to the text.
    // The floor goes straight to the new reply: no "listening" in between.
    const cut = interrupt(s, "text", undefined);
    const next = startReply({ ...cut.state, phase: s.phase }, text, false);
    return { state: next.state, effects: [...cut.effects.filter((x) => x.kind !== "setState"), ...next.effects] };
  },

  stop: (s) => {
    const text = s.userWords.join(" ").trim();
    const effects: TurnEffect[] = [];
    if (text) effects.push({ kind: "keepUserWords", text });
    if (s.reply) effects.push({ kind: "keepHeardReply", generation: s.reply.generation });
    return { state: { ...s, userWords: [], reply: undefined, bargeIn: NO_BARGE_IN }, effects };
  },

  stopped: (s) => ({ state: { ...INITIAL_TURN_STATE, generation: s.generation }, effects: changeState(s, "idle") }),
};

/** One step of the machine. Pure. */
export function step(state: TurnState, event: TurnEvent, config: TurnConfig): TurnStep {
  const handler = HANDLERS[event.kind] as Handler<TurnEvent>;
  return handler(state, event, config);
}

// ─── transitions shared by several events ─────────────────────────────────

/** A confirming cue for a pending barge-in: the reply is interrupted. */
function confirm(s: TurnState, reason: BargeInReason, at: number): TurnStep {
  const confirmed = confirmBargeIn(s.bargeIn, at);
  if (!confirmed) return same(s);
  return interrupt({ ...s, bargeIn: confirmed.bargeIn }, reason, confirmed.confirmMs);
}

/**
 * The ordered interrupt. A user's barge-in hands the floor to the user; a
 * stop button or a stall hands it to whoever is speaking.
 */
function interrupt(s: TurnState, reason: InterruptReason, speechStartToConfirmMs: number | undefined): TurnStep {
  const reply = s.reply;
  if (!reply) return same(s);
  const generation = s.generation + 1;
  const byUser = reason === "speech" || reason === "words";
  const phase = byUser || s.vadSpeaking ? "user_speaking" : "listening";
  return {
    state: { ...s, phase, generation, reply: undefined, bargeIn: NO_BARGE_IN },
    effects: [
      { kind: "cutReplyToHeard", generation: reply.generation },
      { kind: "flushPlayback" },
      { kind: "fence", generation },
      { kind: "armAutoPause", token: null },
      { kind: "announceInterruption", generation: reply.generation, reason, speechStartToConfirmMs },
      ...changeState(s, phase),
      { kind: "cancelReply", generation: reply.generation },
    ],
  };
}

/** How long real speech vouches for the words after it, and a held word waits for it: the STT's lag. */
function vouchMs(config: TurnConfig): number {
  return config.vouchWordsMs ?? HELD_WORD_MS;
}

/** True when real speech was heard recently enough to vouch for a word at `at`. */
function vouched(s: TurnState, at: number, config: TurnConfig): boolean {
  return s.realSpeech || at - s.realSpeechAt <= vouchMs(config);
}

/** Held words still within the window at `at`, and an echoWord effect for each one past it. */
function splitHeld(held: TurnState["heldWords"], at: number, config: TurnConfig): { kept: TurnState["heldWords"]; expired: TurnEffect[] } {
  const windowMs = vouchMs(config);
  const kept = held.filter((w) => at - w.at <= windowMs);
  const expired: TurnEffect[] = held.filter((w) => at - w.at > windowMs).map((w) => ({ kind: "echoWord", text: w.text }));
  return { kept, expired };
}

/**
 * Real speech at `at`: the held words still in the window become the user's,
 * in order (then as any word would). Not those that came before the
 * utterance began: the STT cannot have heard it yet, so they are echo.
 */
function vouch(s: TurnState, at: number, config: TurnConfig): TurnStep {
  if (s.heldWords.length === 0) return same(s);
  const inWindow = splitHeld(s.heldWords, at, config);
  const kept = inWindow.kept.filter((w) => w.at >= s.speechStartAt && !(s.userWords.length === 0 && spokenBefore(w, s.speechStartAt)));
  const early: TurnEffect[] = inWindow.kept.filter((w) => !kept.includes(w)).map((w) => ({ kind: "echoWord", text: w.text }));
  let step: TurnStep = { state: { ...s, heldWords: [] }, effects: [...inWindow.expired, ...early] };
  for (const w of kept) step = then(step, (next) => HANDLERS.word(next, { kind: "word", text: w.text, at: w.at }, config));
  return step;
}

/**
 * How much earlier than the VAD's speech start a user's word may seem to
 * start: the VAD decides a few frames after the onset, and reaches the main
 * thread later still, while an STT's word start times can lead the sound by
 * a frame or two.
 */
const SPOKEN_SLACK_MS = 400;

/** The word's audio was captured before the utterance at `speechStartAt` began (unknown: no). */
function spokenBefore(w: { spokenAt?: number }, speechStartAt: number): boolean {
  return w.spokenAt !== undefined && w.spokenAt < speechStartAt - SPOKEN_SLACK_MS;
}

/**
 * The user's turn `text` goes into the history and a new reply starts for it.
 * `lateWords`: the STT missed its flush, so words of this turn may still come.
 */
function startReply(s: TurnState, text: string, lateWords: boolean): TurnStep {
  const generation = s.generation + 1;
  return {
    state: { ...s, phase: "bot_thinking", userWords: [], generation, reply: { generation, audible: false }, lateWords },
    effects: [{ kind: "addUserMessage", text }, { kind: "fence", generation }, ...changeState(s, "bot_thinking"), { kind: "startReply", generation }],
  };
}

/** The user's turn is over: flush the STT for its last words (once). */
function endUserTurn(s: TurnState): TurnStep {
  if (s.endingTurn) return same(s);
  // Still speaking (push-to-talk released mid-word): where the voice ends is not known.
  const voiceEnd = s.vadSpeaking ? undefined : s.voiceEnd;
  return { state: { ...s, endingTurn: true }, effects: [{ kind: "endUserTurn", voiceEnd }] };
}

function same(state: TurnState): TurnStep {
  return { state, effects: [] };
}

function to(s: TurnState, phase: FloorPhase): TurnStep {
  return { state: { ...s, phase }, effects: changeState(s, phase) };
}

/** The `setState` effect for the floor going to `phase`, if the state the app sees changes. */
function changeState(s: TurnState, phase: FloorPhase): TurnEffect[] {
  return presentedChange(s, { phase, sttDown: s.sttDown });
}

/** The STT link went down or came back: the presented state may change with it. */
function linkChanged(before: TurnState, after: TurnState): TurnStep {
  return { state: after, effects: presentedChange(before, after) };
}

function presentedChange(before: Parameters<typeof presentedState>[0], after: Parameters<typeof presentedState>[0]): TurnEffect[] {
  const state = presentedState(after);
  return presentedState(before) === state ? [] : [{ kind: "setState", state }];
}

/** Runs `next` on the state `first` left, keeping both steps' effects in order. */
function then(first: TurnStep, next: (state: TurnState) => TurnStep): TurnStep {
  const second = next(first.state);
  return { state: second.state, effects: [...first.effects, ...second.effects] };
}
