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
 * four ordered steps of a barge-in (history keeps what was heard → flush →
 * fence → cancel the streams), with the events the app sees in between.
 */
import { isBackchannel } from "./backchannel.js";
import { backchannelWait, misfiredInterrupt, waitAfterMisfire, waitAtSpeechEnd, waitForWord, withWait, wordWaitOver } from "./backchannel-wait.js";
import { beginBargeIn, confirmBargeIn, misfireBargeIn, NO_BARGE_IN, type BargeInReason } from "./barge-in.js";
import { spokenBefore, splitHeld, vouchedAt } from "./held-words.js";
import { holdMsFor } from "./turn-end.js";
import { resumedTurnState, resumesTurn } from "./resumed-turn.js";
import { dropSpeculation, eagerEnded, preemptiveFlushed, quietNoticed, serviceResumed, utteranceEnded, voiceResumed } from "./preemptive.js";
import { botHasFloor, presentedState, userHasFloor, type FloorPhase } from "./floor.js";
import type { InterruptReason, TurnConfig, TurnEffect, TurnEvent, TurnState, TurnStep } from "./turn-types.js";

export type { InterruptReason, TurnConfig, TurnEffect, TurnEvent, TurnState, TurnStep } from "./turn-types.js";

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
  speechStartTime: undefined,
  realSpeech: false,
  realSpeechAt: -Infinity,
  voiceEnd: undefined,
  heldWords: [],
  holdUntil: undefined,
  serviceEnded: false,
  speculation: undefined,
  speculated: false,
  resumedTurn: false,
  turnProbability: undefined,
};

type Handler<E extends TurnEvent> = (state: TurnState, event: E, config: TurnConfig) => TurnStep;
type Handlers = { [K in TurnEvent["kind"]]: Handler<Extract<TurnEvent, { kind: K }>> };

const HANDLERS: Handlers = {
  connect: (s) => (s.phase === "idle" ? to(s, "connecting") : same(s)),

  listen: (s) => (s.phase === "idle" || s.phase === "connecting" ? to(s, "listening") : same(s)),

  speechStart: (s, e, config) => {
    const onset = s.vadSpeaking ? { speechStartAt: s.speechStartAt, speechStartTime: s.speechStartTime } : { speechStartAt: e.at, speechStartTime: e.contextTime };
    // A new utterance has no verdict of the turn detector yet.
    const speaking = { ...s, vadSpeaking: true, ...onset, voiceEnd: undefined, turnProbability: s.vadSpeaking ? s.turnProbability : undefined };
    if (botHasFloor(s) && s.reply && config.bargeInEnabled) {
      const policy = config.backchannel;
      const wait = backchannelWait(s);
      // Speech again before the last utterance's words decided it: the same pause (again, after a misfire), a new utterance to time.
      if (policy && wait) {
        const repause = wait.misfired && !e.pausedByWorker ? [{ kind: "pausePlayback" as const, token: s.bargeIn.kind === "pending" ? s.bargeIn.token : s.reply.generation }] : [];
        return { state: withWait(speaking, { words: wait.words, speechAt: e.at, onsetContextTime: e.contextTime }), effects: repause };
      }
      // Pause now; confirm on the VAD's real start, its end, or an STT word (with backchannels: see backchannel.ts).
      const { bargeIn, effects } = beginBargeIn(s.reply.generation, { pausedByWorker: e.pausedByWorker, at: e.at, wordsBefore: s.userWords.length });
      if (!policy || bargeIn.kind !== "pending") return { state: { ...speaking, bargeIn }, effects };
      return { state: { ...speaking, bargeIn: { ...bargeIn, backchannel: { words: [], speechAt: e.at, onsetContextTime: e.contextTime } } }, effects };
    }
    // A pause the worker made with no reply to barge into (it raced the
    // disarm) needs no undo: its token is stale for the next reply.
    return s.phase === "listening" ? to(speaking, "user_speaking") : same(speaking);
  },

  // With backchannels, speech confirms only by its words, or at its end by having lasted `maxMs`.
  // A held turn goes on (holdUntil cleared): its words stay, and this speech adds to them.
  speechRealStart: (s, e, config) =>
    then(vouch({ ...s, realSpeech: true, realSpeechAt: e.at, holdUntil: undefined }, e.at, config), (next) => (backchannelWait(next) ? same(next) : confirm(next, "speech", e.at, config))),

  speechEnd: (s, e, config) => {
    const vouched = vouch({ ...s, vadSpeaking: false, realSpeech: false, realSpeechAt: e.at, voiceEnd: e.voiceEnd }, e.at, config);
    const confirmed = then(vouched, (next) => speechEndOverBot(next, e.at, e.voiceEnd, config));
    return then(confirmed, (next) => {
      // A held preemptive reply is released here (preemptive.ts); a flush under way for one becomes the turn's.
      const ended = utteranceEnded(next);
      if (ended.release) return startReply(ended.step.state, ended.release.text, false, ended.release.generation);
      // With push-to-talk a pause in speech is not the end of the turn: the button's release is.
      return then(ended.step, (n) => (n.phase === "user_speaking" && !config.pushToTalk ? endUserTurn(n) : same(n)));
    });
  },

  // The turn is likely over: its reply is prepared, held (preemptive.ts).
  speechQuiet: (s, e, config) => quietNoticed(s, e.voiceEnd, config) ?? same(s),

  speechResumed: (s) => voiceResumed(s) ?? same(s),

  // Speech over the bot voiced past the backchannel policy's maxMs, still going: no backchannel is that long.
  speechVoiced: (s, e, config) => {
    const wait = backchannelWait(s);
    return config.backchannel && wait && wait.endedAt === undefined ? confirm(s, "speech", e.at, config) : same(s);
  },

  // The turn detector's verdict on the utterance that ended (none begun since): kept for the flush, and a
  // turn held for more speech that it calls over is answered now.
  turnPredicted: (s, e, config) => {
    if (!config.turnDetector || s.vadSpeaking) return same(s);
    const judged = { ...s, turnProbability: e.probability };
    const text = s.userWords.join(" ").trim();
    const over = s.holdUntil !== undefined && text !== "" && e.probability >= config.turnDetector.threshold;
    return over ? startReply(judged, text, false) : same(judged);
  },

  misfire: (s, e, config) => {
    // Held words the VAD would not vouch for were the bot's echo misheard.
    const echo: TurnEffect[] = s.heldWords.map((w) => ({ kind: "echoWord", text: w.text }));
    const quiet = { ...s, vadSpeaking: false, realSpeech: false, heldWords: [] };
    // With backchannels, a burst too short for the VAD may still carry "wait": its words are awaited.
    const wait = backchannelWait(s);
    if (config.backchannel && wait && e.at !== undefined) {
      const waiting = waitAfterMisfire(quiet, wait, config.backchannel, e.at, e.resumedByWorker);
      return { state: waiting.state, effects: [...echo, ...waiting.effects] };
    }
    const misfired = misfireBargeIn(s.bargeIn, e.resumedByWorker);
    if (misfired) {
      return { state: { ...quiet, bargeIn: misfired.bargeIn, userWords: s.userWords.slice(0, misfired.wordsBefore) }, effects: [...echo, ...misfired.effects] };
    }
    // Words in an utterance too short for the VAD ("wait" confirmed the barge-in by its word): it ended here,
    // as at a speechEnd. Left open, only the STT's pause would end it, and only Kyutai's STT sends one.
    // Where the voice ended is not known (the misfire does not say): no voice to voice for this turn.
    if (s.phase === "user_speaking" && s.vadSpeaking && s.userWords.length > 0 && s.holdUntil === undefined && !config.pushToTalk) {
      const ended = endUserTurn({ ...quiet, voiceEnd: undefined });
      return { state: ended.state, effects: [...echo, ...ended.effects] };
    }
    const next = s.phase === "user_speaking" && s.userWords.length === 0 ? to(quiet, "listening") : same(quiet);
    // A cough during a held turn: the hold stands, and its timer (which may have come meanwhile) is asked again.
    const hold: TurnEffect[] = s.holdUntil === undefined ? [] : [{ kind: "armTimer", at: s.holdUntil }];
    return { state: next.state, effects: [...echo, ...next.effects, ...hold] };
  },

  word: (s, e, config) => {
    // The bot's own voice heard back: neither a confirmation nor the user's turn.
    if (e.echo) return { state: s, effects: [{ kind: "echoWord", text: e.text }] };
    // Owed to the last turn (its flush timed out; the STT's marker has not come back): its audio came
    // before that turn ended, so not from this reply, even when the reply is audible by the time it comes.
    if (s.lateWords) return { state: s, effects: [{ kind: "lateUserWord", text: e.text }] };
    // Words over the bot's audio wait for real speech: with the echo guard (its
    // echo, misheard), or with confirmByWords off (a burst that will misfire).
    const overBot = (e.nearBot && config.vouchWordsMs !== undefined) || (!config.confirmByWords && s.phase === "bot_speaking");
    // Except an interrupting word of a burst the VAD called a misfire ("stop"), awaited by the backchannel policy.
    if (overBot && !vouched(s, e.at, config, e.spokenAt) && !misfiredInterrupt(s, e.text, config.backchannel)) {
      const { kept, expired } = splitHeldWords(s.heldWords, e.at, config);
      return { state: { ...s, heldWords: [...kept, { text: e.text, at: e.at, spokenAt: e.spokenAt }] }, effects: expired };
    }
    // Leading the user's turn, but spoken before the utterance began, while the bot was audible: the
    // bot's echo, however late it arrived. (Once the turn has words, a pause may start a new utterance
    // while the last one's words are still arriving: those stay the user's.)
    if (overBot && s.userWords.length === 0 && spokenBefore(e, s.speechStartAt)) return { state: s, effects: [{ kind: "echoWord", text: e.text }] };
    const wait = backchannelWait(s);
    if (config.backchannel && wait) {
      // Held until the barge-in is decided (backchannel-wait.ts).
      const held = waitForWord(s, wait, config.backchannel, e.text);
      if (held !== "confirm") return held;
    } else if (config.backchannel && isBackchannel(config.backchannel, e.text) && s.phase === "bot_speaking" && !s.vadSpeaking) {
      // A late backchannel, its pause already resumed: not the user's turn either.
      return same(s);
    }
    // A word that interrupts: the held ones go before it, into the user's words.
    const base = wait?.words.length ? withWait(s, { ...wait, words: [] }) : s;
    const userWords = [...s.userWords, ...(wait?.words ?? []), e.text];
    const heard: TurnStep = { state: { ...base, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
    return config.confirmByWords ? then(heard, (next) => confirm(next, "words", e.at, config)) : heard;
  },

  wordRetracted: (s) => {
    if (s.userWords.length === 0) return same(s);
    const userWords = s.userWords.slice(0, -1);
    return { state: { ...s, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
  },

  // Not during a held turn: it was flushed already, and its hold decides (a pause there would only restart it).
  sttPause: (s, e, config) =>
    !config.pushToTalk && s.holdUntil === undefined &&
    e.probability >= config.pauseThreshold && s.userWords.length > 0 && !s.vadSpeaking && userHasFloor(s) ? endUserTurn(s) : same(s),

  // The service's end of turn: at once after the VAD's end (a held turn is answered now), else when
  // the VAD's utterance has been quiet a moment (its speechEnd, asked for early, ends the turn).
  sttEndOfTurn: (s, e, config) => {
    // An eager end starts a held reply for its words (preemptive.ts), and ends nothing.
    if (e.eager) return eagerEnded(s, e.text, config) ?? same(s);
    const policy = config.serviceEndOfTurn;
    if (!policy || config.pushToTalk || s.endingTurn || !userHasFloor(s) || s.reply || s.userWords.length === 0) return same(s);
    const judged = { ...s, serviceEnded: true };
    if (s.vadSpeaking) return { state: judged, effects: [{ kind: "endVadWhenQuiet", quietMs: policy.quietMs }] };
    const text = s.userWords.join(" ").trim();
    return s.holdUntil !== undefined ? startReply(s, text, false) : endUserTurn(judged);
  },

  sttTurnResumed: (s) => {
    const resumed = s.serviceEnded ? { ...s, serviceEnded: false } : s;
    return serviceResumed(resumed) ?? same(resumed);
  },

  sttMarker: (s) => same({ ...s, lateWords: false }),

  sttConnected: (s) => linkChanged(s, { ...s, lateWords: false, sttDown: false }),

  sttLost: (s) => linkChanged(s, { ...s, sttDown: true }),

  turnFlushed: (s, e, config) => {
    if (s.speculation?.stage === "flushing") return preemptiveFlushed(s, e.missed, config);
    // An eager reply held for the words this flush brought: released, or dropped and the turn goes on below.
    if (s.speculation?.stage === "held") {
      const ended = utteranceEnded(s, true);
      const next = { ...ended.step.state, endingTurn: false, userWords: [], serviceEnded: false, speculated: false };
      if (ended.release) return startReply(next, ended.release.text, e.missed, ended.release.generation);
      return then(ended.step, (n) => HANDLERS.turnFlushed(n, e, config));
    }
    const text = s.userWords.join(" ").trim();
    const flushed = { ...s, endingTurn: false, userWords: [], serviceEnded: false, speculated: false };
    if (!text) return userHasFloor(s) ? to(flushed, s.vadSpeaking ? "user_speaking" : "listening") : same(flushed);
    // Unfinished by the turn detector's verdict or else its words (turn-end.ts; not when the service judged
    // the turn over), or the user already speaking again: the turn goes on (held until holdMs).
    const holdMs = s.serviceEnded ? undefined : holdMsFor(config, s.turnProbability, text);
    if ((config.turnEnd || config.turnDetector) && !config.pushToTalk && !s.reply && (s.vadSpeaking || holdMs !== undefined)) {
      if (s.vadSpeaking || holdMs === undefined) return same({ ...s, endingTurn: false });
      const holdUntil = e.at + holdMs;
      return { state: { ...s, endingTurn: false, holdUntil }, effects: [{ kind: "armTimer", at: holdUntil }] };
    }
    return startReply(flushed, text, e.missed);
  },

  replyAudible: (s, e, config) => {
    if (s.reply?.generation !== e.generation || s.reply.audible) return same(s);
    const audible = { ...s, reply: { ...s.reply, audible: true, audibleAt: e.contextTime } };
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

  interrupt: (s, e) => interrupt(s, e.reason, undefined, false),

  timer: (s, e, config) => {
    // A held turn's time is up with no more speech: it is answered as it stands.
    if (s.holdUntil !== undefined && !s.vadSpeaking && e.at >= s.holdUntil) {
      const text = s.userWords.join(" ").trim();
      return text ? startReply(s, text, false) : same({ ...s, holdUntil: undefined });
    }
    // The word wait after a short utterance over the bot is over, and no word confirmed.
    return (config.backchannel && wordWaitOver(s, config.backchannel, e.at)) || same(s);
  },

  // The button down over the bot interrupts nothing by itself: speech while it is held barges in as usual.
  pushStart: (s) => (s.phase === "listening" ? to(s, "user_speaking") : same(s)),

  pushEnd: (s) => (userHasFloor(s) && s.phase !== "listening" ? endUserTurn(s) : same(s)),

  text: (t, e) => {
    const typed = e.text.trim();
    if (!typed || t.phase === "idle" || t.phase === "connecting") return same(t);
    // A preemptive reply held for the spoken words is not this turn's: the typed text joins them.
    const dropped = dropSpeculation(t);
    const s = dropped.state;
    // Words the user was saying join the typed ones: one turn, not two replies racing.
    const text = [...s.userWords, typed].join(" ");
    if (!s.reply) return then(dropped, (next) => startReply(next, text, false, undefined, false));
    // Typed over the bot: the ordered interrupt (what was heard is kept), then the reply to the text.
    // The floor goes straight to the new reply: no "listening" in between.
    const cut = interrupt(s, "text", undefined, false);
    const next = startReply({ ...cut.state, phase: s.phase }, text, false, undefined, false);
    return { state: next.state, effects: [...cut.effects.filter((x) => x.kind !== "setState"), ...next.effects] };
  },

  stop: (s) => {
    const text = s.userWords.join(" ").trim();
    // A held preemptive reply never played: it goes with its streams (the words it answered are kept below).
    const effects: TurnEffect[] = [...dropSpeculation(s).effects];
    if (text) effects.push({ kind: "keepUserWords", text, ...(s.resumedTurn ? { resumed: true } : {}) });
    if (s.reply) effects.push({ kind: "keepHeardReply", generation: s.reply.generation });
    return { state: { ...s, userWords: [], reply: undefined, bargeIn: NO_BARGE_IN, speculation: undefined, resumedTurn: false }, effects };
  },

  stopped: (s) => ({ state: { ...INITIAL_TURN_STATE, generation: s.generation }, effects: changeState(s, "idle") }),
};

/** One step of the machine. Pure. */
export function step(state: TurnState, event: TurnEvent, config: TurnConfig): TurnStep {
  const handler = HANDLERS[event.kind] as Handler<TurnEvent>;
  return handler(state, event, config);
}

// ─── transitions shared by several events ─────────────────────────────────

/** A confirming cue for a pending barge-in: the reply is interrupted. Backchannel words held until now are the user's. */
function confirm(s: TurnState, reason: BargeInReason, at: number, config: TurnConfig): TurnStep {
  const confirmed = confirmBargeIn(s.bargeIn, at);
  if (!confirmed) return same(s);
  const held = backchannelWait(s)?.words ?? [];
  const cut = interrupt({ ...s, bargeIn: confirmed.bargeIn, userWords: [...s.userWords, ...held] }, reason, confirmed.confirmMs, config.resumeUnheard === true);
  return held.length ? { state: cut.state, effects: [...cut.effects, { kind: "userTranscript", text: cut.state.userWords.join(" ") }] } : cut;
}

/** The VAD's end of speech over the bot confirms, unless the backchannel policy waits for its words (backchannel-wait.ts). */
function speechEndOverBot(s: TurnState, at: number, voiceEnd: number | undefined, config: TurnConfig): TurnStep {
  const wait = backchannelWait(s);
  const decided = wait && config.backchannel ? waitAtSpeechEnd(s, wait, config.backchannel, at, voiceEnd) : "confirm";
  return decided === "confirm" ? confirm(s, "speech", at, config) : decided;
}

/**
 * The ordered interrupt. A user's barge-in hands the floor to the user; a
 * stop button or a stall hands it to whoever is speaking. `resumeUnheard`
 * (TurnConfig): the user's speech cutting a reply to their spoken turn before
 * any of it reached them (resumed-turn.ts) resumes that turn: its words lead the new ones, and
 * the message they end with replaces the last.
 */
function interrupt(s: TurnState, reason: InterruptReason, speechStartToConfirmMs: number | undefined, resumeUnheard: boolean): TurnStep {
  const reply = s.reply;
  if (!reply) return same(s);
  const generation = s.generation + 1;
  const byUser = reason === "speech" || reason === "words";
  const phase = byUser || s.vadSpeaking ? "user_speaking" : "listening";
  const resumed = resumeUnheard && byUser && resumesTurn(reply, s.speechStartTime);
  const turn = resumed ? resumedTurnState(s, reply) : {};
  return {
    state: { ...s, phase, generation, reply: undefined, bargeIn: NO_BARGE_IN, ...turn },
    effects: [
      { kind: "cutReplyToHeard", generation: reply.generation },
      { kind: "flushPlayback" },
      { kind: "fence", generation },
      { kind: "armAutoPause", token: null },
      { kind: "announceInterruption", generation: reply.generation, reason, speechStartToConfirmMs, ...(resumed ? { userTurnResumed: true } : {}) },
      ...changeState(s, phase),
      { kind: "cancelReply", generation: reply.generation },
      ...(resumed ? [{ kind: "resumeUserTurn" } as const] : []),
    ],
  };
}

/** True when real speech vouches for a word that came at `at`, spoken at `spokenAt` (held-words.ts). */
function vouched(s: TurnState, at: number, config: TurnConfig, spokenAt?: number): boolean {
  return vouchedAt(s, at, config.vouchWordsMs, spokenAt);
}

/** Held words still within the window at `at`, and an echoWord effect for each one past it. */
function splitHeldWords(held: TurnState["heldWords"], at: number, config: TurnConfig): { kept: TurnState["heldWords"]; expired: TurnEffect[] } {
  const { kept, expired } = splitHeld(held, at, config.vouchWordsMs);
  return { kept, expired: expired.map((text) => ({ kind: "echoWord", text })) };
}

/**
 * Real speech at `at`: the held words still in the window become the user's,
 * in order (then as any word would). Not those that came before the
 * utterance began: the STT cannot have heard it yet, so they are echo.
 */
function vouch(s: TurnState, at: number, config: TurnConfig): TurnStep {
  if (s.heldWords.length === 0) return same(s);
  const inWindow = splitHeldWords(s.heldWords, at, config);
  const kept = inWindow.kept.filter((w) => w.at >= s.speechStartAt && !(s.userWords.length === 0 && spokenBefore(w, s.speechStartAt)));
  const early: TurnEffect[] = inWindow.kept.filter((w) => !kept.includes(w)).map((w) => ({ kind: "echoWord", text: w.text }));
  let step: TurnStep = { state: { ...s, heldWords: [] }, effects: [...inWindow.expired, ...early] };
  for (const w of kept) step = then(step, (next) => HANDLERS.word(next, { kind: "word", text: w.text, at: w.at }, config));
  return step;
}

/**
 * The user's turn `text` goes into the history and a new reply starts for it.
 * `lateWords`: the STT missed its flush, so words of this turn may still come.
 */
function startReply(s: TurnState, text: string, lateWords: boolean, held?: number, spoken = true): TurnStep {
  // A preemptive reply held for these words (preemptive.ts) has its generation already: it is released, not started.
  const generation = held ?? s.generation + 1;
  const reply: TurnEffect = held === undefined ? { kind: "startReply", generation } : { kind: "releaseReply", generation, voiceEnd: s.voiceEnd };
  const message: TurnEffect = { kind: "addUserMessage", text, ...(s.resumedTurn ? { resumed: true } : {}) };
  return {
    state: {
      ...s,
      phase: "bot_thinking",
      userWords: [],
      generation,
      reply: { generation, audible: false, ...(spoken ? { turnText: text } : {}) },
      lateWords,
      holdUntil: undefined,
      speculated: false,
      resumedTurn: false,
      turnProbability: undefined,
    },
    effects: [message, { kind: "fence", generation }, ...changeState(s, "bot_thinking"), reply],
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
