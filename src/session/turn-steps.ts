/**
 * The turn machine's named transitions: the steps several events share (a
 * reply starting, the user's turn ending, the ordered interrupt, a barge-in
 * confirmed), and the small views of the state they read. Pure. The machine
 * (turn-machine.ts) and its helper modules compose these; none of them calls
 * back into the machine's table.
 */
import { backchannelWait } from "./backchannel-wait.js";
import { confirmBargeIn, NO_BARGE_IN, type BargeInReason } from "./barge-in.js";
import { presentedState, type FloorPhase } from "./floor.js";
import { resumedTurnState, resumesTurn } from "./resumed-turn.js";
import type { InterruptReason, SttLink, TurnConfig, TurnEffect, TurnMarks, TurnState, TurnStep, UserTurn, Voice } from "./turn-types.js";

// ─── views ─────────────────────────────────────────────────────────────────

/** Between the VAD's speech start and its end or misfire. */
export function vadSpeaking(s: TurnState): boolean {
  return s.voice.kind !== "quiet";
}

/** The turn detector's verdict on the last ended utterance; undefined before it comes and once speech starts again. */
export function verdictOf(voice: Voice): number | "due" | undefined {
  return voice.kind === "quiet" ? voice.verdict : undefined;
}

/** An `endUserTurn` flush is in flight (the turn's own, or the preemptive one). */
export function flushInFlight(turn: UserTurn): boolean {
  return turn.kind === "ending" || turn.kind === "flushing";
}

/** When a held turn is answered (ms); undefined: no turn is held. */
export function holdOf(turn: UserTurn): number | undefined {
  return turn.kind === "held" ? turn.until : turn.kind === "ending" ? turn.heldUntil : undefined;
}

/** The turn's marks alone (TurnMarks), to carry into its next state. */
export function marksOf(turn: UserTurn): TurnMarks {
  return { ...(turn.resumed ? { resumed: true } : {}), ...(turn.serviceEnded ? { serviceEnded: true } : {}), ...(turn.speculated ? { speculated: true } : {}) };
}

/** The turn once its flush is back, marks kept: held again if it was held, else open. */
export function unflushed(turn: UserTurn, marks: TurnMarks = marksOf(turn)): UserTurn {
  const hold = holdOf(turn);
  return hold === undefined ? { kind: "open", ...marks } : { kind: "held", until: hold, ...marks };
}

/** The turn with its hold let go: a held one is open again; a flush under way goes on. */
export function unheld(turn: UserTurn): UserTurn {
  if (turn.kind === "held") return { kind: "open", ...marksOf(turn) };
  return turn.kind === "ending" && turn.heldUntil !== undefined ? { kind: "ending", ...marksOf(turn) } : turn;
}

/** Words still due to the last turn (its flush missed) are owed, until the STT's marker or a new stream. */
export function owes(stt: SttLink): boolean {
  return stt.kind === "owing" || (stt.kind === "down" && stt.owing === true);
}

/** The words still due to the last turn (its flush missed) are due no more; a link down stays down. */
export function owingCleared(stt: SttLink): SttLink {
  return stt.kind === "down" ? { kind: "down" } : { kind: "up" };
}

// ─── steps ─────────────────────────────────────────────────────────────────

export function same(state: TurnState): TurnStep {
  return { state, effects: [] };
}

export function to(s: TurnState, phase: FloorPhase): TurnStep {
  return { state: { ...s, phase }, effects: changeState(s, phase) };
}

/** Runs `next` on the state `first` left, keeping both steps' effects in order. */
export function andThen(first: TurnStep, next: (state: TurnState) => TurnStep): TurnStep {
  const second = next(first.state);
  return { state: second.state, effects: [...first.effects, ...second.effects] };
}

/** The `setState` effect for the floor going to `phase`, if the state the app sees changes. */
export function changeState(s: TurnState, phase: FloorPhase): TurnEffect[] {
  return presentedChange(s, { ...s, phase });
}

/** The STT link went down or came back: the presented state may change with it. */
export function linkChanged(before: TurnState, after: TurnState): TurnStep {
  return { state: after, effects: presentedChange(before, after) };
}

function presentedChange(before: TurnState, after: TurnState): TurnEffect[] {
  const state = presentedState(after);
  return presentedState(before) === state ? [] : [{ kind: "setState", state }];
}

/**
 * The user's turn `text` goes into the history and a new reply starts for it.
 * `lateWords`: the STT missed its flush, so words of this turn may still come.
 * The turn's hold, marks and verdict are spent; a flush still in flight stays
 * so (its answer finds no words), and so does the service's judgement.
 */
export function startReply(s: TurnState, text: string, lateWords: boolean, held?: number, spoken = true): TurnStep {
  // A preemptive reply held for these words (preemptive.ts) has its generation already: it is released, not started.
  const generation = held ?? s.generation + 1;
  const reply: TurnEffect = held === undefined ? { kind: "startReply", generation } : { kind: "releaseReply", generation, voiceEnd: s.voice.kind === "quiet" ? s.voice.end : undefined };
  const message: TurnEffect = { kind: "addUserMessage", text, ...(s.turn.resumed ? { resumed: true } : {}) };
  const marks: TurnMarks = s.turn.serviceEnded ? { serviceEnded: true } : {};
  const owing = lateWords ? { owing: true as const } : {};
  return {
    state: {
      ...s,
      phase: "bot_thinking",
      userWords: [],
      generation,
      reply: { kind: "playing", generation, audible: false, ...(spoken ? { turnText: text } : {}) },
      stt: s.stt.kind === "down" ? { kind: "down", ...owing } : lateWords ? { kind: "owing" } : { kind: "up" },
      turn: flushInFlight(s.turn) ? { kind: "ending", ...marks } : { kind: "open", ...marks },
      voice: s.voice.kind === "quiet" && s.voice.verdict !== undefined ? { ...s.voice, verdict: undefined } : s.voice,
    },
    effects: [message, { kind: "fence", generation }, ...changeState(s, "bot_thinking"), reply],
  };
}

/** The user's turn is over: flush the STT for its last words (once). A held turn stays held while its flush is out. */
export function endUserTurn(s: TurnState): TurnStep {
  if (flushInFlight(s.turn)) return same(s);
  // Still speaking (push-to-talk released mid-word): where the voice ends is not known.
  const voiceEnd = s.voice.kind === "quiet" ? s.voice.end : undefined;
  const heldUntil = holdOf(s.turn);
  return { state: { ...s, turn: { kind: "ending", ...marksOf(s.turn), ...(heldUntil === undefined ? {} : { heldUntil }) } }, effects: [{ kind: "endUserTurn", voiceEnd }] };
}

/** A confirming cue for a pending barge-in: the reply is interrupted. Backchannel words held until now are the user's. */
export function confirm(s: TurnState, reason: BargeInReason, at: number, config: TurnConfig): TurnStep {
  const confirmed = confirmBargeIn(s.bargeIn, at);
  if (!confirmed) return same(s);
  const held = backchannelWait(s)?.words ?? [];
  const cut = interrupt({ ...s, bargeIn: confirmed.bargeIn, userWords: [...s.userWords, ...held] }, reason, confirmed.confirmMs, config.resumeUnheard === true);
  return held.length ? { state: cut.state, effects: [...cut.effects, { kind: "userTranscript", text: cut.state.userWords.join(" ") }] } : cut;
}

/**
 * The ordered interrupt. A user's barge-in hands the floor to the user; a
 * stop button or a stall hands it to whoever is speaking. `resumeUnheard`
 * (TurnConfig): the user's speech cutting a reply to their spoken turn before
 * any of it reached them (resumed-turn.ts) resumes that turn: its words lead the new ones, and
 * the message they end with replaces the last.
 */
export function interrupt(s: TurnState, reason: InterruptReason, speechStartToConfirmMs: number | undefined, resumeUnheard: boolean): TurnStep {
  const reply = s.reply;
  if (reply.kind !== "playing") return same(s);
  const generation = s.generation + 1;
  const byUser = reason === "speech" || reason === "words";
  const phase = byUser || vadSpeaking(s) ? "user_speaking" : "listening";
  const resumed = resumeUnheard && byUser && resumesTurn(reply, s.voice.startTime);
  const turn = resumed ? resumedTurnState(s, reply) : {};
  return {
    state: { ...s, phase, generation, reply: { kind: "none" }, bargeIn: NO_BARGE_IN, ...turn },
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
