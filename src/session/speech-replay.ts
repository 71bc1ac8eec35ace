/**
 * The microphone audio the STT may not have turned into words yet, kept so
 * that a new STT stream can be given it when the old one fails.
 *
 * A streaming STT answers with a delay (Kyutai's model looks 0.5 s ahead), so
 * when its socket dies mid-sentence the last half second or more of speech is
 * gone with it, and so is whatever the microphone captured while the session
 * reconnected. This buffer holds every frame sent (or meant to be sent) to the
 * stream, in the stream's own timeline, and lets go of what the STT has
 * confirmed: the audio before the end of its last finished word (`word-end`).
 * On reconnect `rebase()` hands back the rest, which becomes the start of the
 * new stream's timeline. Bounded: at most `maxSeconds` of audio is kept.
 *
 * A word whose end has not come yet is "open": the audio from its start is
 * kept, and rebase() says so, because the new stream will hear that word again
 * and the caller must not count it twice.
 *
 * Pure: no DOM, no clock.
 */
type Pcm = Float32Array | Int16Array;

interface Frame {
  pcm: Pcm;
  /** First sample of the frame in the stream's timeline. */
  start: number;
  /** When the frame's last sample was captured (performance.now()), if known. */
  capturedAtMs?: number;
}

/**
 * How far back a word's capture time can be found, whatever was trimmed: an STT's lag, with room. A
 * starved recogniser has returned words 9 s late; a word whose time was lost is judged on arrival,
 * and the bot's echo then passes for the user's words. The times cost a few numbers a frame.
 */
const TIMES_SECONDS = 20;

/** A frame louder than this RMS (0..1) holds sound, perhaps speech the VAD has not called yet. */
const SOUND_RMS = 0.01;

/** True when the frame's RMS (s16 scaled to 0..1) is above `rms`. */
function louder(pcm: Pcm, rms: number): boolean {
  const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
  return Math.sqrt(sum / Math.max(1, pcm.length)) * scale > rms;
}

export class SpeechReplay {
  readonly #sampleRate: number;
  readonly #maxSamples: number;
  #frames: Frame[] = [];
  #kept = 0;
  /**
   * When each recent frame was captured, kept apart from the replay's frames:
   * those go as soon as a word end says they are transcribed, and a service's
   * word end past the audio it had (seen: the reference STT's EndWord 3 s
   * ahead of the stream, under load) dropped them all, so every later word's
   * capture time was lost for seconds, and the bot's echo words were judged
   * by their arrival (they led user turns: "go out can you help me").
   */
  #times: { start: number; end: number; capturedAtMs: number }[] = [];
  /** Samples of the stream's timeline so far (the next frame's start). */
  #cursor = 0;
  /** Audio before this sample has been turned into finished words. */
  #confirmed = 0;
  /** The start (in samples) of a word whose end has not come yet. */
  #openWordAt: number | undefined;
  /** Audio before this sample was given up on (giveUp): never replayed, and words in it open nothing. */
  #givenUpTo = 0;
  /** Samples of sound the bound dropped before the STT confirmed them: speech a new stream will not hear. */
  #lostSound = 0;

  constructor(sampleRate: number, maxSeconds: number) {
    this.#sampleRate = sampleRate;
    this.#maxSamples = Math.max(0, Math.round(maxSeconds * sampleRate));
  }

  /** Seconds of audio held now. */
  get seconds(): number {
    return this.#kept / this.#sampleRate;
  }

  /** A frame of the stream's audio, in order (live or replayed). */
  record(pcm: Pcm, capturedAtMs?: number): void {
    this.#frames.push({ pcm, start: this.#cursor, capturedAtMs });
    if (capturedAtMs !== undefined) {
      this.#times.push({ start: this.#cursor, end: this.#cursor + pcm.length, capturedAtMs });
      const oldest = this.#cursor - TIMES_SECONDS * this.#sampleRate;
      while (this.#times.length > 0 && this.#times[0].end < oldest) this.#times.shift();
    }
    this.#cursor += pcm.length;
    this.#kept += pcm.length;
    this.#trim();
  }

  /**
   * `samples` of the stream's timeline that carry no microphone audio (a
   * flush's silence padding, sent by the provider): the service's word times
   * count them, so the timeline moves on with nothing held. Without this,
   * after the first Kyutai flush every word's time pointed 0.5 s later into
   * the microphone's audio than where it was spoken, and its capture time was
   * lost (the echo-word check then judged lagging echo words by their arrival).
   */
  pad(samples: number): void {
    if (samples > 0) this.#cursor += samples;
  }

  /**
   * When the audio `startS` into the stream was captured (performance.now()),
   * from the frame that holds it; undefined when that frame is no longer held
   * or came without a capture time. An STT word arrives late (its model's
   * look-ahead, the network); this says when it was spoken.
   */
  spokenAtMs(startS: number): number | undefined {
    const at = Math.round(startS * this.#sampleRate);
    const frame = this.#times.find((f) => f.start <= at && at < f.end);
    if (!frame) return undefined;
    return frame.capturedAtMs - ((frame.end - at) / this.#sampleRate) * 1000;
  }

  /** The STT recognised a word that starts `startS` into the stream. */
  word(startS: number): void {
    const at = Math.round(startS * this.#sampleRate);
    // A late word of given-up audio is the caller's; the new stream never hears that audio again.
    if (at < this.#givenUpTo) return;
    this.#openWordAt = Math.max(this.#confirmed, at);
  }

  /** The STT's last word ended `stopS` into the stream: everything before is transcribed. */
  wordEnd(stopS: number): void {
    this.#openWordAt = undefined;
    // Never past the audio sent: a service's stop time ahead of it would let the audio after it go unreplayed.
    const confirmed = Math.max(this.#confirmed, Math.min(this.#cursor, Math.round(stopS * this.#sampleRate)));
    // The old stream heard what the bound dropped before this word's end: nothing of it is lost.
    if (confirmed > this.#confirmed) this.#lostSound = 0;
    this.#confirmed = confirmed;
    this.#trim();
  }

  /**
   * For a new stream: the audio the old one did not finish transcribing,
   * oldest first, which now starts the new stream's timeline. `reopened`: the
   * audio begins at a word the caller already has (its end never came), so the
   * new stream will recognise it again. `lostSeconds`: sound that the bound
   * (`maxSeconds`) dropped before any stream confirmed it, so no stream hears
   * it: the start of a question said while a slow reconnect went on.
   */
  rebase(): { frames: Pcm[]; reopened: boolean; lostSeconds: number } {
    const from = this.#openWordAt ?? this.#confirmed;
    const kept = this.#frames.filter((f) => f.start + f.pcm.length > from);
    // Only when the word's start is still held: a word cut by the bound stays the caller's.
    const reopened = this.#openWordAt !== undefined && kept.length > 0 && kept[0].start <= this.#openWordAt;
    const frames = kept.map((f) => f.pcm);
    const lostSeconds = this.#lostSound / this.#sampleRate;
    this.clear();
    for (const f of kept) this.record(f.pcm, f.capturedAtMs);
    return { frames, reopened, lostSeconds };
  }

  /**
   * The audio so far was given up on (the uplink's "end" policy ended the
   * stream): it is dropped and never replayed. What is recorded from now on,
   * the speech caught while the link reconnects, still goes to the new stream.
   */
  giveUp(): void {
    this.#givenUpTo = this.#cursor;
    this.#confirmed = Math.max(this.#confirmed, this.#cursor);
    this.#openWordAt = undefined;
    this.#lostSound = 0;
    this.#trim();
  }

  /**
   * True when some frame held is louder than `rms` (0..1; s16 is scaled):
   * speech the VAD may not have called yet. The VAD decides a speech start a
   * frame or more after the sound began (pre-speech pad, model latency), so a
   * stream that reconnects at that moment must not judge by the VAD alone.
   */
  holdsSound(rms = SOUND_RMS): boolean {
    return this.#frames.some(({ pcm }) => louder(pcm, rms));
  }

  /** Forgets all audio and starts a new timeline at 0 (a new stream with nothing to replay). */
  clear(): void {
    this.#frames = [];
    this.#times = [];
    this.#kept = 0;
    this.#cursor = 0;
    this.#confirmed = 0;
    this.#openWordAt = undefined;
    this.#givenUpTo = 0;
    this.#lostSound = 0;
  }

  /** Drops frames wholly before the confirmed point, then the oldest past the bound. */
  #trim(): void {
    while (this.#frames.length > 0) {
      const first = this.#frames[0];
      const transcribed = first.start + first.pcm.length <= this.#confirmed;
      if (!transcribed && this.#kept <= this.#maxSamples) break;
      if (!transcribed && louder(first.pcm, SOUND_RMS)) this.#lostSound += first.pcm.length;
      this.#frames.shift();
      this.#kept -= first.pcm.length;
    }
  }
}
