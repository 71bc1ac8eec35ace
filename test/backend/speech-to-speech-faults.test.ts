/**
 * The fault matrix of the speech-to-speech providers (issue #16): for
 * `openaiRealtime` and `geminiLive`, one row per fault knob of their
 * emulators (capacity, delay, drop, stall, malformed, oversize:
 * demo/server/knobs.mjs, socket-faults.mjs), each on a real VoiceSession with
 * bargein/testing's fakes (speech-to-speech-rig.ts), judged by the rules of
 * the cascaded matrix (test/browser/pages/faults/cases.js) against what the
 * README documents ("Errors and warnings", "OpenAI Realtime", "Gemini Live"):
 * - starts-not: start() rejects with the named error, the state is idle and
 *   nothing stays open;
 * - continues: a non-fatal error (or the documented warning), a reconnect
 *   where the socket died, and a turn after the fault is answered;
 * - ends: a fault on every connection is reconnected under the default policy
 *   (3 attempts; no stream stays up its 10 s), then the error is fatal and the
 *   session is idle by itself.
 * Every row: the user's words are in `session.history`, `liveQuests` is empty
 * after stop(), and the emulator's open streams (GET /__stats) are back to 0.
 *
 * Rows run in four lanes side by side (a provider's rows split over two
 * reference backends), each lane one row after the other, so the /__stats
 * counts a row reads are its own. A fault marked `first` hits the first
 * connection only (later ones are clean), as the cascaded matrix's
 * non-persistent rows.
 */
import { afterAll, beforeAll, describe, test, type ExpectStatic } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { elizaReply } from "../../demo/server/eliza.mjs";
import { DEFAULT_REALTIME_MAX_BYTES } from "../../src/providers/realtime-wire.js";
import { emulatorOpenAfter, emulatorStreams, RATE, speechToSpeechRig, STATS_GROUP, type Knobs, type Rig, type RigOptions, type SpeechToSpeech } from "./speech-to-speech-rig.js";
import { sleep } from "../lib/wait.mjs";

const STORY = "tell me a long story";
const HELP = "can you help me";
const NEXT = "please stop";

/** The knobs on the first connection only; the reconnect gets a clean one. */
const first = (query: string): Knobs => (connection) => (connection === 0 ? query : "");

interface Row {
  fault: string;
  knobs: Knobs;
  provider?: RigOptions["provider"];
  session?: RigOptions["session"];
  /** What the user says, in turns: the first right after start() (or after the reconnect, `speakAfterReconnect`). */
  say?: string[];
  speakAfterReconnect?: boolean;
  /** Wait this long once the fault's outcome is seen before the next turn (a stall that must be over first). */
  nextTurnAfterMs?: number;
  /** Wait this long after start() before reading the counters (a delayed handshake that must not complete later). */
  settleMs?: number;
  /**
   * The first turn's words come only after its flush timed out: they open the next turn and join
   * its message, and the reply answers the service's last user turn (the end of that message).
   */
  joined?: boolean;
  expect: {
    outcome: "starts-not" | "continues" | "ends";
    /** The error's name, and a part of its message. */
    error?: string;
    message?: RegExp;
    /** Instead of an error: the documented warning. */
    warning?: RegExp;
    interruption?: string;
    /** The socket died and came back: reconnecting (dropped), reconnected. */
    reconnects?: boolean;
    /** Words the first user turn must hold (speech across a reconnect is replayed, uplink.replayMs). */
    firstTurnHas?: string[];
    /** …and a word after this one: the audio past the reconnect was heard (see "drop mid-speech"). */
    firstTurnGoesOnAfter?: string;
    /** …and a word before this one: the replay began with the utterance (see "drop mid-speech"). */
    firstTurnComesTo?: string;
    /** Streams the emulator took (upgrades that completed). */
    served: number;
  };
}

const TIMEOUT = { openTimeout: "did not open within 300 ms" };
/** "drop mid-speech"'s replay: more than the question and the slowest reconnect together (see there). */
const REPLAY_MS = 10_000;

function rows(kind: SpeechToSpeech): Row[] {
  const service = STATS_GROUP[kind];
  const dropAfter = kind === "openai" ? 30 : 20; // server messages: about 1.8 s into the reply to HELP (4.5 s)
  const common: Row[] = [
    // HTTP 429 at the handshake: a browser cannot read the status, so a refused handshake (README: Deepgram's row).
    { fault: "capacity", knobs: "capacity=0", expect: { outcome: "starts-not", error: "ConnectionClosedError", message: /could not connect .*the handshake failed/, served: 0 } },
    // A slow handshake, bounded by connectTimeoutMs (default 5000).
    { fault: "startup-timeout", knobs: "delay_ms=1200", provider: { connectTimeoutMs: 300 }, settleMs: 1500, expect: { outcome: "starts-not", error: "ServiceTimeoutError", message: new RegExp(`${service}: .* ${TIMEOUT.openTimeout}`), served: 0 } },
    // The socket dies (no close frame) 1 s after it opened, while the user says HELP (0.06–1.6 s): the speech the
    // dead socket had is replayed to the new one, and the whole question is answered.
    {
      fault: "drop mid-speech",
      knobs: first("drop_after_ms=1000"),
      say: [HELP],
      // The replay holds the last uplink.replayMs of audio (neither service gives word times, so none of it counts as
      // transcribed), and the microphone goes on while the session reconnects. The default 3 s held the whole question
      // only while the reconnect took under about 2 s: twice in clean-clone CI (2026-12-06, 2026-12-07: 48,000 samples
      // replayed, the bound) it took longer, on a loaded worker whose other lanes' flite blocked the event loop, and the
      // question's start had fallen out ("help me"; so it does every time with the reconnect's handshake held 3.3 s by
      // the knob delay_ms, and not with this replay). The bound is speech-replay.test.ts's; this row asks whether the
      // speech the dead socket had reaches the new one, so it holds more than a slow reconnect can take.
      // The emulator hears the replay and the live audio at once, in this process beside three other lanes: on a busy
      // machine its words came after the default flush timeout (5 s), and the turn went on with none (the warning). The
      // row asks whether they come, not how soon.
      session: { uplink: { replayMs: REPLAY_MS }, turn: { flushTimeoutMs: 20_000 } },
      // (Gemini: the new socket opens the turn with activityStart, so that the replayed speech is in it.)
      // A word after "help" shows the audio past the splice arrived; one before it, the replay's start.
      expect: { outcome: "continues", error: "ConnectionClosedError", reconnects: true, firstTurnHas: ["help"], firstTurnComesTo: "help", firstTurnGoesOnAfter: "help", served: 2 },
    },
    // The socket dies mid-reply: the reply ends there (its heard part kept), the session reconnects and answers the next turn.
    { fault: "drop mid-reply", knobs: first(`drop_after=${dropAfter}`), say: [HELP, NEXT], expect: { outcome: "continues", error: "ConnectionClosedError", reconnects: true, served: 2 } },
    // Every connection dies 1 s in: 3 reconnects (none stays up 10 s), then fatal.
    { fault: "drop every connection", knobs: "drop_after_ms=1000", expect: { outcome: "ends", error: "ConnectionClosedError", served: 4 } },
    // The service stops sending (and reading) for 3 s mid-reply, after as many messages as "drop mid-reply" (about 1.8 s
    // into the 5 s reply to HELP): the reply watchdog cuts the reply off 1.5 s in. (The long story's reply, which the
    // emulator speaks whole before sending, in this process, blocked the client for 1-2.6 s on a slow machine: the
    // watchdog then cut it before the stall.) (Timed from the socket's open, 3.5 s in, the stall
    // once came before a late reply began, and the story played whole.) The next turn waits out the rest of the stall:
    // said at once, its request reached the stalled service, and the watchdog cut that reply off too. It waits the whole
    // stall after the cut, which came inside it: 2 s were enough while the STT lagged, not once its words came at once;
    // 3 s were not in clean-clone CI on the slow machine of 2026-12-07 (the next reply was cut as well), so 6 s.
    { fault: "stall mid-reply", knobs: `stall_after=${dropAfter}&stall_ms=3000`, session: { turn: { replyStallMs: 1500 } }, nextTurnAfterMs: 6000, say: [HELP, NEXT], expect: { outcome: "continues", warning: /sent nothing for 1500 ms/, interruption: "stall", served: 1 } },
    // The service stops reading (and sending) 0.7–8.2 s in, over the end of HELP (1.9 s, later on a slow machine: with
    // 4.5 s the turn's end once came after the stall): its transcript misses the turn's flush (turn.flushTimeoutMs, 5 s
    // by default for these providers; 2 s here, out at 3.9 s). The turn gets no
    // reply ("replying with what it returned": nothing); its words, when they come, open the next turn and join its
    // message. (With 800 ms, the next turn's flush missed too now and then, on a loaded machine: the full suite.)
    { fault: "stall at the turn's end", knobs: "stall_after_ms=700&stall_ms=7500", session: { turn: { flushTimeoutMs: 2000 } }, say: [HELP, NEXT], joined: true, expect: { outcome: "continues", warning: /did not confirm its last words in time/, firstTurnHas: ["can", "you", "help", "me"], served: 1 } },
  ];
  if (kind === "openai") {
    return [
      ...common,
      // The emulator sends its broken frame right after session.created, before session.updated: inside start().
      {
        fault: "malformed",
        knobs: "malformed=1",
        expect: { outcome: "starts-not", error: "ProtocolError", message: /a message is not valid JSON/, served: 1 },
      },
      // Over the default cap (a 10 s audio delta as base64 and its envelope: 705,536 bytes).
      { fault: "oversize (default cap)", knobs: "oversize=2000000", expect: { outcome: "starts-not", error: "ProtocolError", message: new RegExp(`a message of \\d+ bytes exceeds the limit of ${DEFAULT_REALTIME_MAX_BYTES} \\(maxMessageBytes\\)`), served: 1 } },
      { fault: "oversize (maxMessageBytes)", knobs: "oversize=100000", provider: { maxMessageBytes: 65536 }, expect: { outcome: "starts-not", error: "ProtocolError", message: /exceeds the limit of 65536 \(maxMessageBytes\)/, served: 1 } },
    ];
  }
  return [
    ...common,
    // Gemini's broken frame comes after setupComplete: start() resolves, every connection breaks, then fatal.
    { fault: "malformed", knobs: "malformed=1", expect: { outcome: "ends", error: "ProtocolError", message: /a message is not valid JSON/, served: 4 } },
    // Over maxMessageBytes, refused before it is parsed; the first connection only: the next turn works.
    { fault: "oversize (maxMessageBytes)", knobs: first("oversize=100000"), provider: { maxMessageBytes: 65536 }, say: [NEXT], speakAfterReconnect: true, expect: { outcome: "continues", error: "ProtocolError", message: /exceeds the limit of 65536 \(maxMessageBytes\)/, reconnects: true, served: 2 } },
    // Under the default frame cap (about 0.7 MB), over the wire's text cap (64 Ki characters).
    { fault: "oversize (text cap)", knobs: first("oversize=70000"), say: [NEXT], speakAfterReconnect: true, expect: { outcome: "continues", error: "ProtocolError", message: /outputTranscription\.text is \d+ characters, over the limit of 65536/, reconnects: true, served: 2 } },
  ];
}

/** The OpenAI emulator's commits on its last two sockets (a failing row's dropped one and its reconnect). */
async function realtimeCommits(backend: ReferenceBackend): Promise<unknown> {
  const { sessions } = (await (await fetch(`${backend.url}/__realtime/log`)).json()) as { sessions: Array<{ commits?: unknown[] }> };
  return sessions.slice(-2).map((s) => s.commits);
}

/** The history as "role: text" lines, for messages. */
const lines = (r: Rig) => r.session.history.map((m) => `${m.role}${"interrupted" in m && m.interrupted ? " (interrupted)" : ""}: ${m.text}`);

/** The documented event of the row was seen. */
function reported(row: Row, r: Rig, service: string): boolean {
  const want = row.expect;
  if (want.error) return r.seen.errors.some((e) => e.name === want.error && e.service === service && !e.fatal && (!want.message || want.message.test(e.message)));
  return r.seen.warnings.some((w) => want.warning!.test(w.message));
}

/**
 * The last user turn got its answer: an assistant message after it, as ELIZA answers the words the service heard
 * (`tail`: the service's last user turn is the end of the message, the rest joined it from an earlier turn).
 */
function answered(r: Rig, turns: number, tail = false): boolean {
  const h = r.session.history;
  const users = h.filter((m) => m.role === "user");
  const last = h.at(-1);
  const asked = h.at(-2);
  if (r.session.state !== "listening" || users.length < turns || last?.role !== "assistant" || asked?.role !== "user") return false;
  if ("interrupted" in last && last.interrupted) return false;
  const words = asked.text.split(/\s+/);
  return tail ? words.some((_, i) => i > 0 && last.text === elizaReply(words.slice(i).join(" "))) : last.text === elizaReply(asked.text);
}

async function runRow(row: Row, kind: SpeechToSpeech, backend: ReferenceBackend, key: string, expect: ExpectStatic): Promise<void> {
  const service = STATS_GROUP[kind];
  const before = await emulatorStreams(backend, kind);
  const startedAt = performance.now();
  // The emulators run in this process beside three other lanes and five other files: on a busy machine a
  // reconnect's setup once took over the default 5 s, and a retry ("connect-failed") joined the events a
  // row asserts. The connect timeout is the startup-timeout row's subject, which sets its own.
  const r = speechToSpeechRig(backend, kind, key, { knobs: row.knobs, provider: { connectTimeoutMs: 20_000, ...row.provider }, session: row.session });
  const want = row.expect;
  try {
    if (want.outcome === "starts-not") {
      const failed = await r.session.start().then(() => null, (e: Error) => e);
      expect(failed?.name, `start() should reject with ${want.error}`).toBe(want.error);
      expect(failed?.message).toMatch(want.message!);
      expect((failed as { service?: string } | null)?.service).toBe(service);
      expect(r.session.state).toBe("idle");
      expect(r.session.liveQuests).toEqual([]);
      // One attempt: start() does not retry; the session reports nothing besides the rejection.
      expect(r.tokens()).toBe(1);
      expect(r.seen.events).toEqual([]);
      expect(r.session.history).toEqual([]);
    } else if (want.outcome === "ends") {
      await r.session.start();
      await r.until("the session to give up and stop itself", () => r.seen.errors.some((e) => e.fatal) && r.session.state === "idle", 25_000);
      const fatal = r.seen.errors.filter((e) => e.fatal);
      expect(fatal.map((e) => e.name)).toEqual([want.error]);
      if (want.message) expect(fatal[0]!.message).toMatch(want.message);
      expect(fatal[0]!.service).toBe(service);
      // The default policy: 3 reconnects, then the 4th failure is fatal. Each of the 4 failures is a non-fatal error
      // first (stt-link.ts #run), the 4th then again as the fatal one (#reconnect, once the policy gives up).
      expect(r.seen.events.filter((e) => e.startsWith("reconnecting"))).toEqual(["reconnecting dropped", "reconnecting dropped", "reconnecting dropped"]);
      expect(r.seen.warnings.filter((w) => /reconnecting/.test(w.message))).toHaveLength(3);
      const failures = r.seen.errors.filter((e) => !e.fatal);
      expect(failures.map((e) => e.name)).toEqual([want.error, want.error, want.error, want.error]);
      expect(fatal[0]!.message).toBe(failures[3]!.message);
      expect(r.tokens()).toBe(4);
      expect(r.session.liveQuests, "the session stopped itself: nothing open").toEqual([]);
    } else {
      await r.session.start();
      const turns = row.say ?? [];
      if (row.speakAfterReconnect) await r.until("the reconnect", () => r.seen.events.some((e) => e.startsWith("reconnected")) && r.session.state === "listening");
      const users = () => r.session.history.filter((m) => m.role === "user");
      const messages = turns.length - (row.joined ? 1 : 0);
      for (const [i, text] of turns.entries()) {
        if (i > 0) {
          await r.until("the fault's outcome, and the floor back", () => reported(row, r, service) && (!want.reconnects || r.seen.events.some((e) => e.startsWith("reconnected"))) && r.session.state === "listening", 25_000);
          if (row.nextTurnAfterMs) await sleep(row.nextTurnAfterMs);
          // The late words of the first turn, open as the next turn's start.
          if (row.joined) await r.until("the first turn's late words", () => (want.firstTurnHas ?? []).every((w) => r.seen.partial.toLowerCase().split(/\s+/).includes(w)), 10_000);
        }
        await r.say(text);
        if (!(row.joined && i === 0)) await r.until(`the words of turn ${i + 1} in the history`, () => users().length >= i + 1 - (row.joined ? 1 : 0), 25_000);
      }
      await r.until("the answer to the last turn", () => answered(r, messages, row.joined), 20_000);
      expect(reported(row, r, service), `the documented ${want.error ?? want.warning} in ${JSON.stringify(r.seen)}`).toBe(true);
      expect(r.seen.errors.filter((e) => e.fatal)).toEqual([]);
      if (want.error) expect(r.seen.errors.map((e) => e.name)).toContain(want.error);
      else expect(r.seen.errors, "a warning, and no error").toEqual([]);
      if (want.reconnects) {
        expect(r.seen.events.filter((e) => e.startsWith("reconnect"))).toEqual(["reconnecting dropped", "reconnected 1"]);
        expect(r.tokens(), "a fresh token for the new connection").toBe(2);
      } else {
        expect(r.seen.events.filter((e) => e.startsWith("reconnect"))).toEqual([]);
      }
      if (want.interruption) expect(r.seen.events).toContain(`interruption ${want.interruption}`);
      // The user's words are in the history: every turn said, the first with all of its words.
      expect(users().length, JSON.stringify(lines(r))).toBe(messages);
      const firstWords = users()[0]!.text.toLowerCase().split(/\s+/);
      const goesOn = !want.firstTurnGoesOnAfter || firstWords.indexOf(want.firstTurnGoesOnAfter) < firstWords.length - 1;
      const comesTo = !want.firstTurnComesTo || firstWords.indexOf(want.firstTurnComesTo) > 0;
      if (!goesOn || !comesTo || !(want.firstTurnHas ?? []).every((w) => firstWords.includes(w))) {
        // What the service got (its commits: audio, where its recogniser cut it) and what the uplink did, to tell a lost frame from a misheard one.
        const why = { history: lines(r), events: r.seen.events, uplink: r.session.metrics.uplink, replayedSamples: r.session.metrics.sttReplayedSamples, replayBoundSamples: ((row.session?.uplink?.replayMs ?? 0) / 1000) * RATE[kind], service: kind === "openai" ? await realtimeCommits(backend) : undefined };
        for (const word of want.firstTurnHas ?? []) expect(firstWords, `"${word}" lost from the turn: ${JSON.stringify(why)}`).toContain(word);
        expect(goesOn, `nothing after "${want.firstTurnGoesOnAfter}" in the turn: ${JSON.stringify(why)}`).toBe(true);
        expect(comesTo, `nothing before "${want.firstTurnComesTo}" in the turn: ${JSON.stringify(why)}`).toBe(true);
      }
      // A reply cut by the fault keeps what was heard, marked as cut.
      if (messages > 1) expect(r.session.history[1], JSON.stringify(lines(r))).toMatchObject({ role: "assistant", interrupted: true });
    }
    if (row.settleMs) await sleep(row.settleMs - (performance.now() - startedAt));
  } finally {
    await r.close();
  }
  expect(r.session.state).toBe("idle");
  expect(r.session.liveQuests).toEqual([]);
  expect(r.sockets(), "sockets the provider opened").toBe(r.tokens());
  expect(await emulatorOpenAfter(backend, kind), "the emulator's open streams after stop()").toBe(0);
  const after = await emulatorStreams(backend, kind);
  expect(after.opened - before.opened, "streams the emulator took").toBe(want.served);
  if (row.fault === "capacity") expect(after.rejected - before.rejected).toBe(1);
}

// Four lanes, each a concurrent suite that runs its rows one after the other, each on a reference backend of its
// own: a lane is one provider's rows, so the emulator's counters a row reads are its own, and so are the
// recogniser's decoders. (Pocketsphinx's live cepstral mean carries over from one stream to the next on a pooled
// decoder: with two lanes to a backend, gemini's reconnect took the decoder openai's dropped stream had used, and
// heard "can you help me" as "can you help her own", on every run on one machine; alone, it heard it right.)
const KEY = "speech-to-speech-faults-key";
const backends: ReferenceBackend[] = [];
beforeAll(async () => {
  backends.push(...(await Promise.all([0, 1, 2, 3].map(() => startReferenceBackend({ serveStatic: false, token: KEY })))));
}, 60_000);
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
});

for (const [k, kind] of (["openai", "gemini"] as const).entries()) {
  for (const lane of [0, 1]) {
    const backend = 2 * k + lane;
    describe.concurrent(`${kind}, backend ${backend + 1}`, () => {
      for (const row of rows(kind).filter((_, i) => i % 2 === lane)) {
        const name = `${kind} ${row.fault}: ${row.expect.outcome}${row.expect.error ? ` (${row.expect.error})` : ""}`;
        test.sequential(name, { timeout: 45_000 }, ({ expect }) => runRow(row, kind, backends[backend]!, KEY, expect));
      }
    });
  }
}

// Not a fault: the Live API's notice that it will end the socket (goAway). The session moves to a new
// one at the next quiet moment, before the deadline, with no error; the conversation goes with it.
test("gemini goAway: the session moves to a new socket once the reply is done, with no error; the conversation goes with it and the next turn is answered", { timeout: 45_000 }, async ({ expect }) => {
  const backend = backends[0]!;
  // goAway 1 s after the first setup (while the first turn is under way), 12 s before the service would close.
  const r = speechToSpeechRig(backend, "gemini", KEY, { knobs: first("go_away_after_ms=1000&go_away_left_ms=12000") });
  try {
    await r.session.start();
    await r.say(HELP);
    await r.until("the move", () => r.seen.events.includes("reconnected 1") && r.session.state === "listening", 20_000);
    // It waited for the answer to play out: the first turn was answered on the old socket, then the session moved.
    expect(r.session.history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(r.seen.events.filter((e) => e.startsWith("reconnecting"))).toEqual(["reconnecting moved"]);
    expect(r.seen.states).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening", "reconnecting", "listening"]);
    expect(r.seen.errors).toEqual([]);
    expect(r.seen.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/ends this session's socket in 12s \(goAway\); moving to a new one/)]);
    expect(r.tokens()).toBe(2);
    const { sessions } = (await (await fetch(`${backend.url}/__gemini/log`)).json()) as { sessions: Array<{ goAwaySent?: boolean; clientContents: Array<{ turns: Array<{ role: string; text: string }> }> }> };
    const [old, moved] = sessions.slice(-2);
    expect(old!.goAwaySent).toBe(true);
    expect(moved!.clientContents[0]!.turns).toEqual([
      { role: "user", text: r.session.history[0]!.text },
      { role: "model", text: r.session.history[1]!.text },
    ]);
    await r.say(NEXT);
    await r.until("the next turn's answer", () => r.session.history.length === 4 && r.session.state === "listening", 20_000);
    expect(r.session.history[3]!.text).toBe(elizaReply(r.session.history[2]!.text));
    expect(r.seen.errors).toEqual([]);
  } finally {
    await r.close();
  }
});
