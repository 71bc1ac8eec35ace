// The fault matrix: one table of cases, shared by test/browser/faults.spec.ts
// and bench/reliability.bench.mjs, and the rules each case is judged by.
// Each case names a service, a fault, the knobs that inject it (the backend's
// query parameters, demo/README.md), and what must come of it: the documented
// event (docs/errors.md) and whether the session goes on or ends cleanly.

/** The reply watchdog for the stall cases; normal replies send something at least every ~100 ms. */
export const REPLY_STALL_MS = 1500;

const TABLE = [
  // ── STT: one session each (start-up faults fail start(); mid-stream faults reconnect) ──
  { service: "stt", fault: "capacity", query: "capacity=0", persistent: true, expect: { error: "AtCapacityError", outcome: "starts-not" } },
  { service: "stt", fault: "startup-timeout", query: "delay_ms=3000", options: { startupTimeoutMs: 300 }, persistent: true, expect: { error: "ServiceTimeoutError", outcome: "starts-not" } },
  // 14 messages ≈ 1.1 s of Steps: the socket dies while the user is speaking.
  // The speech it had not turned into words is replayed to the new stream
  // (uplink.replayMs): the whole of "Can you help me?" must make the turn
  // (without the replay, only "me" did).
  { service: "stt", fault: "drop", query: "drop_after=14", expect: { error: "ConnectionClosedError", fatal: false, outcome: "continues", firstTurnHas: ["can", "you", "help", "me"] } },
  // Reads stop during the speech, for longer than the turn's flush timeout.
  { service: "stt", fault: "stall", query: "stall_after_ms=700&stall_ms=3500", expect: { warningService: "stt", warning: "did not confirm its last words", outcome: "continues" } },
  { service: "stt", fault: "oversize", query: "oversize=20000", options: { maxMessageBytes: 8192 }, expect: { error: "ProtocolError", fatal: false, outcome: "continues" } },
  // Every connection malformed: after 3 reconnects in 10 s the session gives up and stops cleanly.
  { service: "stt", fault: "malformed", query: "malformed=1", persistent: true, expect: { error: "ProtocolError", fatal: true, outcome: "ends" } },
  // ── TTS: one turn each on a shared session ──
  { service: "tts", fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "tts", fault: "startup-timeout", query: "delay_ms=3000", options: { startupTimeoutMs: 200, backoff: { tries: 3 } }, expect: { error: "ServiceTimeoutError", outcome: "continues" } },
  { service: "tts", fault: "drop", query: "drop_after=6", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "tts", fault: "stall", query: "stall_after_ms=400&stall_ms=4000", expect: { warningService: "tts", warning: "sent nothing", outcome: "continues" } },
  { service: "tts", fault: "malformed", query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  // Default cap: 1 MiB.
  { service: "tts", fault: "oversize", query: "oversize=2000000", expect: { error: "ProtocolError", outcome: "continues" } },
  // ── LLM (OpenAI-compatible SSE): one turn each on the same session ──
  { service: "llm", fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "llm", fault: "startup-timeout", query: "delay_ms=3000", options: { responseTimeoutMs: 400 }, expect: { error: "ServiceTimeoutError", outcome: "continues" } },
  { service: "llm", fault: "drop", query: "drop_after=3", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "llm", fault: "stall", query: "stall_after_ms=150&stall_ms=3000", expect: { warningService: "llm", warning: "sent nothing", outcome: "continues" } },
  { service: "llm", fault: "malformed", query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  // Default cap: 256 KiB.
  { service: "llm", fault: "oversize", query: "oversize=300000", expect: { error: "ProtocolError", outcome: "continues" } },
  // ── LLM over a WebSocket (Responses-API events): the faults it has its own code for ──
  { service: "llm", transport: "ws-llm", fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "drop", query: "drop_after=3", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "malformed", query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "oversize", query: "oversize=300000", expect: { error: "ProtocolError", outcome: "continues" } },
];

export const CASES = TABLE.map((c) => ({ ...c, name: `${c.service}${c.transport ? " (websocket)" : ""} ${c.fault}` }));

const NOTHING_OPEN = { stt: 0, tts: 0, llmOpen: 0, llmActive: 0 };

function reported(c, seen, { nonFatal = false } = {}) {
  const want = c.expect;
  if (want.error) {
    return seen.errors.some((e) => e.name === want.error && (want.fatal === undefined || e.fatal === want.fatal) && (!nonFatal || !e.fatal));
  }
  return seen.warnings.some((w) => w.service === want.warningService && new RegExp(want.warning).test(w.message));
}

/** Partials reported at a fault that are in no user message of `history`: words the session lost. */
export function lostWords(partials, history) {
  return partials.filter((p) => p && !history.some((text) => text.startsWith(p)));
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What went wrong with an STT case run by faults.js runSttCase: [] when it behaved. */
export function judgeSttCase(c, r) {
  const out = [];
  const fail = (what) => out.push(`${c.name}: ${what}`);
  if (c.expect.outcome === "starts-not") {
    if (r.startError !== c.expect.error) fail(`start() should reject with ${c.expect.error}, got ${r.startError}`);
    if (r.stateBeforeStop !== "idle") fail(`state ${r.stateBeforeStop} after a failed start`);
  } else {
    if (r.startError) fail(`start() rejected with ${r.startError}`);
    if (!reported(c, r.seen)) fail(`no ${c.expect.error ?? `warning /${c.expect.warning}/`} in ${JSON.stringify(r.seen)}`);
    if (c.expect.outcome === "ends") {
      if (r.stateBeforeStop !== "idle") fail(`the session should have stopped itself, state ${r.stateBeforeStop}`);
      const reconnects = r.seen.warnings.filter((w) => /reconnecting/.test(w.message)).length;
      if (reconnects !== 3) fail(`expected 3 bounded reconnects before giving up, got ${reconnects}`);
    } else {
      if (!r.nextTurn?.history?.length || !r.nextTurn?.reply) fail(`the next turn did not work: ${JSON.stringify(r.nextTurn)}`);
      if (r.seen.errors.some((e) => e.fatal)) fail("a fatal error");
      const firstTurn = (r.history[0] ?? "").toLowerCase().split(/\s+/);
      const missing = (c.expect.firstTurnHas ?? []).filter((w) => !firstTurn.includes(w));
      if (missing.length) fail(`speech lost across the reconnect: ${JSON.stringify(missing)} not in the turn ${JSON.stringify(r.history[0])}`);
    }
  }
  const lost = lostWords(r.partialAtReport, r.history);
  if (lost.length) fail(`lost the user's words ${JSON.stringify(lost)} from ${JSON.stringify(r.history)}`);
  if (r.stateAfterStop !== "idle") fail(`state ${r.stateAfterStop} after stop()`);
  if (r.liveQuests.length) fail(`live streams after stop(): ${r.liveQuests}`);
  if (!same(r.released, { pageSockets: 0, server: NOTHING_OPEN })) fail(`not released: ${JSON.stringify(r.released)}`);
  if (r.unhandled.length) fail(`unhandled: ${r.unhandled}`);
  return out;
}

/** What went wrong with one TTS/LLM turn of faults.js runReplyCases. `finalUsers`: the user messages at the end of the run. */
export function judgeReplyCase(c, res, index, finalUsers) {
  const out = [];
  const fail = (what) => out.push(`${c.name}: ${what}`);
  if (res.timeout) fail(`timed out (${res.timeout})`);
  if (!reported(c, res.seen, { nonFatal: true })) fail(`no ${c.expect.error ?? `warning /${c.expect.warning}/`} in ${JSON.stringify(res.seen)}`);
  if (res.seen.errors.some((e) => e.fatal)) fail("a fatal error");
  if (res.state !== "listening") fail(`state ${res.state}, not back to listening`);
  if (!same(res.liveQuests, ["stt"])) fail(`live streams ${res.liveQuests}, not just stt`);
  if (!same(res.released, { pageSockets: 1, server: { ...NOTHING_OPEN, stt: 1 } })) fail(`sockets not back to the STT's one: ${JSON.stringify(res.released)}`);
  if (res.unhandled.length) fail(`unhandled: ${res.unhandled}`);
  const users = res.history.filter((m) => m.role === "user");
  if (users.length < index + 1) fail(`the user's turn is not in history (${users.length} user messages after turn ${index + 1})`);
  const lost = lostWords(res.partialAtReport, finalUsers);
  if (lost.length) fail(`lost the user's words ${JSON.stringify(lost)}`);
  if (c.service === "tts" && c.expect.error) {
    // The reply's text the failed TTS never voiced was not heard: history must say so.
    const reply = res.history.filter((m) => m.role === "assistant").at(-1);
    if (!reply?.interrupted || !reply.unheardText) fail(`the reply is not marked as partly unheard: ${JSON.stringify(reply)}`);
  }
  return out;
}

/** What went wrong with the clean turn after all the faults, and the stop after it. */
export function judgeCleanTurn(clean, interruptions, cases) {
  const out = [];
  if (clean.seen.errors.length) out.push(`clean turn: errors ${JSON.stringify(clean.seen.errors)}`);
  if (!(clean.turn?.speechEndToFirstAudibleMs > 0)) out.push("clean turn: no reply was heard");
  if (clean.turn?.interrupted) out.push("clean turn: interrupted");
  if (clean.stateAfterStop !== "idle") out.push(`state ${clean.stateAfterStop} after stop()`);
  if (!same(clean.releasedAfterStop, { pageSockets: 0, server: NOTHING_OPEN })) out.push(`not released after stop(): ${JSON.stringify(clean.releasedAfterStop)}`);
  const stalls = cases.filter((c) => c.fault === "stall").length;
  if (interruptions.filter((x) => x === "stall").length !== stalls) out.push(`expected ${stalls} "stall" interruptions, got ${JSON.stringify(interruptions)}`);
  return out;
}
