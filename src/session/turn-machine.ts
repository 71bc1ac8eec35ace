/**
 * The turn machine: who holds the floor, and what happens when that changes.
 * Pure: `step(state, event)` returns the next state and the effects to carry
 * out, in order. No timers, no I/O, no clock: time comes in with the events
 * (`at`, in ms of the session's one clock). VoiceSession is the interpreter:
 * it turns the VAD, the STT and the player into events, and the effects into
 * calls (playback, history, the reply pipeline, the session's events).
 *
 * The state is a few tagged unions (turn-types.ts): the floor's `phase`, the
 * VAD's `voice` and what judges it (`vad`: the model, or its level fallback),
 * the user's `turn`, the `reply`, the `bargeIn` and the STT link. The table is `HANDLERS` below, one entry per event; the steps several
 * events share are named transitions (turn-steps.ts, turn-words.ts), and no
 * handler calls back into the table. docs/turn-machine.md is the same table
 * read per state (generated: npm run docs:turns). The order of effects is
 * the contract: for an interruption it is the four ordered steps of a barge-in
 * (history keeps what was heard → flush → fence → cancel the streams), with
 * the events the app sees in between.
 */
import { backchannelWait, waitAfterMisfire, waitAtSpeechEnd, withWait, wordWaitOver } from "./backchannel-wait.js";
import { beginBargeIn, misfireBargeIn, NO_BARGE_IN } from "./barge-in.js";
import { holdMsFor } from "./turn-end.js";
import { dropSpeculation, eagerEnded, preemptiveFlushed, quietNoticed, serviceResumed, utteranceEnded, voiceResumed } from "./preemptive.js";
import { botHasFloor, userHasFloor } from "./floor.js";
import {
  changeState, confirm, endUserTurn, flushInFlight, holdOf, interrupt, linkChanged, marksOf, owes, owingCleared, same, startReply, andThen, to, unflushed, unheld, vadSpeaking, verdictOf,
} from "./turn-steps.js";
import { heardWord, vouch } from "./turn-words.js";
import { unconfirmedEnd, vadConfirms } from "./vad-source.js";
import type { TurnConfig, TurnEffect, TurnEvent, TurnState, TurnStep, Voice } from "./turn-types.js";

export type { InterruptReason, ReplyState, SttLink, TurnConfig, TurnEffect, TurnEvent, TurnMarks, TurnState, TurnStep, UserTurn, VadSource, Voice } from "./turn-types.js";

export { holdOf, verdictOf } from "./turn-steps.js";

export const INITIAL_TURN_STATE: TurnState = {
  phase: "idle",
  stt: { kind: "up" },
  vad: { kind: "model" },
  voice: { kind: "quiet", startAt: -Infinity, realAt: -Infinity },
  turn: { kind: "open" },
  reply: { kind: "none" },
  bargeIn: NO_BARGE_IN,
  userWords: [],
  generation: 0,
  heldWords: [],
};

type Handler<E extends TurnEvent> = (state: TurnState, event: E, config: TurnConfig) => TurnStep;
type Handlers = { [K in TurnEvent["kind"]]: Handler<Extract<TurnEvent, { kind: K }>> };

const HANDLERS: Handlers = {
  connect: (s) => (s.phase === "idle" ? to(s, "connecting") : same(s)),

  listen: (s, e) => (s.phase === "idle" || s.phase === "connecting" ? to({ ...s, vad: { kind: e.vad ?? "model" } }, "listening") : same(s)),

  // The model takes over from the level fallback: nothing else changes, the utterance under way goes on.
  vadReady: (s) => same({ ...s, vad: { kind: "model" } }),

  speechStart: (s, e, config) => {
    // A new utterance has its own onset, and no verdict of the turn detector yet; speech going on keeps its own.
    const voice: Voice = s.voice.kind === "quiet" ? { kind: "onset", startAt: e.at, startTime: e.contextTime, realAt: s.voice.realAt } : s.voice;
    const speaking = { ...s, voice };
    if (botHasFloor(s) && s.reply.kind === "playing" && config.bargeInEnabled) {
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
    // With push-to-talk the button gives the floor, not the VAD: a speech start after the release is
    // a lagging VAD's, for audio from before it, and nothing but another press would end that turn.
    return s.phase === "listening" && !config.pushToTalk ? to(speaking, "user_speaking") : same(speaking);
  },

  // With backchannels, speech confirms only by its words, or at its end by having lasted `maxMs`.
  // A held turn goes on (its hold let go): its words stay, and this speech adds to them.
  speechRealStart: (s, e, config) => {
    const voice: Voice = s.voice.kind === "quiet" ? { ...s.voice, realAt: e.at } : { ...s.voice, kind: "real", realAt: e.at };
    const real = vouch({ ...s, voice, turn: unheld(s.turn) }, e.at, config);
    // The level fallback's real start vouches for the words near it, but only a word confirms (vad-source.ts).
    return andThen(real, (next) => (backchannelWait(next) || !vadConfirms(next) ? same(next) : confirm(next, "speech", e.at, config)));
  },

  speechEnd: (s, e, config) => {
    const verdict = e.verdictDue && config.turnDetector ? "due" : verdictOf(s.voice);
    const voice: Voice = { kind: "quiet", startAt: s.voice.startAt, startTime: s.voice.startTime, realAt: e.at, end: e.voiceEnd, verdict };
    const vouched = vouch({ ...s, voice }, e.at, config);
    const confirmed = andThen(vouched, (next) => speechEndOverBot(next, e.at, e.voiceEnd, config));
    return andThen(confirmed, (next) => {
      // A held preemptive reply is released here (preemptive.ts); a flush under way for one becomes the turn's.
      const ended = utteranceEnded(next);
      if (ended.release) return startReply(ended.step.state, ended.release.text, false, ended.release.generation);
      // With push-to-talk a pause in speech is not the end of the turn: the button's release is.
      return andThen(ended.step, (n) => (n.phase === "user_speaking" && !config.pushToTalk ? endUserTurn(n) : same(n)));
    });
  },

  // The turn is likely over: its reply is prepared, held (preemptive.ts).
  speechQuiet: (s, e, config) => quietNoticed(s, e.voiceEnd, config) ?? same(s),

  speechResumed: (s) => voiceResumed(s) ?? same(s),

  // Speech over the bot voiced past the backchannel policy's maxMs, still going: no backchannel is that long.
  speechVoiced: (s, e, config) => {
    const wait = backchannelWait(s);
    return config.backchannel && wait && wait.endedAt === undefined && vadConfirms(s) ? confirm(s, "speech", e.at, config) : same(s);
  },

  // The turn detector's verdict on the utterance that ended (none begun since): kept for the flush, and a
  // held turn it calls over (or, with no verdict, whose words read finished) is answered now.
  turnPredicted: (s, e, config) => {
    if (!config.turnDetector || s.voice.kind !== "quiet") return same(s);
    const judged = { ...s, voice: { ...s.voice, verdict: e.probability } };
    const text = s.userWords.join(" ").trim();
    const over = holdOf(s.turn) !== undefined && text !== "" && holdMsFor(config, e.probability, text) === undefined;
    return over ? startReply(judged, text, false) : same(judged);
  },

  misfire: (s, e, config) => {
    // Held words the VAD would not vouch for were the bot's echo misheard.
    const echo: TurnEffect[] = s.heldWords.map((w) => ({ kind: "echoWord", text: w.text }));
    const voice: Voice = s.voice.kind === "quiet" ? s.voice : { kind: "quiet", startAt: s.voice.startAt, startTime: s.voice.startTime, realAt: s.voice.realAt };
    const quiet = { ...s, voice, heldWords: [] };
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
    const hold = holdOf(s.turn);
    // Words in an utterance too short for the VAD ("wait" confirmed the barge-in by its word): it ended here,
    // as at a speechEnd. Left open, only the STT's pause would end it, and only Kyutai's STT sends one.
    // Where the voice ended is not known (the misfire does not say): no voice to voice for this turn.
    if (s.phase === "user_speaking" && vadSpeaking(s) && s.userWords.length > 0 && hold === undefined && !config.pushToTalk) {
      const ended = endUserTurn(quiet);
      return { state: ended.state, effects: [...echo, ...ended.effects] };
    }
    const next = s.phase === "user_speaking" && s.userWords.length === 0 ? to(quiet, "listening") : same(quiet);
    // A cough during a held turn: the hold stands, and its timer (which may have come meanwhile) is asked again.
    const rearm: TurnEffect[] = hold === undefined ? [] : [{ kind: "armTimer", at: hold }];
    return { state: next.state, effects: [...echo, ...next.effects, ...rearm] };
  },

  word: (s, e, config) => heardWord(s, e, config),

  wordRetracted: (s) => {
    if (s.userWords.length === 0) return same(s);
    const userWords = s.userWords.slice(0, -1);
    return { state: { ...s, userWords }, effects: [{ kind: "userTranscript", text: userWords.join(" ") }] };
  },

  // Not during a held turn: it was flushed already, and its hold decides (a pause there would only restart it).
  sttPause: (s, e, config) =>
    !config.pushToTalk && holdOf(s.turn) === undefined &&
    e.probability >= config.pauseThreshold && s.userWords.length > 0 && !vadSpeaking(s) && userHasFloor(s) ? endUserTurn(s) : same(s),

  // The service's end of turn: at once after the VAD's end (a held turn is answered now), else when
  // the VAD's utterance has been quiet a moment (its speechEnd, asked for early, ends the turn).
  sttEndOfTurn: (s, e, config) => {
    // An eager end starts a held reply for its words (preemptive.ts), and ends nothing.
    if (e.eager) return eagerEnded(s, e.text, config) ?? same(s);
    const policy = config.serviceEndOfTurn;
    if (!policy || config.pushToTalk || flushInFlight(s.turn) || !userHasFloor(s) || s.reply.kind === "playing" || s.userWords.length === 0) return same(s);
    const judged: TurnState = { ...s, turn: { ...s.turn, serviceEnded: true } };
    if (vadSpeaking(s)) return { state: judged, effects: [{ kind: "endVadWhenQuiet", quietMs: policy.quietMs }] };
    const text = s.userWords.join(" ").trim();
    return holdOf(s.turn) !== undefined ? startReply(s, text, false) : endUserTurn(judged);
  },

  sttTurnResumed: (s) => {
    const resumed: TurnState = s.turn.serviceEnded ? { ...s, turn: { ...s.turn, serviceEnded: undefined } } : s;
    return serviceResumed(resumed) ?? same(resumed);
  },

  sttMarker: (s) => same({ ...s, stt: owingCleared(s.stt) }),

  sttConnected: (s) => linkChanged(s, { ...s, stt: { kind: "up" } }),

  sttLost: (s) => linkChanged(s, { ...s, stt: { kind: "down", ...(owes(s.stt) ? { owing: true } : {}) } }),

  turnFlushed: (s, e, config) => turnFlushed(s, e.missed, e.at, config, e.talkHeld === true),

  replyAudible: (s, e, config) => {
    if (s.reply.kind !== "playing" || s.reply.generation !== e.generation || s.reply.audible) return same(s);
    const audible = { ...s, reply: { ...s.reply, audible: true, audibleAt: e.contextTime } };
    const effects: TurnEffect[] = [{ kind: "armAutoPause", token: config.bargeInEnabled ? e.generation : null }];
    if (s.phase !== "bot_thinking") return { state: audible, effects };
    return { state: { ...audible, phase: "bot_speaking" }, effects: [...changeState(s, "bot_speaking"), ...effects] };
  },

  replyDone: (s, e) => {
    if (s.reply.kind !== "playing" || s.reply.generation !== e.generation) return same(s);
    const phase = vadSpeaking(s) ? "user_speaking" : "listening";
    return {
      state: { ...s, reply: { kind: "none" }, bargeIn: NO_BARGE_IN, phase },
      effects: [{ kind: "armAutoPause", token: null }, { kind: "finishReply", generation: e.generation }, ...changeState(s, phase)],
    };
  },

  interrupt: (s, e) => interrupt(s, e.reason, undefined, false),

  timer: (s, e, config) => {
    // A held turn's time is up with no more speech: it is answered as it stands.
    const hold = holdOf(s.turn);
    if (hold !== undefined && !vadSpeaking(s) && e.at >= hold) {
      const text = s.userWords.join(" ").trim();
      return text ? startReply(s, text, false) : same({ ...s, turn: unheld(s.turn) });
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
    if (s.reply.kind !== "playing") return andThen(dropped, (next) => startReply(next, text, false, undefined, false));
    // Typed over the bot: the ordered interrupt (what was heard is kept), then the reply to the text.
    // The floor goes straight to the new reply: no "listening" in between.
    const cut = interrupt(s, "text", undefined, false);
    const next = startReply({ ...cut.state, phase: s.phase }, text, false, undefined, false);
    return { state: next.state, effects: [...cut.effects.filter((x) => x.kind !== "setState"), ...next.effects] };
  },

  stop: (s) => {
    const text = s.userWords.join(" ").trim();
    // A held preemptive reply never played: it goes with its streams (the words it answered are kept below).
    const dropped = dropSpeculation(s);
    const effects: TurnEffect[] = [...dropped.effects];
    if (text) effects.push({ kind: "keepUserWords", text, ...(s.turn.resumed ? { resumed: true } : {}) });
    if (s.reply.kind === "playing") effects.push({ kind: "keepHeardReply", generation: s.reply.generation });
    const turn = { ...dropped.state.turn, resumed: undefined };
    return { state: { ...dropped.state, userWords: [], reply: { kind: "none" }, bargeIn: NO_BARGE_IN, turn }, effects };
  },

  stopped: (s) => ({ state: { ...INITIAL_TURN_STATE, generation: s.generation }, effects: changeState(s, "idle") }),
};

/** One step of the machine. Pure. */
export function step(state: TurnState, event: TurnEvent, config: TurnConfig): TurnStep {
  const handler = HANDLERS[event.kind] as Handler<TurnEvent>;
  return handler(state, event, config);
}

// ─── transitions of this table's own ──────────────────────────────────────

/** The VAD's end of speech over the bot confirms, unless the backchannel policy waits for its words (backchannel-wait.ts). */
function speechEndOverBot(s: TurnState, at: number, voiceEnd: number | undefined, config: TurnConfig): TurnStep {
  if (!vadConfirms(s)) return unconfirmedEnd(s);
  const wait = backchannelWait(s);
  const decided = wait && config.backchannel ? waitAtSpeechEnd(s, wait, config.backchannel, at, voiceEnd) : "confirm";
  return decided === "confirm" ? confirm(s, "speech", at, config) : decided;
}

/**
 * The `endUserTurn` flush is back (at `at`, ms; `missed`: the STT did not
 * confirm the last words in time). The preemptive flush starts a held reply
 * (preemptive.ts); an eager reply held for the words this flush brought is
 * released, or dropped and the turn ends below; otherwise the turn's words
 * are answered, or held when they leave it unfinished.
 */
function turnFlushed(s: TurnState, missed: boolean, at: number, config: TurnConfig, talkHeld: boolean): TurnStep {
  if (s.turn.kind === "flushing") return preemptiveFlushed({ ...s, turn: s.turn }, missed, config);
  if (s.reply.kind === "speculative") {
    const ended = utteranceEnded(s, true);
    if (!ended.release) return andThen(ended.step, (n) => turnFlushed(n, missed, at, config, talkHeld));
    const next = { ...ended.step.state, turn: { kind: "open" as const, ...(s.turn.resumed ? { resumed: true as const } : {}) }, userWords: [] };
    return startReply(next, ended.release.text, missed, ended.release.generation);
  }
  const text = s.userWords.join(" ").trim();
  const marks = marksOf(s.turn);
  const flushed: TurnState = { ...s, turn: unflushed(s.turn, marks.resumed ? { resumed: true } : {}), userWords: [] };
  // Nothing said: the floor goes back. With push-to-talk only the button keeps it (the VAD's speech, still
  // going after the release on a lagging worker, has no end that would give it back: stuck in user_speaking).
  const keeps = config.pushToTalk ? talkHeld : vadSpeaking(s);
  if (!text) return userHasFloor(s) ? to(flushed, keeps ? "user_speaking" : "listening") : same(flushed);
  // Unfinished by the turn detector's verdict or else its words (turn-end.ts; not when the service judged
  // the turn over), or the user already speaking again: the turn goes on (held until holdMs).
  const holdMs = marks.serviceEnded ? undefined : holdMsFor(config, verdictOf(s.voice), text);
  if ((config.turnEnd || config.turnDetector) && !config.pushToTalk && s.reply.kind !== "playing" && (vadSpeaking(s) || holdMs !== undefined)) {
    if (vadSpeaking(s) || holdMs === undefined) return same({ ...s, turn: unflushed(s.turn) });
    const until = at + holdMs;
    return { state: { ...s, turn: { kind: "held", until, ...marks } }, effects: [{ kind: "armTimer", at: until }] };
  }
  return startReply(flushed, text, missed);
}
