// `npm run bench -- noise`, the page side (issue #40). One session per call
// of `run()`, under the options given (the onset cue on, off, the default):
// first each room sound of test/fixtures/noise is played into the mic over
// the bot's reply, then recordings of real people talk over it.
//
// The user wears headphones: the mic hears the room and the user, never the
// bot. So the reply's audio is replaced by steady noise (bench-session.js
// `steadyReply`): its content reaches no one, and a reply with no quiet of
// its own makes every silence in the output one that the session made. What
// a listener feels is read from the recorded output:
// - a noise event: the sound's span and TAIL_S after it (the cue's longest
//   hold and Silero's redemption fit in it). The output's level is read in
//   windows of LEVEL_WINDOW samples against the reply's own level in the
//   200 ms before the event. An audible pause is a run of MIN_PAUSE_S or
//   more under it by PAUSE_DB (what a listener hears as the bot stopping:
//   silence, or a duck as deep as that); a dip is such a run under it by
//   DIP_DB or more (a duck: the bot plays on, softer), pauses included.
//   Each starts in the window and is followed to its end; silencedMs adds
//   up the pauses, dippedMs the dips. A false interruption is a barge-in
//   confirmed (reason speech or words) in the window; the reply's audio it
//   threw away unheard is lostMs. A quiet-room control is the same window
//   with no sound.
// - a speech trial: from the recording's labelled onset to the point after
//   which the output stays silent (every sample under SILENT) until the
//   barge-in's flush (the cue may pause before the onset, on a soft start:
//   that counts as 0); onset → ducked likewise to the point after which it
//   stays DIP_DB under the reply's level; confirmed when the session's
//   barge-in confirms within CONFIRM_S.
// An event whose reply ended under it, or was not audible as it began, is
// void and played again over the next reply.
import { SILENT, freshReply, makeBenchSession, until, windowView } from "./bench-session.js";

/** The story runs ~15 s (bench/pages/session/backchannel.js): a window must end before this. */
const REPLY_S = 14;
/** An event starts this long into a reply at the earliest: the bot is well under way. */
const FROM_REPLY_START_S = 1;
/** After a sound ends: the cue's longest hold (480 ms), Silero's redemption and a pause lapse fit in it. */
const TAIL_S = 1.5;
/** A gap in steady sound that a listener hears (ms-scale gaps are audible as clicks). */
const MIN_PAUSE_S = 0.01;
/** An audible pause: the reply this much (dB) under its own level or more: near silence, not a softer bot. */
const PAUSE_DB = 20;
/** A dip: this much (dB) under the reply's level or more (a duck). */
const DIP_DB = 6;
/** The level is read over windows of this many samples (about 2.7 ms at 48 kHz). */
const LEVEL_WINDOW = 128;
/** The span of a quiet-room control (s). */
const CONTROL_S = 2.5;
/** How long a barge-in may take to confirm after a speech onset (s). */
const CONFIRM_S = 8;
/** After the flush's context time, how long until the worklet has surely applied it (one audio callback burst). */
const FLUSH_SLACK_S = 0.02;
/** A pause still open at the window's end is followed this much longer (s). */
const FOLLOW_S = 3;

async function run({ options, events, speech, bedDb }) {
  const t = await makeBenchSession({ story: true, steadyReply: true, sessionOptions: options });
  await t.session.start();
  // A real microphone is never digitally silent: the room of the speech recordings all along (bench-session.js).
  t.noiseBed(bedDb);
  const counts = { voids: 0, freshReplies: 0 };
  try {
    const noise = [];
    for (const event of events) noise.push(await noiseEvent(t, event, counts));
    const talk = [];
    for (const trial of speech) talk.push(await speechTrial(t, trial, counts));
    return { noise, speech: talk, ...counts, errors: t.log.errors, warnings: t.log.warnings.slice(0, 20), overloads: t.log.overloads.length, csp: window.cspViolations };
  } finally {
    await t.close();
  }
}

/** A reply that will still be playing `needS` from now; returns the context time of its first audio. */
async function replyFor(t, needS, counts) {
  // The last trial's turn may be on its way to a reply (a reader goes on for seconds after the barge-in).
  await until(() => t.session.state === "bot_speaking" && t.ttsStreams.at(-1)?.firstAudioContextTime !== undefined, 10000, "a reply").catch(() => {});
  const first = t.ttsStreams.at(-1)?.firstAudioContextTime;
  const fits = t.session.state === "bot_speaking" && first !== undefined && Math.max(t.context.currentTime, first + FROM_REPLY_START_S) + needS < first + REPLY_S;
  if (!fits) await freshReply(t, () => counts.freshReplies++);
  return t.ttsStreams.at(-1).firstAudioContextTime;
}

const confirmed = (log, from) => log.interruptions.slice(from).find((e) => e.reason === "speech" || e.reason === "words");
const vadTrace = (t, from, zero) => t.log.vad.slice(from).map((e) => `${e.kind}${e.direct ? "(d)" : ""}@${Math.round((e.contextTime - zero) * 1000)}`).join(" ");

/** One room sound (or a quiet control: `name` null) over the reply. */
async function noiseEvent(t, event, counts) {
  const seconds = event.name ? event.seconds : CONTROL_S;
  for (let attempt = 1; ; attempt++) {
    const replyStart = await replyFor(t, 0.3 + seconds + TAIL_S, counts);
    const tts = t.ttsStreams.at(-1);
    const before = { interruptions: t.log.interruptions.length, vad: t.log.vad.length, turns: t.log.turns.length };
    const startAt = Math.max(t.context.currentTime + 0.3, replyStart + FROM_REPLY_START_S);
    const clip = event.name ? await t.say(`noise/${event.name}`, { onsetAt: startAt + event.onsetS, gain: event.gain }) : { startedAt: startAt, end: startAt + CONTROL_S };
    const windowEnd = clip.end + TAIL_S;
    await until(() => t.context.currentTime > windowEnd + 0.05, (windowEnd - t.context.currentTime) * 1000 + 10000, "the window's end");
    const interruption = confirmed(t.log, before.interruptions);
    let measured = await measureWindow(t, clip.startedAt, windowEnd, interruption);
    if (measured.openAtEnd && !interruption) {
      // A pause that still holds: followed until the bot plays again (or FOLLOW_S).
      await until(() => t.context.currentTime > windowEnd + FOLLOW_S, FOLLOW_S * 1000 + 5000, "a pause's end").catch(() => {});
      measured = await measureWindow(t, clip.startedAt, windowEnd, confirmed(t.log, before.interruptions));
    }
    // The reply finished under the window (its `turn` came, with no barge-in): its end is no pause.
    const ended = confirmed(t.log, before.interruptions) === undefined && (t.log.turns.length > before.turns || t.session.state !== "bot_speaking");
    if ((!measured.audibleBefore || ended) && attempt < 3) {
      counts.voids++;
      continue;
    }
    const late = confirmed(t.log, before.interruptions);
    const ms = (runs) => Math.round(runs.reduce((a, p) => a + p.ms, 0));
    return {
      name: event.name ?? "quiet",
      level: event.level ?? "control",
      gainDb: event.gainDb ?? null,
      attempt,
      void: !measured.audibleBefore || ended,
      pauses: measured.pauses.length,
      pauseMs: measured.pauses.map((p) => Math.round(p.ms)),
      silencedMs: ms(measured.pauses),
      dips: measured.dips.length,
      dipMs: measured.dips.map((p) => Math.round(p.ms)),
      dippedMs: ms(measured.dips),
      interrupted: late !== undefined,
      reason: late?.reason ?? null,
      // The reply's audio that arrived and was never played: what a false barge-in threw away.
      lostMs: late ? Math.max(0, Math.round(tts.audioS * 1000 - late.heardMs)) : 0,
      vadTrace: vadTrace(t, before.vad, clip.startedAt),
    };
  }
}

/**
 * The pauses that begin in [from, to) (context time), each followed to its
 * end, or to a confirmed barge-in's flush (what comes after is not a pause but
 * the reply's end). `audibleBefore`: the bot played in the 200 ms before.
 */
async function measureWindow(t, from, to, interruption) {
  const sampleRate = t.context.sampleRate;
  const stop = interruption ? interruption.contextTime + FLUSH_SLACK_S : t.context.currentTime - 0.02;
  const rec = await t.recording(from - 0.2, stop);
  const v = windowView(rec, sampleRate);
  const start = v.index(from);
  const end = Math.min(v.index(to), v.length);
  const refDb = levelDb(rec, v, Math.max(0, start - Math.round(0.2 * sampleRate)), start);
  const pauses = runsUnder(rec, v, start, end, refDb - PAUSE_DB, sampleRate);
  const dips = runsUnder(rec, v, start, end, refDb - DIP_DB, sampleRate);
  const openAtEnd = !interruption && dips.some((p) => p.open);
  const audibleBefore = v.lastLoud(Math.max(0, start - Math.round(0.2 * sampleRate)), start) >= 0;
  return { pauses, dips, openAtEnd, audibleBefore };
}

/** RMS level (dBFS) of the known samples in [from, to). */
function levelDb(rec, v, from, to) {
  let sum = 0;
  let n = 0;
  for (let i = from; i < to; i++) {
    if (!v.known(i)) continue;
    sum += rec.samples[i] * rec.samples[i];
    n++;
  }
  return n ? 10 * Math.log10(sum / n + 1e-20) : -Infinity;
}

/**
 * The runs of LEVEL_WINDOW windows under `floorDb` lasting MIN_PAUSE_S or more
 * that begin in [start, end), each followed to its end (`open`: still under at
 * the recording's end). Windows with unknown samples break a run.
 */
function runsUnder(rec, v, start, end, floorDb, sampleRate) {
  const minRun = Math.round(MIN_PAUSE_S * sampleRate);
  const under = (w) => w + LEVEL_WINDOW <= v.length && v.known(w) && v.known(w + LEVEL_WINDOW - 1) && levelDb(rec, v, w, w + LEVEL_WINDOW) < floorDb;
  const runs = [];
  for (let w = start; w < end; w += LEVEL_WINDOW) {
    if (!under(w)) continue;
    let j = w;
    while (under(j)) j += LEVEL_WINDOW;
    if (j - w >= minRun) runs.push({ atMs: ((w - start) / sampleRate) * 1000, ms: ((j - w) / sampleRate) * 1000, open: j + LEVEL_WINDOW > v.length });
    w = j;
  }
  return runs;
}

/** One recording of a real person talking over the reply, its onset `moment` s into it. */
async function speechTrial(t, { name, moment }, counts) {
  const sampleRate = t.context.sampleRate;
  for (let attempt = 1; ; attempt++) {
    const replyStart = await replyFor(t, moment + 1, counts);
    const before = { interruptions: t.log.interruptions.length, vad: t.log.vad.length };
    const spoken = await t.say(name, { onsetAt: Math.max(t.context.currentTime + 0.6, replyStart + moment) });
    await until(() => confirmed(t.log, before.interruptions) !== undefined, (spoken.onset - t.context.currentTime + CONFIRM_S) * 1000, "the barge-in").catch(() => {});
    const interruption = confirmed(t.log, before.interruptions);
    const stop = (interruption ? interruption.contextTime : t.context.currentTime) + FLUSH_SLACK_S;
    await until(() => t.context.currentTime > stop + 0.05, 5000, "the flush").catch(() => {});
    const rec = await t.recording(spoken.onset - 1, stop);
    const v = windowView(rec, sampleRate);
    const onset = v.index(spoken.onset);
    const audibleBefore = v.lastLoud(onset - Math.round(0.8 * sampleRate), onset - Math.round(0.5 * sampleRate)) >= 0;
    if (!audibleBefore && attempt < 3) {
      counts.voids++;
      continue;
    }
    // The cue may pause on a soft start before the labelled onset: the last sound is then searched from 0.5 s before it.
    const last = v.lastLoud(Math.max(0, onset - Math.round(0.5 * sampleRate)), v.index(stop));
    const silentAt = last >= 0 ? last + 1 : onset;
    // Ducked: the last window at the reply's level (within DIP_DB), searched the same way.
    const refDb = levelDb(rec, v, onset - Math.round(0.8 * sampleRate), onset - Math.round(0.5 * sampleRate));
    let duckedAt = onset;
    for (let w = v.index(stop) - LEVEL_WINDOW; w >= Math.max(0, onset - Math.round(0.5 * sampleRate)); w -= LEVEL_WINDOW) {
      if (v.known(w) && levelDb(rec, v, w, w + LEVEL_WINDOW) >= refDb - DIP_DB) {
        duckedAt = w + LEVEL_WINDOW;
        break;
      }
    }
    return {
      name,
      attempt,
      void: !audibleBefore,
      confirmed: interruption !== undefined,
      reason: interruption?.reason ?? null,
      onsetToSilentMs: interruption ? Math.max(0, ((silentAt - onset) / sampleRate) * 1000) : null,
      silentBeforeOnsetMs: interruption && silentAt < onset ? ((onset - silentAt) / sampleRate) * 1000 : 0,
      onsetToDuckedMs: interruption ? Math.max(0, ((Math.min(duckedAt, silentAt) - onset) / sampleRate) * 1000) : null,
      onsetToConfirmMs: interruption ? (interruption.contextTime - spoken.onset) * 1000 : null,
      vadTrace: vadTrace(t, before.vad, spoken.onset),
    };
  }
}

window.bench = { run };
window.benchReady = true;
