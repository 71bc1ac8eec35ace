// `npm run bench -- turn`, the turn-taking part (issue #19): each utterance of
// the corpus (bench/lib/turn-corpus.mjs: pauses inside, the turn's true end
// labelled) is said once the session listens, under one end-of-turn policy
// (`sessionOptions`), and measured from the recording and the session's log:
// - premature (the definition): the turn ended inside a labelled
//   pause and the user felt it: their words went into two user messages, or
//   a reply was heard before the labelled end (heardInPause: a loud sample,
//   ≥ -40 dBFS, of the bot in the recording between the utterance's onset and
//   its labelled end; the recording holds only the bot). A turn resumed
//   before its reply was heard (turn.resumeUnheard) is one message and no
//   reply heard: not premature, but counted in decidedInPause;
// - decidedInPause: a reply began (bot_thinking) before the labelled end,
//   whether or not the user felt it (the measure of earlier runs);
// - voiceToVoiceTruthMs: the labelled end → the first sample of the reply
//   that began after it, in the recording, plus the output latency; beside
//   it the session's own `voiceToVoiceMs` for that reply;
// - llmRequests / wastedLlmRequests: replies started for the utterance, and
//   those never heard (cancelled before their first audible sample, or a
//   preemptive reply dropped unplayed: turn.preemptive).
import { makeBenchSession, sessionDetail, until, windowView } from "./bench-session.js";

/** Louder than this is "loud" for the first audible sample (-40 dBFS), as in turn.js. */
const LOUD = 0.01;
/** After the labelled end, how long a reply may take to start before the utterance counts as unanswered. */
const ANSWER_S = 8;

/**
 * `trace`: each result also has the utterance's timeline (s from its onset): states, the VAD's events,
 * interruptions and final transcripts, for finding why a turn split.
 */
async function run({ sessionOptions = {}, items, gapMs = 500, trace = false }) {
  const t = await makeBenchSession({ sessionOptions });
  const timeline = [];
  if (trace) {
    t.session.on("state", (e) => timeline.push([t.context.currentTime, `state ${e.state}`]));
    t.session.on("vad", (e) => e.kind !== "meter" && timeline.push([e.contextTime ?? t.context.currentTime, `vad ${e.kind}`]));
    t.session.on("interruption", (e) => timeline.push([t.context.currentTime, `interruption ${e.reason} heard ${Math.round(e.heardMs)} ms${e.userTurnResumed ? " resumed" : ""}`]));
    t.session.on("transcript", (e) => e.role === "user" && (e.final || e.revised) && timeline.push([t.context.currentTime, `${e.id} ${e.final ? "final" : "revised"} ${e.text}`]));
  }
  const heardAt = new Map();
  t.session.on("turn", (e) => heardAt.set(e.turn, e));
  await t.session.start();
  const sampleRate = t.context.sampleRate;
  const outputLatency = (t.context.outputLatency ?? 0) + (t.context.baseLatency ?? 0);
  const waitFor = (cond, ms, what) => until(cond, ms, what).catch((err) => Promise.reject(new Error(`${err.message} (${sessionDetail(t)})`, { cause: err })));
  const results = [];
  try {
    for (const item of items) {
      await waitFor(() => t.session.state === "listening", 30000, "listening");
      await new Promise((r) => setTimeout(r, gapMs));
      const repliesBefore = t.log.thinkingAt.length;
      const streamsBefore = t.ttsStreams.length;
      const turnsBefore = t.log.turns.length;
      const speakingBefore = t.log.speakingAt.length;
      const userMessagesBefore = t.session.history.filter((m) => m.role === "user").length;
      const droppedBefore = t.session.metrics.preemptive.dropped;
      const traceFrom = timeline.length;
      const spoken = await t.say(item.name);
      // Answered: a reply began after the labelled end, and the session listens again after it.
      await waitFor(() => t.log.thinkingAt.slice(repliesBefore).some((at) => at > spoken.speechEnd) || t.context.currentTime > spoken.speechEnd + ANSWER_S, (spoken.end - t.context.currentTime + ANSWER_S + 5) * 1000, `a reply to ${item.name}`);
      await waitFor(() => t.session.state === "listening" && t.context.currentTime > spoken.end, 45000, `the reply to ${item.name} played`);
      const starts = t.log.thinkingAt.slice(repliesBefore);
      const decidedInPause = starts.some((at) => at < spoken.speechEnd);
      const userMessages = t.session.history.filter((m) => m.role === "user").length - userMessagesBefore;
      // The session's view (bot_speaking before the end) beside the recording's truth.
      const audibleInPause = t.log.speakingAt.slice(speakingBefore).some((at) => at < spoken.speechEnd);
      // Rendered samples reach the ear the output latency later.
      const inPause = await t.recording(spoken.onset, spoken.speechEnd - outputLatency);
      const pauseView = windowView(inPause, sampleRate);
      const heardInPause = pauseView.firstLoud(0, pauseView.length, LOUD) >= 0;
      const premature = userMessages > 1 || heardInPause;
      const answerIndex = starts.findIndex((at) => at > spoken.speechEnd);
      const turns = t.log.turns.slice(turnsBefore);
      const streams = t.ttsStreams.slice(streamsBefore);
      // Preemptive replies dropped unplayed: their TTS streams came first (one a turn, before the turn's reply).
      const dropped = t.session.metrics.preemptive.dropped - droppedBefore;
      let truth = null;
      let sdk = null;
      if (!premature && answerIndex >= 0) {
        // The answer is the utterance's last reply: its TTS stream is the last (a reply cut before its
        // audio, as a resumed turn's first, may have opened one or not).
        const tts = answerIndex === starts.length - 1 ? streams.at(-1) : streams[answerIndex + dropped];
        const rec = await t.recording(spoken.speechEnd - 0.05, t.context.currentTime);
        const view = windowView(rec, sampleRate);
        const firstLoud = view.firstLoud(view.index(spoken.speechEnd), view.length, LOUD);
        if (firstLoud >= 0 && tts) truth = ((view.timeOf(firstLoud) - (tts.firstLoudS ?? 0) + outputLatency - spoken.speechEnd) * 1000);
        sdk = turns.find((m) => !m.interrupted)?.voiceToVoiceMs ?? null;
      }
      results.push({
        name: item.name,
        kind: item.kind,
        pauses: item.pauses,
        premature,
        decidedInPause,
        heardInPause,
        audibleInPause,
        userMessages,
        answered: answerIndex >= 0,
        userTurns: starts.length,
        llmRequests: starts.length + dropped,
        wastedLlmRequests: turns.filter((m) => m.voiceToVoiceMs === undefined).length + dropped,
        preemptiveDropped: dropped,
        voiceToVoiceTruthMs: truth === null ? null : Math.round(truth * 10) / 10,
        voiceToVoiceMs: sdk === null ? null : Math.round(sdk * 10) / 10,
        heard: t.session.history.filter((m) => m.role === "user").slice(userMessagesBefore).map((m) => m.text),
        // Still listening on the level fallback (the VAD's model not ready: vad.waitForModel false).
        degraded: t.session.degraded,
        ...(trace ? { timeline: timeline.slice(traceFrom).map(([at, what]) => `${(at - spoken.onset).toFixed(2)} ${what}`) } : {}),
      });
    }
  } finally {
    await t.close();
  }
  return { results, outputLatency, errors: t.log.errors, warnings: t.log.warnings.slice(0, 20), csp: window.cspViolations };
}

window.bench = { run };
window.benchReady = true;
