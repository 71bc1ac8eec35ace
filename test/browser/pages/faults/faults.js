// The fault matrix's page side: real VoiceSessions (worklets, VAD worker,
// providers) against the reference backend, with the fault knobs in the
// providers' URLs. The cases themselves are a table in ./cases.js; this page
// runs one STT case per session, and the LLM and TTS cases in turn on one
// session (each turn proves the one before left the session working).
//
// Which providers a case runs on is the caller's `setup`: by default the
// reference backend's own (Kyutai STT and TTS, the scripted LLM); the hosted
// page passes a `make` that builds the hosted provider under test, and the
// `token` function of a backend started with one.
import { makeSession, until } from "../session/session.js";
import { referenceProvider } from "../session/reference-providers.js";
import { sleep } from "/test/lib/wait.mjs";


/**
 * How a run builds its providers: `make(service, query, options)` ("stt",
 * "tts", "sse" or "ws-llm", with the knobs in `query`), and the token function.
 * `cutReplyAfterMs`: an STT case's next turn is cut off this long after its
 * reply began to play (default: the reply plays to its end).
 */
function withDefaults(setup = {}) {
  const token = setup.token;
  const make = setup.make ?? ((service, query, options) => referenceProvider(service, query, options, { token }));
  return { token, make, cutReplyAfterMs: setup.cutReplyAfterMs };
}

/**
 * A provider that forwards each connect (or LLM stream) to `pick()`: the
 * test decides per connection which URL, faulty or clean, it goes to.
 * `all`: every provider `pick` may return; their warnings are forwarded.
 */
function switchable(pick, all) {
  const base = all[0];
  return {
    name: base.name,
    audioFormat: base.audioFormat,
    supportsGap: base.supportsGap,
    on: (name, fn) => {
      const offs = all.map((p) => p.on?.(name, fn));
      return () => offs.forEach((off) => off?.());
    },
    connect: (signal) => pick().connect(signal),
    stream: (messages, signal) => pick().stream(messages, signal),
  };
}

/** Server-side counters of the reference backend. */
async function serverStats() {
  return (await fetch("/__stats")).json();
}

/** Everything the test checks about a case: what the session reported, kept and released. */
function observe(t, since) {
  const errors = t.full.errors.slice(since.errors);
  const warnings = t.full.warnings.slice(since.warnings);
  return { errors, warnings };
}

/** The session plus a full event log (names, messages, fatal flags) and the user's partials at each report. */
async function instrumentedSession(sessionOptions, token) {
  const t = await makeSession({ sessionOptions, token });
  const full = { errors: [], warnings: [], interruptions: [], userPartial: "", partialAtReport: [] };
  t.session.on("transcript", (e) => e.role === "user" && (full.userPartial = e.final ? "" : e.text));
  t.session.on("error", (e) => {
    full.errors.push({ name: e.error.name, message: e.error.message, fatal: e.fatal, service: e.error.service });
    full.partialAtReport.push(full.userPartial);
  });
  t.session.on("warning", (e) => {
    full.warnings.push({ service: e.service, message: e.message });
    full.partialAtReport.push(full.userPartial);
  });
  t.session.on("interruption", (e) => full.interruptions.push(e.reason));
  t.full = full;
  return t;
}

function matches(c, seen) {
  const want = c.expect;
  if (want.error) return seen.errors.some((e) => e.name === want.error && (want.fatal === undefined || e.fatal === want.fatal));
  return seen.warnings.some((w) => w.service === want.warningService && new RegExp(want.warning).test(w.message));
}

function userMessages(t) {
  return t.session.history.filter((m) => m.role === "user").map((m) => m.text);
}

/** Waits until the session is between turns: listening, only the STT stream live. */
async function settled(t, ms) {
  await until(() => t.session.state === "listening" && t.session.liveQuests.join() === "stt", ms).catch((err) => {
    // Say where it stuck: a bare timeout says nothing about the cause.
    const seen = observe(t, { errors: 0, warnings: 0 });
    const where = { state: t.session.state, liveQuests: t.session.liveQuests, turns: t.log.turns.length, history: userMessages(t), errors: seen.errors.map((e) => e.name), warnings: seen.warnings.map((w) => w.message ?? w) };
    throw new Error(`${err.message}; instead ${JSON.stringify(where)}`);
  });
}

/** Open STT streams on the server: the Deepgram emulator counts its own apart from the "stt" group. */
function sttOpen(stats) {
  return stats.stt.open + (stats.deepgram?.open ?? 0);
}

/** Waits until the page's sockets and the server's streams are back to `openSockets` / zero. */
async function released(openSockets, ms = 6000) {
  let stats;
  await until(() => window.pageWatch.openSockets() === openSockets, ms).catch(() => {});
  const start = performance.now();
  for (;;) {
    stats = await serverStats();
    const quiet = stats.tts.open === 0 && stats.llm.active === 0 && stats.llm.open === 0 && sttOpen(stats) === (openSockets ? 1 : 0);
    if (quiet || performance.now() - start > ms) break;
    await sleep(100);
  }
  return { pageSockets: window.pageWatch.openSockets(), server: { stt: sttOpen(stats), tts: stats.tts.open, llmOpen: stats.llm.open, llmActive: stats.llm.active } };
}

/**
 * One STT case on its own session. The faulty URL serves every connection
 * (`persistent`) or only the first; later ones go to the clean URL, so a
 * session that reconnects can prove its next turn works.
 */
export async function runSttCase(c, setup) {
  const { make, token, cutReplyAfterMs } = withDefaults(setup);
  let connections = 0;
  const faulty = make("stt", c.query, c.options);
  const clean = make("stt");
  const stt = switchable(() => (c.persistent || connections++ === 0 ? faulty : clean), [clean, faulty]);
  const t = await instrumentedSession({ stt, ...c.sessionOptions }, token);
  const result = { case: c.name, startError: undefined };
  try {
    await t.session.start();
  } catch (err) {
    result.startError = err.name;
  }
  if (!result.startError) await caseTurns(t, c, cutReplyAfterMs, result).catch(async (err) => {
    // Name the case and where it stuck, and leave nothing open for the next one.
    const where = { state: t.session.state, history: userMessages(t), errors: t.full.errors.map((e) => e.name), warnings: t.full.warnings.map((w) => w.message) };
    await t.session.stop();
    throw new Error(`${c.name}: ${err.message}; ${JSON.stringify(where)}`);
  });
  result.seen = observe(t, { errors: 0, warnings: 0 });

  // For the log line: what the session said, and how much speech it sent again.
  result.detail = { warnings: t.full.warnings.map((w) => w.message), replayedSamples: t.session.metrics.sttReplayedSamples };
  result.partialAtReport = t.full.partialAtReport;
  result.history = userMessages(t);
  result.stateBeforeStop = t.session.state;
  await t.session.stop();
  result.stateAfterStop = t.session.state;
  result.liveQuests = t.session.liveQuests;
  result.released = await released(0);
  result.unhandled = window.pageWatch.unhandled.splice(0);
  return result;
}

/** An STT case after start(): the speech, the event it must bring, and the next turn. */
async function caseTurns(t, c, cutReplyAfterMs, result) {
  const speech = await t.say("help-me");
  if (c.expect.outcome === "ends") {
    await until(() => t.session.state === "idle", 20000);
  } else {
    await until(() => matches(c, observe(t, { errors: 0, warnings: 0 })), 20000);
    // The words spoken so far make a turn (or, when the fault ate them, the next sentence does).
    await until(() => t.context.currentTime > speech.startedAt + speech.duration, 10000);
    // The fault may have eaten the words (a stall, a drop before the first word): then say something else.
    // With `cutReplyAfterMs` a reply counts once it plays: that is the next turn working.
    const replied = () => t.log.turns.length > 0 || (cutReplyAfterMs !== undefined && t.session.state === "bot_speaking");
    await until(replied, 5000).catch(() => {});
    if (!replied()) await t.say("turn-on-lights");
    await until(replied, 20000);
    let reply;
    if (cutReplyAfterMs !== undefined && t.log.turns.length === 0) {
      const lastReply = () => t.session.history.filter((m) => m.role === "assistant").at(-1)?.text ?? "";
      await sleep(cutReplyAfterMs);
      await until(() => lastReply() !== "" || t.log.turns.length > 0, 5000).catch(() => {});
      reply = lastReply();
      await t.session.interrupt();
    }
    await until(() => t.log.turns.length > 0, 20000);
    await settled(t, 20000);
    result.nextTurn = { history: userMessages(t), reply: reply ?? t.session.history.find((m) => m.role === "assistant")?.text ?? "" };
  }
}

/**
 * The TTS and LLM cases, one turn each, on one session: before each turn the
 * case's knobs go on the URL of that turn's TTS or LLM connection. After
 * each: the reported event, the state, the live streams, the sockets (page
 * and server) and the history are recorded. Then one clean turn.
 */
export async function runReplyCases(cases, sessionOptions = {}, setup) {
  const { make, token } = withDefaults(setup);
  let current;
  const clean = { tts: make("tts"), llm: make("sse"), "ws-llm": make("ws-llm") };
  const faulty = new Map(cases.map((c) => [c.name, make(c.service === "llm" ? c.transport ?? "sse" : c.service, c.query, c.options)]));
  const forService = (service) => () => (current && (current.service === service) ? faulty.get(current.name) : clean[service === "llm" ? "llm" : service]);
  const ofService = (service) => [clean[service], ...cases.filter((c) => c.service === service).map((c) => faulty.get(c.name))];
  const tts = switchable(forService("tts"), ofService("tts"));
  const llm = switchable(forService("llm"), ofService("llm"));
  const t = await instrumentedSession({ tts, llm, ...sessionOptions }, token);
  await t.session.start();
  const results = [];
  const turn = async (c) => {
    current = c;
    const since = { errors: t.full.errors.length, warnings: t.full.warnings.length, turns: t.log.turns.length, reports: t.full.partialAtReport.length };
    const started = performance.now();
    await t.say("help-me");
    const r = { case: c?.name ?? "clean" };
    try {
      await until(() => t.log.turns.length > since.turns && (!c || matches(c, observe(t, since))), 25000);
      await settled(t, 20000);
    } catch (err) {
      r.timeout = String(err.message).slice(0, 80);
    }
    r.ms = Math.round(performance.now() - started);
    r.seen = observe(t, since);
    r.state = t.session.state;
    r.liveQuests = t.session.liveQuests;
    r.turn = t.log.turns.at(-1);
    r.partialAtReport = t.full.partialAtReport.slice(since.reports);
    r.history = JSON.parse(JSON.stringify(t.session.history));
    r.released = await released(1);
    r.unhandled = window.pageWatch.unhandled.splice(0);
    current = undefined;
    return r;
  };
  for (const c of cases) results.push(await turn(c));
  const last = await turn(undefined);
  await t.session.stop();
  last.stateAfterStop = t.session.state;
  last.releasedAfterStop = await released(0);
  return { results, clean: last, interruptions: t.full.interruptions };
}

window.faultsPage = { runSttCase, runReplyCases };
window.faultsPageReady = true;
