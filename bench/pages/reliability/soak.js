// The soak: real VoiceSessions against the reference backend, with the user
// talking over the bot at random moments, again and again. Each barge-in's
// speech becomes the next turn, whose reply is barged into in turn. Every
// `bargeInsPerSession` barge-ins the session is stopped and a new one started
// on the same page: after each stop() nothing may be left (state idle, no live
// quest, no open socket).
//
// After every fence (the interruption event: flush + generation++ done) the
// output must stay silent until the next reply starts: the window from the
// fence (+ FENCE_SLACK_S for the flush to reach the worklet) to the next
// `bot_thinking` is checked sample by sample in the AudioContext.
// Between turns (at the user's final transcript) only the STT stream and its
// one socket may be live. Unhandled rejections and page errors are counted.
// Every leak is named in `leaks`: which quests and socket URLs were live, at
// which barge-in and session, in which state, with the session's last events
// (`trail`), and whether it was still there LEAK_RECHECK_MS later (a real
// leak) or had closed by then (a slow close). A user final that comes while
// the STT is reconnecting (no STT quest or socket) is not a leak: it is
// counted as sttDownAtUserFinal and named in `sttDown`.
import { kyutaiStt, kyutaiTts, openaiChat, VoiceSession } from "/dist/bargein.js";
import { prng } from "/test/lib/prng.mjs";
import { recordedOutput } from "/test/browser/pages/session/recorded-output.js";

const ws = `ws://${location.host}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Time for the flush to reach the playback worklet: a quantum and the port hop, with room to spare. */
const FENCE_SLACK_S = 0.03;
const LOUD = 1e-4;
/** The STT's socket path (Kyutai's ASR endpoint), as pageWatch.openSocketUrls() gives it. */
const STT_PATH = "/api/asr-streaming";
/** A leak seen between turns is looked at again this much later: still there, it is not a slow close. */
const LEAK_RECHECK_MS = 2000;
/** Session events kept for a leak's report. */
const TRAIL_LENGTH = 24;

function until(cond, ms) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const check = () => {
      if (cond()) return resolve(true);
      if (performance.now() - start > ms) return reject(new Error(`timed out: ${cond}`));
      setTimeout(check, 10);
    };
    check();
  });
}


/**
 * `checkServer`: read the backend's open-stream counts after stop (off when
 * other pages share the backend: the benchmark then checks once all stopped).
 */
export async function runSoak({ bargeIns = 20, bargeInsPerSession = 100, seed = 1, maxDelayMs = 500, redemptionMs = 300, maxSpeechS = Infinity, deadlineMs = 15 * 60 * 1000, onProgress, checkServer = true } = {}) {
  const random = prng(seed);
  const context = new AudioContext();
  const { output, recorder } = await recordedOutput(context, { module: "/bench/pages/reliability/stale-recorder.js", processor: "stale-recorder", seconds: 30 });
  let queryId = 0;
  const pending = new Map();
  recorder.port.onmessage = (e) => {
    pending.get(e.data.id)?.(e.data);
    pending.delete(e.data.id);
  };
  const loudBetween = (fromS, toS) =>
    new Promise((resolve) => {
      const id = ++queryId;
      pending.set(id, resolve);
      recorder.port.postMessage({ id, from: Math.round(fromS * context.sampleRate), to: Math.round(toS * context.sampleRate), threshold: LOUD });
    });
  const mic = context.createMediaStreamDestination();

  const newSession = () => new VoiceSession({
    // pace=0: the TTS sends each reply as fast as flite makes it, so replies are fully buffered and barge-ins land anywhere in them.
    stt: kyutaiStt({ urls: ws, startupTimeoutMs: 3000 }),
    tts: kyutaiTts({ urls: `${ws}/?pace=0`, voice: "slt" }),
    llm: openaiChat({ url: `${location.origin}/v1?word_ms=10`, model: "eliza" }),
    assetsPath: "/dist/",
    input: mic.stream,
    audio: { context, output },
    turn: { pauseThreshold: 0.6 },
    // The soak is about barge-ins, not turn-taking: a shorter wait for the
    // user's turn to end (600 ms by default) gives more barge-ins per minute.
    vad: { redemptionMs },
  });

  const stats = {
    attempts: 0,
    bargeIns: 0,
    staleSamples: 0,
    fencesChecked: 0,
    fencesUnchecked: 0,
    leakedSockets: 0,
    leakedQuests: 0,
    sessionErrors: [],
    retries: 0,
    /**
     * The session's state when each retry spoke: a retry speaks whatever the session is doing, so
     * one in bot_thinking barges into a reply still starting (see src/session/reply.ts start()).
     */
    retriesByState: {},
    sessions: 0,
    interruptions: 0,
    /** After each session's stop(): anything not idle, a live quest, or a page socket left open. */
    notIdleAfterStop: 0,
    leakedAfterStop: [],
    /** Each leak, named: see the header. */
    leaks: [],
    /** User finals that came while the STT stream was down (reconnecting): not leaks, but named the same way. */
    sttDownAtUserFinal: 0,
    sttDown: [],
    warnings: 0,
    warningSamples: [],
  };
  /** The session's recent events, newest last, as "t=ms what". */
  const trail = [];
  const note = (what) => {
    trail.push(`${Math.round(performance.now() - started)} ${what}`);
    if (trail.length > TRAIL_LENGTH) trail.shift();
  };
  /** Records a leak with what the session was doing, and looks again LEAK_RECHECK_MS later. */
  function recordLeak(list, where, s, quests, sockets) {
    const leak = {
      where,
      session: stats.sessions,
      bargeIn: stats.bargeIns,
      attempt: stats.attempts,
      retries: stats.retries,
      state: s.state,
      atMs: Math.round(performance.now() - started),
      quests,
      sockets,
      trail: trail.slice(),
    };
    list.push(leak);
    leak.recheck = new Promise((resolve) =>
      setTimeout(() => {
        leak.after = { quests: s.liveQuests, sockets: window.pageWatch.openSocketUrls(), state: s.state };
        resolve();
      }, LEAK_RECHECK_MS),
    );
  }
  // Where each cycle's time goes (ms, summed): speech start → interruption →
  // the user's final words → bot_thinking → bot_speaking → next speech.
  const phases = { toInterruption: 0, toUserFinal: 0, toThinking: 0, toSpeaking: 0, waitBeforeSpeech: 0 };
  let mark = performance.now();
  const lap = (phase) => {
    const now = performance.now();
    phases[phase] += now - mark;
    mark = now;
  };
  let fenceAt;
  const fences = [];
  let session;
  let stopping = false;
  /** A new session on the same context and mic, with the soak's checks on its events. */
  function openSession() {
    const next = newSession();
    next.on("interruption", (e) => {
      note(`interruption ${e.reason} heard=${JSON.stringify(e.heardText.slice(-30))}`);
      lap("toInterruption");
      fenceAt = context.currentTime;
      stats.bargeIns++;
    });
    next.on("state", (e) => {
      note(`state ${e.state} quests=${next.liveQuests.join("+")}`);
      if (e.state === "bot_thinking") lap("toThinking");
      if (e.state === "bot_speaking") lap("toSpeaking");
      if (e.state === "bot_thinking" && fenceAt !== undefined) {
        fences.push([fenceAt + FENCE_SLACK_S, context.currentTime]);
        fenceAt = undefined;
      }
    });
    next.on("transcript", (e) => {
      if (e.final || e.revised) note(`transcript ${e.role} ${e.final ? "final" : "revised"} ${JSON.stringify(e.text.slice(-40))}`);
      if (e.role !== "user" || !e.final || stopping) return;
      lap("toUserFinal");
      // Between turns: nothing but the STT stream and its one socket. The STT
      // may be down (reconnecting after an overload or a drop): fewer is not
      // a leak, and is counted apart (sttDownAtUserFinal, named in sttDown).
      const quests = next.liveQuests;
      const sockets = window.pageWatch.openSocketUrls();
      const extraQuests = quests.filter((q) => q !== "stt");
      const extraSockets = sockets.filter((u) => u !== STT_PATH).length + Math.max(0, sockets.filter((u) => u === STT_PATH).length - 1);
      if (extraQuests.length) stats.leakedQuests++;
      if (extraSockets) stats.leakedSockets++;
      if (extraQuests.length || extraSockets) recordLeak(stats.leaks, "between turns", next, quests, sockets);
      else if (!quests.includes("stt") || !sockets.includes(STT_PATH)) {
        stats.sttDownAtUserFinal++;
        recordLeak(stats.sttDown, "between turns, STT down", next, quests, sockets);
      }
    });
    next.on("turn", (e) => note(`turn ${e.turn} interrupted=${e.interrupted}`));
    next.on("vad", (e) => e.kind !== "meter" && note(`vad ${e.kind}`));
    next.on("reconnecting", (e) => note(`reconnecting ${e.service} ${e.reason}`));
    next.on("warning", (e) => {
      note(`warning ${e.service}: ${e.message.slice(0, 80)}`);
      stats.warnings++;
      if (stats.warningSamples.length < 10) stats.warningSamples.push(`${e.service}: ${e.message}`);
    });
    next.on("error", (e) => {
      note(`error ${e.error.name}`);
      if (stats.sessionErrors.length < 20) stats.sessionErrors.push(`${e.error.name}: ${e.error.message}`);
    });
    stats.sessions++;
    return next;
  }
  /** Stops `session` once its reply or turn settles, and checks that it let go of everything. */
  async function closeSession() {
    await until(() => session.state === "bot_speaking" || session.state === "listening", 15000).catch(() => {});
    await checkFences();
    stopping = true;
    await session.stop();
    stopping = false;
    stats.interruptions += session.metrics.interruptions;
    await sleep(100);
    if (session.state !== "idle") stats.notIdleAfterStop++;
    const left = { quests: session.liveQuests, pageSockets: window.pageWatch.openSockets() };
    if (left.quests.length || left.pageSockets) {
      stats.leakedAfterStop.push({ session: stats.sessions, ...left });
      recordLeak(stats.leaks, "after stop", session, left.quests, window.pageWatch.openSocketUrls());
    }
  }

  const buffers = new Map();
  /** Starts the fixture's speech (its leading and trailing silence cut) into the mic; resolves once it plays. */
  async function say(name) {
    if (!buffers.has(name)) {
      const data = await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer();
      const meta = await (await fetch(`/test/fixtures/speech/${name}.json`)).json();
      const from = Math.max(0, meta.onsetSamples / meta.sampleRate - 0.05);
      buffers.set(name, { buffer: await context.decodeAudioData(data), from, duration: meta.offsetSamples / meta.sampleRate + 0.05 - from });
    }
    const { buffer, from, duration } = buffers.get(name);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(mic);
    source.start(0, from, Math.min(duration, maxSpeechS));
  }
  async function checkFences() {
    for (const [from, to] of fences.splice(0)) {
      if (to <= from) continue;
      const r = await loudBetween(from, to);
      if (!r.covered) stats.fencesUnchecked++;
      else {
        stats.fencesChecked++;
        stats.staleSamples += r.loud;
      }
    }
  }

  /** Barge-ins on the current session until the count reaches `goal` (or time is up). */
  async function soakOneSession(goal) {
    while (stats.bargeIns < goal && timeLeft()) {
      try {
        await until(() => session.state === "bot_speaking", 10000);
      } catch {
        // The last speech made no turn (no words recognised): speak again.
        stats.retries++;
        stats.retriesByState[session.state] = (stats.retriesByState[session.state] ?? 0) + 1;
        note(`retry ${stats.retries} in state ${session.state} quests=${session.liveQuests.join("+")}`);
        await say(phrases[stats.retries % 2]);
        continue;
      }
      await sleep(random() * maxDelayMs);
      stats.attempts++;
      lap("waitBeforeSpeech");
      const before = stats.bargeIns;
      note(`say (attempt ${stats.attempts})`);
      await say(phrases[stats.attempts % 2]);
      // Until the barge-in is confirmed, or the reply ended before the speech reached it.
      await until(() => stats.bargeIns > before || session.state === "listening" || session.state === "user_speaking", 10000).catch(() => {});
      await checkFences();
      onProgress?.(stats.bargeIns);
    }
  }

  const started = performance.now();
  const startupMs = [];
  const phrases = ["help-me", "turn-on-lights"];
  const timeLeft = () => performance.now() - started < deadlineMs;
  while (stats.bargeIns < bargeIns && timeLeft()) {
    session = openSession();
    const t0 = performance.now();
    await session.start();
    startupMs.push(performance.now() - t0);
    await say("weather-question");
    const sessionGoal = Math.min(bargeIns, stats.bargeIns + bargeInsPerSession);
    await soakOneSession(sessionGoal);
    await closeSession();
  }
  await sleep(200);
  const named = [...stats.leaks, ...stats.sttDown];
  await Promise.all(named.map((l) => l.recheck));
  for (const l of named) delete l.recheck;
  const server = checkServer ? await serverSettled() : undefined;
  await context.close();
  return {
    ...stats,
    startupMsMax: Math.round(Math.max(...startupMs)),
    phaseMs: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v)])),
    ms: performance.now() - started,
    openSocketsAfterStop: window.pageWatch.openSockets(),
    serverOpenAfterStop: server && { stt: server.stt.open, tts: server.tts.open, llmOpen: server.llm.open, llmActive: server.llm.active },
    uncaught: window.pageWatch.unhandled.slice(0, 20),
    csp: window.cspViolations,
  };
}

window.soakPage = { runSoak };
window.soakPageReady = true;

/**
 * The reference backend's counters once it holds no socket open, or as they stand after `timeoutMs`:
 * the server counts a socket closed when its connection ends, which on a loaded machine came after the
 * page's own close event (CI: one STT and one TTS socket still open 200 ms after stop()). A socket the
 * session leaked stays open past the wait, and is reported.
 */
async function serverSettled(timeoutMs = 10000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const stats = await (await fetch("/__stats")).json();
    const open = stats.stt.open + stats.tts.open + stats.llm.open + stats.llm.active;
    if (open === 0 || performance.now() > end) return stats;
    await sleep(100);
  }
}
