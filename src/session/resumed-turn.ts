/**
 * A turn resumed before its reply was heard (`turn.resumeUnheard`): when the
 * user's speech cuts a reply to their spoken turn that had not reached them,
 * their words so far come back as the start of the turn they go on with, and
 * the message it ends with replaces the last (turn-machine.ts `interrupt` and
 * `startReply`; user-messages.ts carries it out). Pure.
 */
import type { ReplyState, TurnState } from "./turn-types.js";

type Reply = Extract<ReplyState, { kind: "playing" }>;

/**
 * How long before the user's onset a reply may have become audible and still count as unheard (ms). The VAD
 * dates the onset from its speech frames, after the worker may already have paused the bot on the voice's
 * first frames, and a reply's first sound is the start of its first syllable. On the turn bench's lists and afterthoughts, the
 * replies it let through had rendered at most 50 ms of audio past the output latency, most of them none.
 */
export const UNHEARD_LEAD_MS = 100;

/**
 * The reply answered a spoken turn, and the user began speaking again before any of it reached them: it was
 * not audible yet, or it became audible only just before their onset (UNHEARD_LEAD_MS) or after it (the
 * barge-in's pause then held it).
 */
export function resumesTurn(reply: Reply, onset: number | undefined): boolean {
  if (reply.turnText === undefined) return false;
  if (!reply.audible) return true;
  return reply.audibleAt !== undefined && onset !== undefined && reply.audibleAt >= onset - UNHEARD_LEAD_MS / 1000;
}

/** The turn goes on from the cut reply's words; words still due to it (its flush missed) are this turn's now. */
export function resumedTurnState(s: TurnState, reply: Reply): Pick<TurnState, "userWords" | "turn" | "stt"> {
  return { userWords: [reply.turnText ?? "", ...s.userWords], turn: { ...s.turn, resumed: true }, stt: s.stt.kind === "down" ? { kind: "down" } : { kind: "up" } };
}
