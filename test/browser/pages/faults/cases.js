// The fault matrix: one table of cases, shared by test/browser/faults.spec.ts,
// test/browser/hosted-providers.spec.ts and bench/reliability.bench.mjs, and
// the rules each case is judged by. Each case names a provider, a service, a
// fault, the knobs that inject it (the backend's query parameters,
// demo/README.md), and what must come of it: the documented event (README
// "Errors and warnings") and whether the session goes on or ends cleanly.
// `CASES` are the reference backend's own services (provider "kyutai" for STT
// and TTS, "openai" for the LLM); `casesFor(provider)` are a hosted
// provider's, run against its emulator with the same judges.

/** The reply watchdog for the stall cases; normal replies send something at least every ~100 ms. */
export const REPLY_STALL_MS = 1500;

const REFERENCE_TABLE = [
  // ── STT: one session each (start-up faults fail start(); mid-stream faults reconnect) ──
  { service: "stt", fault: "capacity", suite: true, query: "capacity=0", persistent: true, expect: { error: "AtCapacityError", outcome: "starts-not" } },
  { service: "stt", fault: "startup-timeout", query: "delay_ms=3000", options: { startupTimeoutMs: 300 }, persistent: true, expect: { error: "ServiceTimeoutError", outcome: "starts-not" } },
  // 14 messages ≈ 1.1 s of Steps: the socket dies while the user is speaking.
  // The speech it had not turned into words is replayed to the new stream
  // (uplink.replayMs): the whole of "Can you help me?" must make the turn
  // (without the replay, only "me" did).
  { service: "stt", fault: "drop", suite: true, query: "drop_after=14", expect: { error: "ConnectionClosedError", fatal: false, outcome: "continues", firstTurnHas: ["can", "you", "help", "me"] } },
  // Reads stop during the speech, for longer than the turn's flush timeout.
  { service: "stt", fault: "stall", query: "stall_after_ms=700&stall_ms=3500", expect: { warningService: "stt", warning: "did not confirm its last words", outcome: "continues" } },
  { service: "stt", fault: "oversize", query: "oversize=20000", options: { maxMessageBytes: 8192 }, expect: { error: "ProtocolError", fatal: false, outcome: "continues" } },
  // Every connection malformed: after 3 reconnects in 10 s the session gives up and stops cleanly.
  { service: "stt", fault: "malformed", suite: true, query: "malformed=1", persistent: true, expect: { error: "ProtocolError", fatal: true, outcome: "ends" } },
  // ── TTS: one turn each on a shared session ──
  { service: "tts", fault: "capacity", suite: true, query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "tts", fault: "startup-timeout", query: "delay_ms=3000", options: { startupTimeoutMs: 200, backoff: { tries: 3 } }, expect: { error: "ServiceTimeoutError", outcome: "continues" } },
  { service: "tts", fault: "drop", query: "drop_after=6", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "tts", fault: "stall", suite: true, query: "stall_after_ms=400&stall_ms=4000", expect: { warningService: "tts", warning: "sent nothing", outcome: "continues" } },
  { service: "tts", fault: "malformed", suite: true, query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  // Default cap: 1 MiB.
  { service: "tts", fault: "oversize", query: "oversize=2000000", expect: { error: "ProtocolError", outcome: "continues" } },
  // ── LLM (OpenAI-compatible SSE): one turn each on the same session ──
  { service: "llm", fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "llm", fault: "startup-timeout", query: "delay_ms=3000", options: { responseTimeoutMs: 400 }, expect: { error: "ServiceTimeoutError", outcome: "continues" } },
  { service: "llm", fault: "drop", suite: true, query: "drop_after=3", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "llm", fault: "stall", suite: true, query: "stall_after_ms=150&stall_ms=3000", expect: { warningService: "llm", warning: "sent nothing", outcome: "continues" } },
  { service: "llm", fault: "malformed", query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  // Default cap: 256 KiB.
  { service: "llm", fault: "oversize", suite: true, query: "oversize=300000", expect: { error: "ProtocolError", outcome: "continues" } },
  // ── LLM over a WebSocket (Responses-API events): the faults it has its own code for ──
  { service: "llm", transport: "ws-llm", fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "drop", suite: true, query: "drop_after=3", expect: { error: "ConnectionClosedError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "malformed", suite: true, query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
  { service: "llm", transport: "ws-llm", fault: "oversize", query: "oversize=300000", expect: { error: "ProtocolError", outcome: "continues" } },
];

/**
 * Every row runs in `npm run bench -- reliability`; `npm test` (faults.spec.ts) runs the rows
 * marked `suite`: one per outcome for the STT (each needs a session of its own, 5–20 s), and for
 * the TTS and LLM the faults with code of their own (the watchdog, the size cap, the WebSocket
 * LLM's parser), so the suite stays inside its time budget.
 */
export const SUITE_CASES = () => CASES.filter((c) => c.suite);
export const CASES = REFERENCE_TABLE.map((c) => ({ ...c, provider: c.service === "llm" ? "openai" : "kyutai", name: `${c.service}${c.transport ? " (websocket)" : ""} ${c.fault}` }));

// ── The hosted providers, each against its emulator ──
// The knobs are the reference backend's; what differs is how each service
// says it, and so which documented error the provider makes of it.
const HOSTED_STT = {
  // Deepgram refuses a stream over its concurrency limit at the handshake (HTTP 429), which a
  // browser cannot read: a refused handshake is a ConnectionClosedError (README, deepgramStt).
  // Nova sends nothing per audio step and its socket is ready once open, so its drop is timed
  // from the open: 0.9 s in, the user is in the middle of "Can you help me?" (words at 0.3-1.3 s).
  "deepgram-nova": { capacityError: "ConnectionClosedError", drop: "drop_after_ms=900" },
  // Flux and AssemblyAI are ready only once the emulator has a recogniser (up to a second or more
  // on a loaded machine), so their drops count messages: Flux's Connected, StartOfTurn and an Update
  // per 0.25 s of audio; AssemblyAI's Begin, SpeechStarted and a Turn per change of its words.
  "deepgram-flux": { capacityError: "ConnectionClosedError", drop: "drop_after=5" },
  // AssemblyAI closes with 3009 (too many concurrent sessions).
  assemblyai: { capacityError: "AtCapacityError", drop: "drop_after=4" },
};
const HOSTED_TTS = ["elevenlabs", "cartesia"];

function hostedSttRows(provider, { capacityError, drop }) {
  return [
    { fault: "capacity", query: "capacity=0", persistent: true, expect: { error: capacityError, outcome: "starts-not" } },
    { fault: "startup-timeout", query: "delay_ms=3000", options: { startupTimeoutMs: 300 }, persistent: true, expect: { error: "ServiceTimeoutError", outcome: "starts-not" } },
    { fault: "drop", query: drop, expect: { error: "ConnectionClosedError", fatal: false, outcome: "continues", firstTurnHas: ["can", "you", "help", "me"] } },
    { fault: "stall", query: "stall_after_ms=700&stall_ms=3500", expect: { warningService: "stt", warning: "did not confirm its last words", outcome: "continues" } },
    { fault: "oversize", query: "oversize=20000", options: { maxMessageBytes: 8192 }, expect: { error: "ProtocolError", fatal: false, outcome: "continues" } },
    { fault: "malformed", query: "malformed=1", persistent: true, expect: { error: "ProtocolError", fatal: true, outcome: "ends" } },
  ].map((row) => ({ provider, service: "stt", ...row }));
}

function hostedTtsRows(provider) {
  return [
    { fault: "capacity", query: "capacity=0", expect: { error: "AtCapacityError", outcome: "continues" } },
    // Both services' sockets open at once and say nothing until the first audio, so a service
    // slow to start is not a start-up timeout (that bounds the open, connectTimeoutMs) but a reply
    // that sends nothing: the reply watchdog (turn.replyStallMs) cuts it off.
    { fault: "startup-timeout", query: "delay_ms=3000", expect: { warningService: "tts", warning: "sent nothing", outcome: "continues" } },
    { fault: "drop", query: "drop_after=6", expect: { error: "ConnectionClosedError", outcome: "continues" } },
    { fault: "stall", query: "stall_after_ms=400&stall_ms=4000", expect: { warningService: "tts", warning: "sent nothing", outcome: "continues" } },
    { fault: "malformed", query: "malformed=1", expect: { error: "ProtocolError", outcome: "continues" } },
    // Default cap: 1 MiB.
    { fault: "oversize", query: "oversize=2000000", expect: { error: "ProtocolError", outcome: "continues" } },
  ].map((row) => ({ provider, service: "tts", ...row }));
}

const HOSTED_CASES = [
  ...Object.entries(HOSTED_STT).flatMap(([provider, how]) => hostedSttRows(provider, how)),
  ...HOSTED_TTS.flatMap(hostedTtsRows),
].map((c) => ({ ...c, name: `${c.provider} ${c.fault}` }));

/** The hosted providers that have fault rows, and which service each one is. */
export const HOSTED_PROVIDERS = Object.fromEntries(HOSTED_CASES.map((c) => [c.provider, c.service]));

/** The fault rows of one hosted provider ("deepgram-nova", "elevenlabs", …). */
export function casesFor(provider) {
  return HOSTED_CASES.filter((c) => c.provider === provider);
}

const NOTHING_OPEN = { stt: 0, tts: 0, llmOpen: 0, llmActive: 0 };

/** The case's documented event was seen, and it names the case's service. */
function reported(c, seen, { nonFatal = false } = {}) {
  const want = c.expect;
  if (want.error) {
    return seen.errors.some((e) => e.name === want.error && e.service === c.service && (want.fatal === undefined || e.fatal === want.fatal) && (!nonFatal || !e.fatal));
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
  // Every case that expects the reply watchdog's warning is cut off by it, once.
  const stalls = cases.filter((c) => c.expect.warning === "sent nothing").length;
  if (interruptions.filter((x) => x === "stall").length !== stalls) out.push(`expected ${stalls} "stall" interruptions, got ${JSON.stringify(interruptions)}`);
  return out;
}
