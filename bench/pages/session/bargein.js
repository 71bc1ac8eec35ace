// `npm run bench -- bargein`, the page side. One session per call of
// `run()`; every reply is the backend's long story (bench-session.js
// storyLlm), and each trial talks over it with a fixture whose speech onset
// is scheduled, in context time, `moment` seconds after the reply started.
// The barge-in utterance then becomes the next user turn, whose reply is the
// next trial's target, so trials chain without re-asking.
//
// Modes:
// - "vad": the SDK's own barge-in (VAD worker pauses playback; the session
//   confirms and runs interrupt()).
// - "server": the baseline of server-driven barge-in (as Unmute does):
//   bargeIn.enabled = false, so nothing pauses on the VAD; the page calls
//   session.interrupt() on the first user word the STT returns while the bot
//   speaks, and only then is playback flushed.
// `load`: the page's main thread is kept busy (a 50 ms busy loop every
// 60 ms, like a heavy React render) during the trials.
// `provider`: the STT/TTS pair by name (bench-providers.js; default Kyutai's).
import { SILENT, makeBenchSession, sessionDetail, until, windowView } from "./bench-session.js";

/** A reply's first sample is found from its first sample at or above this (-40 dBFS). */
const LOUD = 0.01;
/**
 * Slack after the flush request's context time before audio counts as stale:
 * currentTime, read on the main thread, moves in audio-callback bursts, so the
 * quantum that applies the flush can start up to one burst after it.
 */
const FLUSH_SLACK_S = 0.02;

function startMainThreadLoad(busyMs = 50, periodMs = 60) {
  let on = true;
  const tick = () => {
    if (!on) return;
    const end = performance.now() + busyMs;
    while (performance.now() < end);
    setTimeout(tick, periodMs - busyMs);
  };
  setTimeout(tick, 0);
  return () => (on = false);
}

/** Waits for a reply newer than `repliesBefore` to be playing; false on timeout. */
async function replyPlaying(t, repliesBefore, ms) {
  try {
    await until(() => t.log.thinkingAt.length > repliesBefore && t.session.state === "bot_speaking" && t.ttsStreams.at(-1)?.firstAudioAt !== undefined, ms, "a reply");
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits for the session to listen again. A session that stopped itself on a
 * fatal error (on a loaded machine: the STT uplink's overloads, or an STT
 * that did not answer a reconnect in time) is started again and the error
 * kept in `restarts`, so one fatal does not cost the run its other trials;
 * the run reports every restart. On timeout the error says where it stuck
 * (its state, the last states, warnings, errors and overloads).
 */
async function untilListening(t, ms, restarts) {
  try {
    await until(() => t.session.state === "listening" || t.session.state === "idle", ms, "listening");
    if (t.session.state === "idle") {
      restarts.push(t.log.errors.at(-1) ?? "stopped with no error event");
      await t.session.start();
    }
  } catch (err) {
    throw new Error(`${err.message} (${sessionDetail(t)})`, { cause: err });
  }
}

/**
 * Asks a fresh question for a reply to interrupt. On a loaded machine the
 * reference STT may hear nothing in it (an empty turn, no reply): it is asked
 * again, at most 3 times, and each unanswered question is counted.
 */
async function askForReply(t, repliesBefore, restarts, counts) {
  for (let attempt = 1; ; attempt++) {
    await untilListening(t, 20000, restarts);
    await t.say("weather-question");
    if (await replyPlaying(t, repliesBefore, 30000)) return;
    counts.unansweredQuestions++;
    if (attempt === 3) throw new Error(`no reply to interrupt after asking 3 times (${sessionDetail(t)})`);
  }
}

/** `sessionVad`: the session's `vad` options (the fallback bench listens before the model with them). */
async function run({ mode, load = false, trials: plan, provider = "kyutai", bedDb, sessionVad }) {
  const t = await makeBenchSession({
    story: true,
    provider,
    sessionOptions: { ...(mode === "server" ? { bargeIn: { enabled: false } } : {}), ...(sessionVad ? { vad: sessionVad } : {}) },
  });
  await t.session.start();
  // Recordings of real people carry their room's noise: the mic gets the same room all along (bench-session.js).
  if (bedDb !== undefined) t.noiseBed(bedDb);
  const sampleRate = t.context.sampleRate;
  const outputLatency = (t.context.outputLatency ?? 0) + (t.context.baseLatency ?? 0);
  /** Server mode: the pending trial, until the STT's first word interrupts. */
  let armed;
  if (mode === "server") {
    t.session.on("transcript", (e) => {
      if (!armed || e.role !== "user" || e.final || t.session.state !== "bot_speaking") return;
      const trial = armed;
      armed = undefined;
      trial.wordAt = t.context.currentTime;
      void t.session.interrupt();
      trial.flushTime = t.context.currentTime;
    });
  }
  const stopLoad = load ? startMainThreadLoad() : () => {};
  const trials = [];
  /** The fatal errors the session was restarted after (see untilListening). */
  const restarts = [];
  const counts = { unansweredQuestions: 0 };
  let repliesBefore = 0;
  try {
    for (const { moment, fixture } of plan) {
      // A reply to interrupt: the previous barge-in's turn, or a fresh question.
      if (!(await replyPlaying(t, repliesBefore, trials.length === 0 ? 0 : 3000))) await askForReply(t, repliesBefore, restarts, counts);
      const replies = t.log.thinkingAt.length;
      const tts = t.ttsStreams.at(-1);
      const interruptionsBefore = t.log.interruptions.length;
      const trial = { mode, fixture, plannedMoment: moment };
      if (mode === "server") armed = trial;
      const vadBefore = t.log.vad.length;
      const spoken = await t.say(fixture, { onsetAt: tts.firstAudioContextTime + moment });
      try {
        await until(() => t.log.interruptions.length > interruptionsBefore, 8000, "the interruption");
      } catch {
        armed = undefined;
        trials.push({ ...trial, failed: `no interruption (state ${t.session.state})` });
        repliesBefore = t.log.thinkingAt.length;
        continue;
      }
      const interruption = t.log.interruptions.at(-1);
      const flushTime = mode === "server" ? trial.flushTime : interruption.contextTime;
      // The stale window ends when the next reply is fenced (bot_thinking, read
      // from currentTime, so never late): from then on the old generation is
      // dropped twice over, and the next reply's audio may start.
      const next = await replyPlaying(t, replies, 12000);
      const staleEnd = next ? t.log.thinkingAt[replies] : t.context.currentTime;
      repliesBefore = replies;
      const rec = await t.recording(tts.firstAudioContextTime - 0.05, staleEnd);
      // The VAD's speech start for this utterance: when its deciding frame ended, and whether the worker paused playback itself.
      const speechStart = t.log.vad.slice(vadBefore).find((e) => e.kind === "speechStart");
      trials.push({
        ...trial,
        ...analyse(rec, { sampleRate, outputLatency, tts, spoken, interruption, flushTime, staleEnd, nextReply: next }),
        onsetToVadSpeechStartMs: speechStart ? (speechStart.contextTime - spoken.onset) * 1000 : null,
        directPause: speechStart?.direct ?? false,
        // Every VAD event of this utterance, ms from its onset (d: the worker acted on playback itself).
        vadTrace: t.log.vad.slice(vadBefore).map((e) => `${e.kind}${e.direct ? "(d)" : ""}@${Math.round((e.contextTime - spoken.onset) * 1000)}`).join(" "),
        degraded: t.session.degraded,
      });
      if (mode === "server") trials.at(-1).onsetToWordMs = (trial.wordAt - spoken.onset) * 1000;
    }
  } finally {
    stopLoad();
    await t.close();
  }
  // The session's own view of each reply (its turn events), first audio byte → audible included.
  const turns = t.log.turns.map((m) => ({ turn: m.turn, interrupted: m.interrupted, firstAudioByteToAudibleMs: m.firstAudioByteToAudibleMs }));
  return { mode, load, provider, sampleRate, outputLatency, trials, turns, restarts, ...counts, errors: t.log.errors, warnings: t.log.warnings, overloads: t.log.overloads, csp: window.cspViolations };
}

/** Per-trial numbers from the recording of one interrupted reply. */
function analyse(rec, { sampleRate, outputLatency, tts, spoken, interruption, flushTime, staleEnd, nextReply }) {
  const v = windowView(rec, sampleRate);
  const ms = (samples) => (samples / sampleRate) * 1000;
  // The reply's first sample: its first loud sample less where that is in the TTS audio.
  const firstLoud = v.firstLoud(0, v.length, LOUD);
  const replyStart = firstLoud - Math.round((tts.firstLoudS ?? 0) * sampleRate);
  const onset = v.index(spoken.onset);
  const flush = v.index(flushTime);
  const flushSettled = v.index(flushTime + FLUSH_SLACK_S);
  const end = v.index(staleEnd);
  // Silence point: after the last sound before the flush has settled. This is
  // where the output went silent for good; a natural gap in the bot's speech
  // before the pause does not count (firstQuietRun below shows the brief's
  // first-10-ms-quiet definition, which can stop at such a gap).
  // The onset cue can pause on a word's soft start, before the −20 dB onset: then the last sound is
  // before it (searched from 0.5 s back), counted as silent at the onset and told apart.
  const lastSound = v.lastLoud(Math.max(0, onset - Math.round(sampleRate * 0.5)), flushSettled);
  const silentAt = lastSound >= 0 ? lastSound + 1 : onset;
  const firstQuiet = v.firstQuietRun(onset, end, Math.round(sampleRate * 0.01));
  const audibleAtOnset = v.lastLoud(onset - Math.round(sampleRate * 0.05), onset, LOUD) >= 0;
  // Heard words: TTS words whose audio had fully (or half) played at the silence point.
  const playedS = (silentAt - replyStart) / sampleRate;
  const fullyPlayed = tts.words.filter((w) => w.stopS <= playedS).length;
  const halfPlayed = tts.words.filter((w) => (w.startS + w.stopS) / 2 <= playedS).length;
  const kept = interruption.heardText.split(/\s+/).filter(Boolean).length;
  // The session's own rule: a word is heard when its midpoint was rendered, less the output latency.
  const heardBySessionRule = tts.words.filter((w) => (w.startS + w.stopS) / 2 <= playedS - outputLatency).length;
  return {
    moment: (onset - replyStart) / sampleRate,
    audibleAtOnset,
    reason: interruption.reason,
    speechStartToConfirmMs: interruption.speechStartToConfirmMs,
    onsetToSilenceMs: Math.max(0, ms(silentAt - onset)),
    silentBeforeOnsetMs: silentAt < onset ? ms(onset - silentAt) : 0,
    onsetToFirstQuietMs: firstQuiet >= 0 ? ms(firstQuiet - onset) : null,
    onsetToFlushMs: ms(flush - onset),
    // The reply's first sample in the recording, from its first audio byte's arrival (both context time).
    firstAudioByteToFirstSampleMs: (v.timeOf(replyStart) - tts.firstAudioContextTime) * 1000,
    // Sound between the silence point and the flush: a pause that did not hold.
    leakSamples: v.countLoud(silentAt, flushSettled),
    staleSamples: v.countLoud(flushSettled, end),
    staleWindowMs: ms(end - flushSettled),
    nextReply,
    playedS,
    fullyPlayedWords: fullyPlayed,
    halfPlayedWords: halfPlayed,
    keptWords: kept,
    heardWordError: Math.abs(fullyPlayed - kept),
    heardWordErrorSameRule: Math.abs(heardBySessionRule - kept),
    // The session's rendered count (heardMs + output latency) vs the recording: differs on underruns.
    renderedAgreementMs: interruption.heardMs + outputLatency * 1000 - playedS * 1000,
    unknownQuanta: v.unknownQuanta(onset, end),
    silent: SILENT,
  };
}

window.bench = { run };
window.benchReady = true;
