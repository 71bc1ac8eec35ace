/**
 * The barge-in core: pause early, confirm late. Pure: no timers, no I/O, no
 * clock (times come in with the calls, in ms of any one clock).
 *
 * While a reply holds the floor, the VAD's speech start pauses its playback at
 * once. The pause costs nothing and loses nothing (the playback worklet replays
 * the faded samples on resume), so it fires on the earliest cue. The
 * interruption itself is only confirmed by a stronger cue: `minSpeechMs` of
 * speech frames (the VAD's speechRealStart, or a speech end after it), or an
 * STT word. A misfire (the VAD calls the burst too short) resumes playback and
 * drops the words the STT found in it (a cough, a bump).
 *
 * The pause carries a token: the generation of the reply it is for. The
 * playback worklet ignores a pause or resume whose token is not the generation
 * it renders, so a late pause from the VAD worker can never hold a newer reply.
 * That is what makes the pause one decision with one owner, whichever thread
 * delivers it.
 */

export type BargeIn =
  | { readonly kind: "idle" }
  /**
   * Playback of reply `token` is paused, waiting for a confirmation or a
   * misfire. `wordsBefore`: the user's words before it, so the words of a
   * misfire can be dropped.
   */
  | { readonly kind: "pending"; readonly token: number; readonly startedAt: number; readonly wordsBefore: number; readonly backchannel?: BackchannelWait };

/**
 * With the backchannel policy (backchannel.ts): the speech over the bot so far.
 * `words`: the backchannel words heard, held out of the user's words until the
 * barge-in is confirmed; `speechAt`: the current utterance's onset (ms), and
 * `onsetContextTime` (AudioContext s, when the VAD gave it); `endedAt` and
 * `speechMs`: once the VAD ended it with no word yet, when, and how long it
 * was voiced (then the policy waits for its words). `misfired`: the VAD called
 * it a misfire; playback went on, and only an interrupting word of the burst,
 * within the word wait, can still cut the reply.
 */
export interface BackchannelWait {
  readonly words: readonly string[];
  readonly speechAt: number;
  readonly onsetContextTime?: number;
  readonly endedAt?: number;
  readonly speechMs?: number;
  readonly misfired?: boolean;
}

export type BargeInReason = "speech" | "words";

export type PlaybackEffect = { readonly kind: "pausePlayback"; readonly token: number } | { readonly kind: "resumePlayback"; readonly token: number };

export const NO_BARGE_IN: BargeIn = { kind: "idle" };

/**
 * Speech started while reply `token` holds the floor: pause its playback,
 * unless the VAD worker already did (`pausedByWorker`).
 */
export function beginBargeIn(
  token: number,
  cue: { pausedByWorker: boolean; at: number; wordsBefore: number },
): { bargeIn: BargeIn; effects: PlaybackEffect[] } {
  return {
    bargeIn: { kind: "pending", token, startedAt: cue.at, wordsBefore: cue.wordsBefore },
    effects: cue.pausedByWorker ? [] : [{ kind: "pausePlayback", token }],
  };
}

/** A confirming cue: the pending barge-in becomes an interruption, `confirmMs` after its speech started. */
export function confirmBargeIn(bargeIn: BargeIn, at: number): { bargeIn: BargeIn; confirmMs: number } | undefined {
  if (bargeIn.kind !== "pending") return undefined;
  return { bargeIn: NO_BARGE_IN, confirmMs: Math.max(0, at - bargeIn.startedAt) };
}

/**
 * The VAD called the burst a misfire: resume playback (unless the worker did),
 * and keep only the user's words from before it.
 */
export function misfireBargeIn(
  bargeIn: BargeIn,
  resumedByWorker: boolean,
): { bargeIn: BargeIn; effects: PlaybackEffect[]; wordsBefore: number } | undefined {
  if (bargeIn.kind !== "pending") return undefined;
  return {
    bargeIn: NO_BARGE_IN,
    effects: resumedByWorker ? [] : [{ kind: "resumePlayback", token: bargeIn.token }],
    wordsBefore: bargeIn.wordsBefore,
  };
}
