// One hosted provider in real VoiceSessions: the page side of
// test/browser/hosted/hosted-providers.spec.ts. Each STT provider is paired with the
// reference Kyutai TTS and scripted LLM, each TTS provider with the reference
// Kyutai STT and LLM, so a run exercises one provider. `runConversation` is a
// full turn and a barge-in on one session, judged on the recorded output;
// `runFaults` runs the provider's rows of the fault table (../faults/cases.js)
// with the fault pages' runners. Everything returned is plain values: the
// recording is read here, not sent to the test.
import { makeSession, until } from "../session/session.js";
import { firstAudible, loudMs, readCut, timeline } from "../session/output-analysis.js";
import { runReplyCases, runSttCase } from "../faults/faults.js";
import { HOSTED, issuedToken, pairedWith } from "./hosted-providers.js";
import { sleep } from "/test/lib/wait.mjs";


/**
 * Wraps a TTS provider to keep, per stream, the word timings it reported
 * (the provider's own: ElevenLabs' character alignment, Cartesia's word
 * timestamps, Kyutai's Text messages) and where its audio turns audible.
 */
function recordingTimings(provider, streams) {
  return {
    ...provider,
    async connect(signal) {
      const stream = await provider.connect(signal);
      const record = { words: [], samples: 0, sampleRate: 0, audibleAtS: null };
      streams.push(record);
      return {
        sendText: (text) => stream.sendText(text),
        end: () => stream.end(),
        close: () => stream.close(),
        async *events(signal) {
          for await (const e of stream.events(signal)) {
            if (e.kind === "text") record.words.push({ text: e.text, startS: e.startS, stopS: e.stopS });
            else {
              record.sampleRate = e.sampleRate;
              if (record.audibleAtS === null) {
                const i = firstAudible(e.pcm);
                if (i >= 0) record.audibleAtS = (record.samples + i) / e.sampleRate;
              }
              record.samples += e.pcm.length;
            }
            yield e;
          }
        },
      };
    },
  };
}

/** Wraps an LLM provider to keep the text each reply's stream delivered: what the session received. */
function recordingReplies(provider, replies) {
  return {
    ...provider,
    async *stream(messages, signal) {
      const reply = { text: "" };
      replies.push(reply);
      for await (const delta of provider.stream(messages, signal)) {
        reply.text += delta;
        yield delta;
      }
    },
  };
}

const plain = (x) => JSON.parse(JSON.stringify(x));
const words = (text) => text.toLowerCase().replace(/[^\p{L}\p{N}' ]+/gu, " ").split(/\s+/).filter(Boolean);

/**
 * A full turn ("Can you help me?", whose reply plays to its end), then a
 * barge-in as bargein.spec.ts makes one: "What is the weather like today?",
 * and 0.9 s into the reply the user says "Can you help me?" over it.
 */
export async function runConversation(name) {
  const hosted = HOSTED[name];
  const streams = [];
  const make = pairedWith(name);
  const tts = recordingTimings(make("tts"), streams);
  const replies = [];
  const llm = recordingReplies(make("sse"), replies);
  // Deepgram and AssemblyAI send a turn's words only once final, after the recogniser has caught up:
  // on a loaded machine that can be later than the flush timeout, which the STT fault rows test.
  const turn = { flushTimeoutMs: 4000 };
  // The recording must outlast the whole conversation, however slow a loaded machine makes it.
  const t = await makeSession({ token: issuedToken, recordSeconds: 120, sessionOptions: { stt: make("stt"), tts, llm, turn } });
  const decisions = [];
  t.session.on("vad", (e) => e.kind === "speechStart" && decisions.push({ direct: e.direct, contextTime: e.contextTime }));
  const began = performance.now();
  const phaseMs = {};
  const mark = (phase) => (phaseMs[phase] = Math.round(performance.now() - began));
  let steps;
  try {
    steps = await conversationSteps(t, streams, mark, decisions);
  } catch (err) {
    // Say where it stuck, and leave nothing open for the fault rows that follow on this page.
    const where = { state: t.session.state, history: plain(t.session.history), log: { states: t.log.states, errors: t.log.errors, warnings: t.log.warnings, vad: t.log.vad } };
    await t.session.stop();
    throw new Error(`${err.message}; ${JSON.stringify(where)}`);
  }
  const { firstTurn, over, speechEnd, rec, history, liveQuests, decisionsBefore, replyStream } = steps;
  const sampleRate = t.context.sampleRate;
  const unhandled = window.pageWatch.unhandled.splice(0);
  await until(() => window.pageWatch.openSockets() === 0, 5000).catch(() => {});

  // The recording: where the first reply played, and how the second was cut.
  const line = timeline(rec, sampleRate);
  const samples = rec.samples;
  const first = { loudMs: loudMs(samples, sampleRate, line.index(firstTurn.startedAt), line.index(firstTurn.endedAt)) };
  const onsetAt = line.index(over.onset);
  const quietUntil = line.index(speechEnd + 0.3);
  const cut = readCut(rec, line, t.flushes, sampleRate, onsetAt, quietUntil);
  const { silentAt, flushed } = cut;
  const decision = decisions.slice(decisionsBefore).find((d) => d.direct) ?? decisions[decisionsBefore];
  // The reply's audio starts where its stream's first audible sample lands, less the quiet before it.
  const stream = streams[replyStream];
  const replyAudibleAt = firstAudible(samples, line.index(firstTurn.endedAt));
  const replyStartAt = replyAudibleAt - Math.round((stream.audibleAtS ?? 0) * sampleRate);
  const playedS = (silentAt - replyStartAt) / sampleRate;
  // What the output played, by the provider's own word timings: a word whose midpoint it reached.
  const playedWords = stream.words.filter((w) => (w.startS + w.stopS) / 2 <= playedS).length;
  const reply = history.find((m, i) => m.role === "assistant" && i > 1);
  return {
    provider: name,
    service: hosted.service,
    phaseMs,
    sampleRate,
    outputLatency: t.context.outputLatency || t.context.baseLatency || 0,
    errors: t.log.errors,
    warnings: t.log.warnings,
    unhandled,
    openSockets: window.pageWatch.openSockets(),
    stateAfterStop: t.session.state,
    liveQuests,
    firstTurn: { ...firstTurn, ...first },
    bargeIn: {
      // Everything the LLM delivered for the reply before it was cancelled: heard + unheard must be all of it.
      fullReply: replies[1]?.text ?? null,
      reply,
      history,
      interruption: t.log.interruptions[0],
      silentAfterOnsetMs: cut.silentAfterMs,
      silentAfterDecisionMs: !decision ? null : ((silentAt - line.index(decision.contextTime)) / sampleRate) * 1000,
      decisionDirect: decision?.direct ?? null,
      audibleBeforeOnset: cut.audibleBefore,
      // Sound of the cut reply after its flush; null when it was never flushed.
      staleSamples: flushed.at < 0 ? null : flushed.loud,
      recordedGaps: rec.gaps,
      playedS,
      playedWords,
      timedWords: stream.words.map((w) => w.text),
      heardWords: reply ? words(reply.text).length : null,
    },
  };
}

/** Starts `t`, runs the full turn and the barge-in, and stops it; returns what the judges read. */
async function conversationSteps(t, streams, mark, decisions) {
  await t.session.start();
  mark("started");

  // 1. The full turn.
  const question = await t.say("help-me");
  await until(() => t.log.turns.length >= 1, 40000, "the first turn");
  await until(() => t.session.state === "listening", 20000, "the first reply to end");
  mark("fullTurn");
  const firstTurn = { history: plain(t.session.history), turn: t.log.turns[0], states: [...t.log.states], startedAt: question.startedAt, endedAt: t.context.currentTime };

  // 2. The barge-in.
  await t.say("weather-question");
  await until(() => t.session.state === "bot_speaking", 30000, "the second reply");
  const replyStream = streams.length - 1;
  await sleep(900);
  const decisionsBefore = decisions.length;
  const over = await t.say("help-me");
  await until(() => t.log.interruptions.length === 1, 10000, "the interruption");
  const speechEnd = over.startedAt + over.meta.offsetSamples / over.meta.sampleRate;
  await until(() => t.context.currentTime > speechEnd + 0.3, 10000, "the end of the user's speech");
  const rec = await t.recording();
  mark("bargeIn");
  const history = plain(t.session.history);
  const liveQuests = t.session.liveQuests;
  await t.session.stop();
  return { firstTurn, over, speechEnd, rec, history, liveQuests, decisionsBefore, replyStream };
}

/**
 * The provider's fault rows: an STT row on a session of its own
 * (faults.js runSttCase), the TTS rows one turn each on a shared session
 * then a clean turn (runReplyCases), as the reference rows are run.
 */
export async function runFaults(name, cases, sessionOptions = {}) {
  // An STT case's next turn is cut off once its reply plays: that proves it works, and saves seconds.
  const setup = { make: pairedWith(name), token: issuedToken, cutReplyAfterMs: 300 };
  if (HOSTED[name].service === "stt") {
    const results = [];
    for (const c of cases) {
      const started = performance.now();
      // A case that fails on its way (it stopped its session) is reported as such; the next still runs.
      const r = await runSttCase(c, setup).catch((err) => ({ failed: err.message }));
      results.push({ ...r, ms: Math.round(performance.now() - started) });
    }
    return { results };
  }
  return runReplyCases(cases, sessionOptions, setup);
}

window.hostedPage = { runConversation, runFaults };
window.hostedPageReady = true;
