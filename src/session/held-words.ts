/**
 * Words heard near the bot's audio with no real speech yet to vouch for them
 * (TurnConfig.vouchWordsMs, the echo guard's word window): the turn machine
 * holds them, and real speech soon after makes them the user's, while a
 * misfire or the window passing makes them echo. These are its pure helpers.
 */

/** A word held for vouching: when it arrived, and when its audio was captured (if known). */
export interface HeldWord {
  readonly text: string;
  readonly at: number;
  readonly spokenAt?: number;
}

/** The vouching window without the echo guard (confirmByWords off): about the STT's lag. */
const HELD_WORD_MS = 1500;

/** How long real speech vouches for the words after it, and a held word waits for it: the STT's lag. */
export function vouchMs(vouchWordsMs: number | undefined): number {
  return vouchWordsMs ?? HELD_WORD_MS;
}

/**
 * True when real speech was heard recently enough to vouch for a word that came at `at`, or when the
 * word's audio was captured (`spokenAt`) during the last real speech: an STT that lags (a loaded
 * machine, a slow service) returns the last words of a question more than the window after the VAD's
 * speech end, and they were dropped as echo though the VAD had vouched for their very audio.
 * `realSpeechAt` is the last real speech's end once it ended (a misfire leaves it at an earlier one,
 * before `speechStartAt`: nothing is vouched by a burst the VAD did not confirm).
 */
export function vouchedAt(speech: { realSpeech: boolean; realSpeechAt: number; speechStartAt: number }, at: number, vouchWordsMs: number | undefined, spokenAt?: number): boolean {
  if (speech.realSpeech || at - speech.realSpeechAt <= vouchMs(vouchWordsMs)) return true;
  return spokenAt !== undefined && spokenAt >= speech.speechStartAt - SPOKEN_SLACK_MS && spokenAt <= speech.realSpeechAt;
}

/** Held words still within the window at `at`, and the texts of those past it (echo). */
export function splitHeld(held: readonly HeldWord[], at: number, vouchWordsMs: number | undefined): { kept: readonly HeldWord[]; expired: string[] } {
  const windowMs = vouchMs(vouchWordsMs);
  return { kept: held.filter((w) => at - w.at <= windowMs), expired: held.filter((w) => at - w.at > windowMs).map((w) => w.text) };
}

/**
 * How much earlier than the VAD's speech start a user's word may seem to
 * start: the VAD decides a few frames after the onset, and reaches the main
 * thread later still, while an STT's word start times can lead the sound by
 * a frame or two.
 */
const SPOKEN_SLACK_MS = 400;

/** The word's audio was captured before the utterance at `speechStartAt` began (unknown: no). */
export function spokenBefore(w: { spokenAt?: number }, speechStartAt: number): boolean {
  return w.spokenAt !== undefined && w.spokenAt < speechStartAt - SPOKEN_SLACK_MS;
}
