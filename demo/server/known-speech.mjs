// The deterministic recogniser for tests: a decoder that knows the test fixtures' words.
//
// pocketsphinx hears the same fixture a little differently on each run: the browser's capture
// starts at another phase, the VAD's pre-roll differs, and a loaded machine changes which frames
// arrive together. Tests that assert on words then fail without a bug ("help her own" for "help
// me"). In this mode the STT recognises an utterance by its loudness envelope: when it lines up
// with a known fixture's, the words are the ones the real recogniser heard in that fixture on a
// quiet machine (written beside it by scripts/make-fixtures.mjs --recognise), each given once the
// audio past its end has arrived. Audio that matches no fixture (the bot's echo, a TTS round trip)
// gets pocketsphinx's words as before, so the mode changes nothing but the fixtures' words.
//
// The envelope is the RMS of 10 ms frames (one pocketsphinx frame) in two bands, below and above
// about 1 kHz, compared by normalised correlation over the last WINDOW_FRAMES, so gain, resampling
// and a phase shift do not matter. Both bands must line up: with one band alone, a stretch of the
// bot's own voice (the same synthesiser) once lined up with a fixture by chance. (Loudness, the
// cube root, would forgive the browser's compression better, but it tells phrases apart worse: the
// bot's replies then lined up with fixtures at 0.98.)
//
// Through the browser's gain control, which compresses speech, a fixture's correlation wanders
// around MIN_CORRELATION as the window slides: an utterance that already lines up nearly as well
// with one fixture, and far better than with any other, is waited for longer before pocketsphinx's
// words are given.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readWav } from "./wav.mjs";
import { rememberHypothesis, stableWordCount } from "./core/word-stability.mjs";
import { STABLE_FRAMES } from "./recogniser.mjs";
import { BandEnvelope, bestLag, envelopeOf } from "./core/band-envelope.mjs";

/** Frames compared at each alignment. */
const WINDOW_FRAMES = 80;
/** Voiced frames a window needs before it is compared (fewer at an utterance's end). */
const MIN_VOICED = 35;
const MIN_VOICED_FINAL = 15;
/** Frames an unmatched utterance waits before pocketsphinx's words are given (matching goes on: a
 * fixture said right after the bot's echo is one utterance with it). */
const GIVE_UP_FRAMES = 90;
/** A fixture that already lines up nearly well enough, and far better than any other, is waited for
 * longer (see the header). */
const PROMISING_CORRELATION = 0.9;
const PROMISING_MARGIN = 0.1;
const PROMISING_GIVE_UP_FRAMES = 160;
/**
 * A shorter window, for an utterance that began with other speech run straight into a fixture (the
 * bot's echo, a reconnect's replay, a looping fake microphone): the full window lines up only once it
 * holds none of that speech, and by then pocketsphinx's words for the fixture's start may have gone
 * out. A short window must line up better, by a wider margin, at the same lag twice in a row.
 */
const SHORT_WINDOW_FRAMES = 40;
const SHORT_MIN_VOICED = 30;
const SHORT_MIN_CORRELATION = 0.95;
const SHORT_MIN_MARGIN = 0.1;
const SHORT_LAG_TOLERANCE = 2;
/** Hypotheses a pocketsphinx word must hold, with the word after it, before it counts as sent for good:
 * one fewer than the protocols that never take a word back wait for (STABLE_FRAMES). Counted sent
 * sooner, a word only ever keeps a fixture from taking over; never does a fixture contradict it. */
const GIVEN_AFTER_HYPOTHESES = STABLE_FRAMES - 1;
/** Frames a found alignment is refined over (more frames, a sharper peak). */
const REFINE_FRAMES = 200;
/** Frames between alignments once matched (tracks a gap in the audio). */
const REALIGN_EVERY = 10;
/** Correlation an alignment needs, and by how much it must beat the best other fixture. */
const MIN_CORRELATION = 0.95;
const MIN_MARGIN = 0.03;
/** A frame quieter than this (RMS of 16-bit samples) is not voiced. */
const QUIET_RMS = 150;

/**
 * What the matcher decided, for a test that failed: KNOWN_SPEECH_DEBUG=1 prints it to stderr,
 * KNOWN_SPEECH_LOG=<file> appends it there with the time (the browser suite's backends do).
 * @param {() => string} line
 */
function debug(line) {
  const log = process.env.KNOWN_SPEECH_LOG;
  if (!log && !process.env.KNOWN_SPEECH_DEBUG) return;
  const text = line();
  if (process.env.KNOWN_SPEECH_DEBUG) console.error(text);
  if (!log) return;
  const entry = `${new Date().toISOString()} ${text}\n`;
  try {
    appendFileSync(log, entry);
  } catch {
    // Its folder is made only when missing (Playwright empties test-results/ as a run starts), not on
    // every line; a log that still cannot be written loses the log, never the words.
    try {
      mkdirSync(dirname(log), { recursive: true });
      appendFileSync(log, entry);
    } catch {
      // as above
    }
  }
}

/**
 * A fixture the recogniser knows: its envelope and the words the real recogniser heard in it,
 * in seconds from the file's start.
 * @typedef {import("./core/band-envelope.mjs").Envelope} Envelope
 * @typedef {{ name: string, envelope: Envelope, words: { word: string, start: number, end: number }[] }} KnownClip
 */

/**
 * Reads every `*.json` sidecar in `dir` that has a `recognised` list, with its WAV (16 kHz mono).
 * @param {string} dir
 * @returns {KnownClip[]}
 */
export function loadKnownSpeech(dir) {
  /** @type {KnownClip[]} */
  const clips = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    const sidecar = JSON.parse(readFileSync(join(dir, file), "utf8"));
    if (!Array.isArray(sidecar.recognised)) continue;
    const wav = readWav(readFileSync(join(dir, file.replace(/\.json$/, ".wav"))));
    if (wav.sampleRate !== 16000 || wav.channels !== 1) throw new Error(`${file}: known speech must be 16 kHz mono (got ${wav.sampleRate} Hz, ${wav.channels} channels)`);
    // pocketsphinx's last word runs on into the silence after it; the speech itself ends at the
    // sidecar's offset, and a word is heard once the audio up to its speech's end has come.
    const speechEnd = typeof sidecar.offsetSamples === "number" ? Math.ceil((sidecar.offsetSamples / wav.sampleRate) * 100) / 100 : Infinity;
    const words = sidecar.recognised.map((/** @type {{ word: string, start: number, end: number }} */ w) => ({ ...w, end: Math.min(w.end, Math.max(w.start + 0.01, speechEnd)) }));
    clips.push({ name: file.replace(/\.json$/, ""), envelope: envelopeOf(wav.samples), words });
  }
  if (clips.length === 0) throw new Error(`no known speech in ${dir}: no sidecar has a "recognised" list (run node scripts/make-fixtures.mjs --recognise)`);
  return clips;
}

/**
 * A pocketsphinx Decoder's interface over a real decoder: the words of a known clip when the
 * utterance matches one, the real decoder's otherwise. See the header.
 */
export class KnownSpeechDecoder {
  /** @param {import("./pocketsphinx.mjs").Decoder} inner @param {KnownClip[]} clips */
  constructor(inner, clips) {
    this.inner = inner;
    this.clips = clips;
    this.clearUtterance();
  }

  clearUtterance() {
    this.heard = new BandEnvelope();
    /** @type {{ clip: KnownClip, lag: number, firstLag: number } | null} */
    this.match = null;
    this.gaveUp = false;
    /** pocketsphinx's words stand for the rest of this utterance. */
    this.settled = false;
    this.ended = false;
    this.lastAligned = 0;
    /** pocketsphinx's hypotheses since its words were given, and its words a protocol may have sent for good. */
    /** @type {string[][]} */
    this.givenHypotheses = [];
    /** @type {import("./pocketsphinx.mjs").Segment[]} */
    this.givenWords = [];
    /** The short window's last lining-up, waiting to be confirmed at the next alignment. */
    /** @type {{ clip: KnownClip, lag: number } | null} */
    this.shortCandidate = null;
  }

  startUtterance() {
    if (!this.inner.inUtterance) this.clearUtterance();
    this.inner.startUtterance();
  }

  /** @param {Int16Array} pcm16k */
  async process(pcm16k) {
    if (!this.inner.inUtterance) this.clearUtterance();
    // Once matched, pocketsphinx's words are not needed: it is spared the rest (on a loaded machine
    // its decoding is what made the STT lag).
    if (!this.match) await this.inner.process(pcm16k);
    this.heard.push(pcm16k);
    this.align(false);
    this.noteGivenWords();
  }

  /** Once pocketsphinx's words are given, which of them a protocol may have sent for good. */
  noteGivenWords() {
    if (this.match || !this.gaveUp) return;
    const words = this.inner.segments();
    this.givenHypotheses = rememberHypothesis(this.givenHypotheses, words.map((w) => w.word), GIVEN_AFTER_HYPOTHESES);
    const stable = stableWordCount(this.givenHypotheses, GIVEN_AFTER_HYPOTHESES, false);
    for (let i = this.givenWords.length; i < stable; i++) this.givenWords.push(words[i]);
  }

  /**
   * The envelope up to the last voiced frame, and the window compared there: a burst and then
   * silence lines up with the end of any clip.
   */
  voicedWindow() {
    let last = this.heard.length - 1;
    while (last >= 0 && this.heard.level(last) < QUIET_RMS) last--;
    const heard = this.heard.take(last + 1);
    const count = Math.min(last + 1, WINDOW_FRAMES);
    let voiced = 0;
    for (let i = last + 1 - count; i <= last; i++) if (this.heard.level(i) >= QUIET_RMS) voiced++;
    return { heard, count, voiced };
  }

  /** @param {boolean} final the utterance ends: decide with what there is */
  align(final) {
    const n = this.heard.length;
    if (n === 0) return;
    if (this.match) {
      if (n - this.lastAligned < REALIGN_EVERY) return;
      this.lastAligned = n;
      const { heard, count, voiced } = this.voicedWindow();
      if (count === 0 || voiced < MIN_VOICED) return;
      // Audio is never replayed backwards, so the clip only moves on (a gap moves it further).
      const again = bestLag(heard, count, this.match.clip.envelope, this.match.lag - 2);
      if (again.correlation >= MIN_CORRELATION) {
        const lag = refine(heard, this.match.clip, again.lag);
        if (Math.abs(lag - this.match.lag) > 2) debug(() => `known speech at ${n}: ${this.match?.clip.name} realigned from lag ${this.match?.lag} to ${lag} (${again.correlation.toFixed(3)})`);
        this.match.lag = lag;
      }
      return;
    }
    if (this.settled || (n - this.lastAligned < REALIGN_EVERY && !final)) return;
    const { heard, count, voiced } = this.voicedWindow();
    if (voiced < MIN_VOICED && !final) {
      if (n >= 2 * GIVE_UP_FRAMES) this.gaveUp = true;
      return;
    }
    this.lastAligned = n;
    if (voiced >= MIN_VOICED_FINAL) {
      const { ranked, first, rival } = this.rank(heard, count);
      debug(() => `known speech at ${n}: ${ranked.slice(0, 4).map((r) => `${r.clip.name} ${r.correlation.toFixed(3)}@${r.lag}`).join(", ")}${this.gaveUp ? " (pocketsphinx's words given)" : ""}`);
      // The best clip of other words (`rival`) must be clearly worse (a fixture and its late-start twin line up alike).
      const short = first.correlation >= MIN_CORRELATION ? undefined : this.shortWindowMatch(heard);
      if ((first.correlation >= MIN_CORRELATION && (!rival || first.correlation - rival.correlation >= MIN_MARGIN)) || short?.confirmed) {
        const found = short?.confirmed ? short : first;
        // Lags are of the envelope trimmed at its last voiced frame; the same frames index the whole utterance.
        const lag = short?.confirmed ? short.lag : refine(heard, first.clip, first.lag);
        // pocketsphinx's words, once given, are never revised: a fixture found after them takes over only
        // where their audio ends (the bot's echo, then a question); else the utterance stays pocketsphinx's.
        if (this.gaveUp && !this.startsAfterGivenWords(found.clip, lag)) {
          debug(() => `known speech at ${n}: ${found.clip.name} at lag ${lag} begins before pocketsphinx's words sent: settled on them`);
          this.settled = true;
          return;
        }
        this.match = { clip: found.clip, lag, firstLag: lag };
        debug(() => `known speech at ${n}: matched ${found.clip.name} at lag ${lag} (${found.correlation.toFixed(3)}${short?.confirmed ? ", short window" : ""}, next other words ${(short?.confirmed ? short.rival : rival?.correlation)?.toFixed(3) ?? "none"})${this.gaveUp ? " after pocketsphinx's words" : ""}`);
        return;
      }
      const promising = short !== undefined || (first.correlation >= PROMISING_CORRELATION && (!rival || first.correlation - rival.correlation >= PROMISING_MARGIN));
      if (promising && n < PROMISING_GIVE_UP_FRAMES && !final) return;
    }
    if (n >= GIVE_UP_FRAMES || final) this.gaveUp = true;
  }

  /**
   * Every clip at its best lag for the last `count` frames of `heard`, best first; `rival`: the best
   * clip of other words than the first's. @param {Envelope} heard @param {number} count
   */
  rank(heard, count) {
    const ranked = this.clips.map((clip) => ({ clip, ...bestLag(heard, count, clip.envelope) })).sort((a, b) => b.correlation - a.correlation);
    const [first] = ranked;
    const key = wordsKey(first.clip);
    return { ranked, first, rival: ranked.find((r) => wordsKey(r.clip) !== key) };
  }

  /**
   * The short window's lining-up (see SHORT_WINDOW_FRAMES), `confirmed` once the same words lined up
   * at the same lag at the alignment before; undefined when nothing lines up well enough.
   * @param {Envelope} heard the envelope up to the last voiced frame
   * @returns {{ clip: KnownClip, lag: number, correlation: number, rival: number | undefined, confirmed: boolean } | undefined}
   */
  shortWindowMatch(heard) {
    const candidate = this.shortCandidate;
    this.shortCandidate = null;
    const count = Math.min(heard.low.length, SHORT_WINDOW_FRAMES);
    let voiced = 0;
    for (let i = heard.low.length - count; i < heard.low.length; i++) if (Math.hypot(heard.low[i], heard.high[i]) >= QUIET_RMS) voiced++;
    if (voiced < SHORT_MIN_VOICED) return undefined;
    const { first, rival: rivalClip } = this.rank(heard, count);
    const rival = rivalClip?.correlation;
    if (first.correlation < SHORT_MIN_CORRELATION || (rival !== undefined && first.correlation - rival < SHORT_MIN_MARGIN)) return undefined;
    // Clips of the same words line up alike at their own lags: the lag is compared for the same clip.
    const confirmed = candidate?.clip === first.clip && Math.abs(candidate.lag - first.lag) <= SHORT_LAG_TOLERANCE;
    this.shortCandidate = { clip: first.clip, lag: first.lag };
    debug(() => `known speech: short window ${first.clip.name} ${first.correlation.toFixed(3)}@${first.lag}, next other words ${rival?.toFixed(3) ?? "none"}${confirmed ? " (confirmed)" : ""}`);
    return { clip: first.clip, lag: first.lag, correlation: first.correlation, rival, confirmed };
  }

  /**
   * Whether `clip` at `lag` begins its first word of this utterance after every word of pocketsphinx's
   * a protocol may have sent for good ended. @param {KnownClip} clip @param {number} lag
   */
  startsAfterGivenWords(clip, lag) {
    const first = clip.words.find((w) => Math.round(((w.start + w.end) / 2) * 100) >= lag);
    if (!first) return false;
    const speechAt = Math.round(first.start * 100) - lag;
    return this.givenWords.every((w) => w.endFrame < speechAt);
  }

  /** @returns {import("./pocketsphinx.mjs").Segment[]} */
  segments() {
    if (this.match) {
      const known = this.knownSegments();
      if (!this.gaveUp) return known;
      // Matched after pocketsphinx's words were given (the bot's echo, then a fixture): the words sent
      // for good, all of which ended before the fixture's speech began (startsAfterGivenWords), and its
      // others that did, then the fixture's.
      const speechAt = known.length > 0 ? known[0].startFrame : Infinity;
      const unsent = this.inner.segments().slice(this.givenWords.length).filter((w) => w.endFrame < speechAt);
      return [...this.givenWords, ...unsent, ...known];
    }
    // Until the utterance is matched or given up, no words: a guess now could become final.
    if (!this.gaveUp) return [];
    return this.inner.segments();
  }

  knownSegments() {
    const { clip, lag, firstLag } = /** @type {NonNullable<KnownSpeechDecoder["match"]>} */ (this.match);
    const heardUpTo = this.heard.length + lag;
    /** @type {import("./pocketsphinx.mjs").Segment[]} */
    const out = [];
    for (const w of clip.words) {
      const startFrame = Math.round(w.start * 100);
      const endFrame = Math.round(w.end * 100);
      // A word is heard once the audio past its end has arrived; when the utterance ends (its endpoint,
      // or a client's flush cutting a word), once its middle has, as a recogniser finishing its last
      // hypothesis would. A word whose middle came before this utterance's audio began belongs to an
      // earlier one.
      const middle = (startFrame + endFrame) / 2;
      if ((this.ended ? middle : endFrame) > heardUpTo || middle < firstLag) continue;
      out.push({ word: w.word, startFrame: Math.max(0, startFrame - lag), endFrame: Math.max(0, endFrame - 1 - lag) });
    }
    return out;
  }

  endUtterance() {
    if (!this.match) this.align(true);
    this.ended = true;
    this.inner.endUtterance();
    debug(() => {
      const how = this.match ? `${this.match.clip.name} at lag ${this.match.lag} (first ${this.match.firstLag})${this.gaveUp ? " after pocketsphinx's words" : ""}` : `no match${this.settled ? " (settled on pocketsphinx)" : ""}`;
      return `known speech: utterance of ${this.heard.length} frames ended: ${how}: "${this.segments().map((w) => w.word).join(" ")}"`;
    });

  }

  get inUtterance() {
    return this.inner.inUtterance;
  }

  reset() {
    this.inner.reset();
    this.clearUtterance();
  }

  free() {
    this.inner.free();
  }
}

/**
 * The best lag near `lag` over up to REFINE_FRAMES of the latest audio: a short window's peak is
 * flat over a few frames; a longer one places the words within a frame.
 * @param {Envelope} heard @param {KnownClip} clip @param {number} lag
 */
function refine(heard, clip, lag) {
  const count = Math.min(heard.low.length, REFINE_FRAMES);
  const near = bestLag(heard, count, clip.envelope, lag - 8, lag + 8);
  return near.correlation >= MIN_CORRELATION ? near.lag : lag;
}

/** @param {KnownClip} clip */
function wordsKey(clip) {
  return clip.words.map((w) => w.word).join(" ");
}

/**
 * A DecoderPool whose decoders know `clips`.
 * @param {import("./pocketsphinx.mjs").DecoderPool} pool @param {KnownClip[]} clips
 */
export function knownSpeechPool(pool, clips) {
  return {
    /** @param {import("./knobs.mjs").Knobs} [knobs] */
    async acquire(knobs) {
      const inner = await pool.acquire();
      // known_speech=0: pocketsphinx alone, for a test of real recognition.
      if (!inner || knobs?.knownSpeech === 0) return inner;
      return /** @type {import("./pocketsphinx.mjs").Decoder} */ (/** @type {unknown} */ (new KnownSpeechDecoder(inner, clips)));
    },
    /** @param {import("./pocketsphinx.mjs").Decoder} decoder */
    release(decoder) {
      const inner = decoder instanceof KnownSpeechDecoder ? decoder.inner : decoder;
      pool.release(inner);
    },
    prewarm: () => pool.prewarm(),
    close: () => pool.close(),
  };
}
