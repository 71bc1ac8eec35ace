// The page side of `npm run bench -- coldstart` (bench/coldstart.bench.mjs): one start() of a
// session that listens before the VAD's model is ready (the SDK's default, vad.waitForModel
// false), on the real parts against the reference backend, then a question said `sayAfterMs`
// after `listening`. It reports its marks on the wall clock (Date.now(), the clock the bench's
// network records use): start() called, `listening`, the VAD's model ready; and whether the
// question was answered whole. The bytes are counted by the bench, from the network.
import { makeBenchSession, until } from "../session/bench-session.js";

/** The content words of weather-question.wav that pocketsphinx always hears (test/browser/session.spec.ts). */
const QUESTION_WORDS = ["weather", "like", "today"];
/** A quiet room: a real microphone is never digitally silent, and the level fallback tracks its floor. */
const ROOM_DB = -60;

async function trial({ sayAfterMs = 300, answerTimeoutMs = 30_000, readyTimeoutMs = 90_000 } = {}) {
  // The test pages' flush wait: on a loaded machine the STT's last words may come after the default
  // 1.5 s, and the turn would be answered in two; that is the STT's figure, not the fallback's.
  const t = await makeBenchSession({ sessionOptions: { vad: { waitForModel: false }, turn: { flushTimeoutMs: 6000 } } });
  const stopBed = t.noiseBed(ROOM_DB);
  const marks = { startAt: 0, listeningAt: 0, readyAt: 0, degradedAtListening: false, questionAt: 0, answeredAt: 0 };
  t.session.on("state", (e) => {
    if (e.state !== "listening" || marks.listeningAt) return;
    marks.listeningAt = Date.now();
    marks.degradedAtListening = e.degraded;
    // The model was ready before the session listened (no `ready` event comes then).
    if (!e.degraded) marks.readyAt ||= marks.listeningAt;
  });
  t.session.on("vad", (e) => e.kind === "ready" && (marks.readyAt ||= Date.now()));
  try {
    marks.startAt = Date.now();
    const since = performance.now();
    await t.session.start();
    await until(() => marks.listeningAt > 0, 5000, "the listening state after start() resolved");
    await new Promise((r) => setTimeout(r, Math.max(0, sayAfterMs - (Date.now() - marks.listeningAt))));
    marks.questionAt = Date.now();
    await t.say("weather-question");
    let answered = false;
    try {
      await until(() => t.session.history.some((m) => m.role === "assistant"), answerTimeoutMs, "a reply to the question");
      marks.answeredAt = Date.now();
      const user = t.session.history.filter((m) => m.role === "user");
      const heard = (user[0]?.text ?? "").toLowerCase().split(/\s+/);
      // Whole: one user message with every content word (a premature end splits it, and the reply answers a part).
      answered = user.length === 1 && QUESTION_WORDS.every((w) => heard.includes(w));
    } catch {
      answered = false;
    }
    const userText = t.session.history.filter((m) => m.role === "user").map((m) => m.text);
    await until(() => marks.readyAt > 0, readyTimeoutMs, "the VAD's model ready").catch(() => {});
    return { ...marks, resources: pageResources(since), answered, answeredBeforeReady: answered && marks.answeredAt > 0 && (!marks.readyAt || marks.answeredAt < marks.readyAt), userText, errors: [...t.log.errors], warnings: t.log.warnings.slice(-5) };
  } finally {
    stopBed();
    await t.close();
  }
}

/**
 * What the page itself fetched since `since` (its Resource Timing: the worklet modules, the worker's
 * script, the fixtures), on the wall clock; the worker's own fetches (the model, the wasm) are in the
 * worker's timeline, so the bench takes those from the browser's network events.
 */
function pageResources(since) {
  const wall = (t) => performance.timeOrigin + t;
  return performance
    .getEntriesByType("resource")
    .filter((e) => e.startTime >= since)
    .map((e) => ({
      url: e.name,
      startAt: wall(e.startTime),
      firstByteAt: wall(e.responseStart || e.startTime),
      endAt: wall(e.responseEnd),
      bodyBytes: e.encodedBodySize,
      headerBytes: Math.max(0, e.transferSize - e.encodedBodySize),
      transferSize: e.transferSize,
    }));
}

window.coldstartBench = { trial };
window.benchReady = true;
