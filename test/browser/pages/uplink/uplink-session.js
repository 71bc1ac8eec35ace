// VoiceSession scenarios for the uplink: an STT that falls behind (policy
// "end" and the reconnect), an STT that never confirms a flush, and LLM
// admission, all against the reference backend that serves this page.
import { LlmAdmission } from "/dist/advanced.js";
import { kyutaiStt, openaiChat } from "/dist/bargein.js";
import { makeSession, until } from "../session/session.js";
import { sleep } from "/test/lib/wait.mjs";

const ws = `ws://${location.host}`;

export async function serverStats() {
  return (await fetch("/__stats")).json();
}

/** The backend's counters once no STT stream is open there (an earlier test's may still be closing). */
async function quietStt(ms = 20000) {
  const deadline = performance.now() + ms;
  for (;;) {
    const stats = await serverStats();
    if (stats.stt.open === 0) return stats;
    if (performance.now() > deadline) throw new Error(`an earlier STT stream is still open at the backend after ${ms} ms: ${JSON.stringify(stats.stt)}`);
    await sleep(100);
  }
}

/**
 * Fills a stalled stream's kernel and network-service buffers with silence
 * until `bufferedAmount` stays above 0 for 500 ms. On loopback a stalled
 * server's socket absorbs about 5 MB (40 s of Kyutai audio) before the
 * browser sees any backpressure; on a real network the buffers are smaller
 * and fill in a moment. Priming stands for that moment, so a test can see the
 * uplink's reaction in seconds. The silence is real audio on the real socket.
 */
export async function primeWithSilence(stream, limitMs = 20000) {
  const frame = new Float32Array(1920);
  const start = performance.now();
  let fullSince = Infinity;
  while (performance.now() - start < limitMs) {
    const now = performance.now();
    if (stream.bufferedAmount > 0) {
      fullSince = Math.min(fullSince, now);
      if (now - fullSince >= 500) return { primedMs: now - start, bufferedAmount: stream.bufferedAmount };
    } else fullSince = Infinity;
    for (let i = 0; i < 20; i++) stream.sendAudio(frame);
    await sleep(0);
  }
  throw new Error(`the stream never showed backpressure in ${limitMs} ms`);
}

/**
 * Keeps a primed stream's buffers full (silence whenever `bufferedAmount` falls
 * under `floorBytes`) until `stop()`. Primed once, a stalled loopback socket
 * was seen to drain: the kernel took the 615 kB the browser held while the
 * session was still starting (the kernel's buffers grow up to tcp_wmem's 4 MB
 * and tcp_rmem's 32 MB here), so the session's uplink never saw backpressure
 * and nothing fell behind (CI, 2026-12-05). Kept full, the stream is as a real
 * slow network's would be by then.
 */
function keepFull(stream, floorBytes) {
  const frame = new Float32Array(1920);
  let on = true;
  const tick = () => {
    if (!on) return;
    try {
      for (let i = 0; i < 20 && stream.bufferedAmount < floorBytes; i++) stream.sendAudio(frame);
    } catch {
      return; // the session ended the stream
    }
    setTimeout(tick, 10);
  };
  tick();
  return () => (on = false);
}

/**
 * A kyutaiStt whose n-th connection uses the n-th query (the last one after
 * that): the first can be a stalled server and the reconnect a healthy one.
 * `prime`: prime the first connection (see primeWithSilence) and keep it full
 * until `stopPriming()` (see keepFull).
 */
export function sttSequence(queries, { prime = false } = {}) {
  // The start-up timeout is not what these scenarios test (the faults matrix does): with the primed stream's
  // megabytes to read and two CPU burners beside it, the backend once said Ready to the reconnect after 5 s.
  const providers = queries.map((q) => kyutaiStt({ urls: `${ws}/?${q}`, startupTimeoutMs: 20_000 }));
  const connections = [];
  let stopKeeping = () => {};
  return {
    connections,
    stopPriming: () => stopKeeping(),
    provider: {
      name: providers[0].name,
      audioFormat: providers[0].audioFormat,
      supportsGap: providers[0].supportsGap,
      async connect(signal) {
        const index = Math.min(connections.length, providers.length - 1);
        connections.push({ index, at: performance.now() });
        const stream = await providers[index].connect(signal);
        if (prime && index === 0) {
          connections.at(-1).primed = await primeWithSilence(stream);
          stopKeeping = keepFull(stream, 240_000);
        }
        return stream;
      },
    },
  };
}

/** Policy "end": the first STT connection falls behind, the session ends it, reconnects, and still transcribes. */
export async function endPolicyScenario({ stallQuery, budgetMs = 500 }) {
  const stats0 = await quietStt(); // an earlier test's stream closing now must not count as this one's
  const stt = sttSequence([stallQuery, "endpoint_ms=480"], { prime: true });
  const t = await makeSession({ sessionOptions: { stt: stt.provider, uplink: { budgetMs, policy: "end" } } });
  const overloads = [];
  t.session.on("overload", (e) => overloads.push({ ...e, at: performance.now() }));
  t.session.on("overload", () => stt.stopPriming());
  await t.session.start().finally(() => setTimeout(() => stt.stopPriming(), 10000));
  const startedAt = performance.now();
  // The primed first stream is over budget at the first frame: overload, end, reconnect.
  await until(() => stt.connections.length >= 2 && t.session.liveQuests.includes("stt") && (t.session.metrics.uplink?.sentSamples ?? 0) > 0, 20000).catch((err) => {
    // Say where it stuck: a bare timeout says nothing about the cause.
    const where = { connections: stt.connections, liveQuests: t.session.liveQuests, state: t.session.state, uplink: t.session.metrics.uplink, overloads, warnings: t.log.warnings, errors: t.log.errors };
    throw new Error(`${err.message}; instead ${JSON.stringify(where)}`);
  });
  const reconnectedAfterMs = performance.now() - startedAt;
  const uplinkAfterReconnect = t.session.metrics.uplink;
  await t.say("turn-on-lights");
  let transcribed = true;
  await until(() => t.log.transcripts.some((l) => l.startsWith("user:")), 30000).catch(() => (transcribed = false));
  const liveQuests = t.session.liveQuests;
  // The ended stream's close frame waits behind the stalled bytes; the server reads it when its stall ends.
  let closedNormally = false;
  const deadline = performance.now() + 20000;
  while (performance.now() < deadline) {
    const s = await serverStats();
    if (s.stt.closedNormally > stats0.stt.closedNormally) {
      closedNormally = true;
      break;
    }
    await sleep(200);
  }
  const stats1 = await serverStats();
  await t.session.stop();
  return {
    overloads,
    warnings: t.log.warnings,
    errors: t.log.errors,
    transcripts: t.log.transcripts,
    transcribed,
    connections: stt.connections,
    reconnectedAfterMs,
    uplinkAfterReconnect,
    liveQuests,
    closedNormally,
    closedNormallyDelta: stats1.stt.closedNormally - stats0.stt.closedNormally,
  };
}

/**
 * An STT that never confirms the flush: `ignore_markers=1` (words still come,
 * the marker never does) or a stall (nothing comes). The turn must go on after
 * `turn.flushTimeoutMs`, and stop() must not hang.
 */
export async function unansweredFlushScenario({ query, flushTimeoutMs = 1000, fixture = "turn-on-lights", waitForReply = true }) {
  // The counters are the backend's, and an earlier test's stream may still be open there (a stalled one reads its
  // close frame only when its stall ends): "back to where it was" then never came, once in CI. This test's streams are
  // told apart by starting from none.
  const stats0 = await quietStt();
  const stt = kyutaiStt({ urls: `${ws}/?${query}`, startupTimeoutMs: 5000 });
  const t = await makeSession({ sessionOptions: { stt, turn: { flushTimeoutMs } } });
  const warningsAt = [];
  t.session.on("warning", (w) => warningsAt.push({ message: w.message, at: performance.now() }));
  const thinkingAt = [];
  t.session.on("state", (e) => e.state === "bot_thinking" && thinkingAt.push(performance.now()));
  const speechEndAt = [];
  t.session.on("vad", (e) => e.kind === "speechEnd" && speechEndAt.push(performance.now()));
  await t.session.start();
  await t.say(fixture);
  if (waitForReply) await until(() => t.log.transcripts.some((l) => l.startsWith("user:")), 30000);
  else await until(() => warningsAt.some((w) => /did not confirm/.test(w.message)), 30000);
  await until(() => t.session.state === "listening" || t.session.state === "bot_speaking", 30000);
  const stateBeforeStop = t.session.state;
  const stopStart = performance.now();
  await t.session.stop();
  const stopMs = performance.now() - stopStart;
  const stats1 = await serverStats();
  // The server sees the socket closed (a stalled server once its stall is over).
  const deadline = performance.now() + 30000;
  let serverSawClose = false;
  let stats2 = stats1;
  while (performance.now() < deadline) {
    stats2 = await serverStats();
    if (stats2.stt.open === 0 && stats2.stt.closedByClient > stats0.stt.closedByClient) {
      serverSawClose = true;
      break;
    }
    await sleep(200);
  }
  return {
    warnings: warningsAt.map((w) => ({ message: w.message, afterSpeechEndMs: speechEndAt.length ? w.at - speechEndAt[0] : null })),
    thinkingAfterSpeechEndMs: thinkingAt.length && speechEndAt.length ? thinkingAt[0] - speechEndAt[0] : null,
    transcripts: t.log.transcripts,
    errors: t.log.errors,
    stateBeforeStop,
    finalState: t.session.state,
    stopMs,
    serverSawClose,
    sttBefore: stats0.stt,
    sttAfter: stats2.stt,
    sttOpenBefore: stats0.stt.open,
    sttOpenAtStop: stats1.stt.open,
    markersDelta: stats2.stt.markers - stats0.stt.markers,
  };
}

/** LLM admission with one slot: a request whose deadline passes in the queue is never sent. */
export async function admissionScenario({ deadlineMs = 300, wordMs = 100 }) {
  const llm = openaiChat({ url: `${location.origin}/v1?word_ms=${wordMs}`, model: "eliza" });
  const admission = new LlmAdmission({ concurrency: 1, deadlineMs });
  const wrapped = admission.wrap(llm);
  const read = async (messages) => {
    const started = performance.now();
    let text = "";
    for await (const delta of wrapped.stream(messages)) text += delta;
    return { text, ms: performance.now() - started };
  };
  const before = (await serverStats()).llm;
  const first = read([{ role: "user", content: "tell me a long story" }]);
  await sleep(20);
  const second = read([{ role: "user", content: "hello there" }]).then(
    (r) => ({ ok: true, ...r }),
    (e) => ({ ok: false, name: e.name, message: e.message }),
  );
  const [a, b] = await Promise.all([first, second]);
  const after = (await serverStats()).llm;
  // A third request after the queue cleared is admitted and sent.
  const c = await read([{ role: "user", content: "hello there" }]);
  const afterThird = (await serverStats()).llm;
  return {
    first: a,
    second: b,
    third: { words: c.text.split(/\s+/).length },
    requestsStartedDelta: after.requestsStarted - before.requestsStarted,
    requestsStartedAfterThird: afterThird.requestsStarted - before.requestsStarted,
    metrics: admission.metrics,
  };
}

window.uplinkSession = { endPolicyScenario, unansweredFlushScenario, admissionScenario, serverStats };
window.uplinkSessionReady = true;
