// `npm run bench -- echo`, the page side: open speakers in Chromium. The
// bot's output comes back into the mic through the seeded room of
// test/browser/pages/echo/echo-path.js (delay, loudspeaker nonlinearity,
// decaying-noise impulse response, gain), and the mic is a MediaStream of
// the page, so no browser echo canceller is in the way. Everything else is
// real: the worklets, the Silero worker, the reference backend.
//
// - replies(): asks `count` questions and lets each reply play out; every
//   `interruption` that the page did not ask for is a self-interruption.
// - bargeIns(): asks a question, then talks over the reply `moment` s after
//   it starts; reports whether the barge-in was confirmed and how long the
//   output took to go silent after the utterance's onset (sample-exact, from
//   the recording in the same AudioContext).
// - guardCost(): the guard's own cost per render quantum, in a worker (see
//   guard-cost-worker.js).
import { makeSession, until } from "/test/browser/pages/session/session.js";
import { connectEchoPath } from "/test/browser/pages/echo/echo-path.js";
import { prng } from "/test/lib/prng.mjs";
import { openaiChat } from "/dist/bargein.js";

const QUESTIONS = ["help-me", "stop-please", "turn-on-lights", "weather-question"];
/** How long a reply gets to finish (an unguarded bot may answer its own echo for a while). */
const SETTLE_MS = 30_000;
/** Quiet time in `listening` that counts as the exchange being over. */
const QUIET_MS = 1_200;
/** A quantum that reads below this is silent (-80 dBFS). */
const SILENT = 1e-4;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the session has sat in `listening` for QUIET_MS; false if SETTLE_MS passed first. */
async function settled(t, ms = SETTLE_MS) {
  const deadline = performance.now() + ms;
  let quietSince = performance.now();
  while (performance.now() < deadline) {
    if (t.session.state !== "listening") quietSince = performance.now();
    else if (performance.now() - quietSince >= QUIET_MS) return true;
    await sleep(20);
  }
  return false;
}

/**
 * The barge-in trials talk over a long reply: the backend's responder tells a
 * ~15 s story when asked for one, so every question is asked as that (the
 * user's words still go through the STT and into the history).
 */
function storyLlm() {
  const chat = openaiChat({ url: `${location.origin}/v1`, model: "eliza" });
  return {
    name: "eliza+story",
    stream(messages, signal) {
      const last = messages.map((m) => m.role).lastIndexOf("user");
      return chat.stream(messages.map((m, i) => (i === last ? { role: "user", content: "Tell me a long story." } : m)), signal);
    },
  };
}

function sessionOptions(guard, story, cleanUplink, tailMs) {
  const echoGuard = { enabled: guard, cleanUplink, tailMs };
  return story ? { echoGuard, llm: storyLlm() } : { echoGuard };
}

/** Stops a runaway exchange (the bot answering its own echo) so the next question starts clean. */
async function quiet(t) {
  t.page.manual++;
  await t.session.interrupt();
  await settled(t, 10_000);
}

async function open({ echo, guard, cleanUplink = false, tailMs, recordSeconds, story = false }) {
  const t = await makeSession({ llm: "sse", echo, recordSeconds, sessionOptions: sessionOptions(guard, story, cleanUplink, tailMs) });
  t.page = { manual: 0 };
  await t.session.start();
  await until(() => t.session.state === "listening", 30_000, "listening");
  return t;
}

/**
 * The stutter: the pauses the VAD worker made itself over the bot that no
 * confirmed utterance kept: an onset cue it released, and the pauses (at
 * speech start, or renewed after a lapse) of utterances that ended as a
 * misfire. The bot's echo, not the user. Each pause's length is context time
 * from the pause to its release, lapse or misfire.
 */
function echoPauses(events) {
  const pauses = [];
  let utterance = null;
  let pausedAt = null;
  const close = (e) => {
    if (pausedAt !== null) utterance.push(Math.round((e.contextTime - pausedAt) * 1000));
    pausedAt = null;
  };
  for (const e of events) {
    if (e.kind === "onsetPause") {
      utterance = [];
      pausedAt = e.contextTime;
    } else if (e.kind === "onsetRelease" && utterance) {
      close(e);
      pauses.push(...utterance);
      utterance = null;
    } else if (e.kind === "speechStart") {
      // A speech start keeps the onset cue's pause, if one stood.
      if (pausedAt === null) {
        utterance = e.direct ? [] : null;
        pausedAt = e.direct ? e.contextTime : null;
      }
    } else if (!utterance) continue;
    else if (e.kind === "pauseRenew") pausedAt = e.contextTime;
    else if (e.kind === "pauseLapse") close(e);
    else if (e.kind === "misfire") {
      close(e);
      pauses.push(...utterance);
      utterance = null;
    } else if (e.kind === "speechEnd") {
      utterance = null;
      pausedAt = null;
    }
  }
  return pauses;
}

function echoFigures(t) {
  const e = t.session.metrics.echo;
  return e ? { erleDb: e.erleDb, delayMs: e.delayMs, converged: e.converged, echoWords: e.echoWords } : null;
}

export async function replies({ echo, guard, cleanUplink, tailMs, count }) {
  const t = await open({ echo, guard, cleanUplink, tailMs, recordSeconds: 5 });
  const perReply = [];
  try {
    for (let i = 0; i < count; i++) {
      const question = QUESTIONS[i % QUESTIONS.length];
      const before = t.log.interruptions.filter((e) => e.reason !== "api").length;
      const turns = t.log.turns.length;
      await t.say(question);
      let answered = true;
      try {
        await until(() => t.log.turns.length > turns, 30_000, "the reply");
      } catch {
        answered = false;
      }
      const done = answered && (await settled(t));
      if (!done) await quiet(t);
      perReply.push({
        question,
        answered,
        settled: done,
        selfInterruptions: t.log.interruptions.filter((e) => e.reason !== "api").length - before,
        echo: echoFigures(t),
      });
      await sleep(300);
    }
    const history = JSON.parse(JSON.stringify(t.session.history));
    return {
      echoPath: t.log.echoPath,
      perReply,
      interruptions: t.log.interruptions.filter((e) => e.reason !== "api").map((e) => ({ reason: e.reason, heard: e.heardText })),
      assistantMessages: history.filter((m) => m.role === "assistant").length,
      cutReplies: history.filter((m) => m.role === "assistant" && (m.interrupted || m.unheardText)).length,
      userTurns: history.filter((m) => m.role === "user").map((m) => m.text),
      misfires: t.log.vad.filter((k) => k === "misfire").length,
      echoPauses: echoPauses(t.log.vadEvents),
      echo: echoFigures(t),
      errors: t.log.errors,
      warnings: t.log.warnings,
    };
  } finally {
    await t.session.stop();
    await t.context.close();
  }
}

/**
 * onset → the output silent for good: one sample after the last sample at or
 * above SILENT up to `until` (skipped quanta count as unknown, not silent).
 * Negative when the output had already stopped before the onset (the bot's
 * echo paused it, or a phrase gap was its last audio); null when it never
 * went silent.
 */
function silentAfterMs(rec, sampleRate, onset, until) {
  const index = (time) => Math.round(time * sampleRate) - rec.startFrame;
  const skipped = new Set(rec.missed.map((q) => Math.floor(q / 128)));
  const from = index(onset - 0.5);
  const end = Math.min(index(until), rec.samples.length);
  let last = from;
  for (let i = from; i < end; i++) if (Math.abs(rec.samples[i]) >= SILENT || skipped.has(Math.floor(i / 128))) last = i;
  if (last >= end - Math.round(sampleRate * 0.01)) return null;
  return ((last + 1 - index(onset)) / sampleRate) * 1000;
}

function audibleBefore(rec, sampleRate, onset) {
  const end = Math.round(onset * sampleRate) - rec.startFrame;
  let peak = 0;
  for (let i = Math.max(0, end - Math.round(sampleRate * 0.3)); i < end; i++) peak = Math.max(peak, Math.abs(rec.samples[i]));
  return peak > 0.01;
}

/**
 * One session per trial (the recording holds a session's first seconds, and
 * an unguarded bot's runaway exchange must not spill into the next trial).
 */
async function bargeInTrial({ echo, guard, cleanUplink, tailMs, moment }) {
  const t = await open({ echo, guard, cleanUplink, tailMs, recordSeconds: 30, story: true });
  const trial = { moment };
  try {
    await t.say("weather-question");
    try {
      await until(() => t.session.state === "bot_speaking", 30_000, "the reply");
    } catch {
      trial.failed = "no reply";
      return trial;
    }
    await sleep(moment * 1000);
    // The bot may have stopped on its own echo already (no guard): then there is nothing to barge in on.
    trial.botSpeaking = t.session.state === "bot_speaking" && t.log.interruptions.length === 0;
    const before = t.log.interruptions.length;
    const utterance = await t.say("help-me");
    const speechEnd = utterance.startedAt + utterance.meta.offsetSamples / utterance.meta.sampleRate;
    try {
      await until(() => t.log.interruptions.length > before, 6_000, "the interruption");
      trial.confirmed = true;
      trial.reason = t.log.interruptions.at(-1).reason;
    } catch {
      trial.confirmed = false;
    }
    await until(() => t.context.currentTime > speechEnd + 0.4, 10_000, "the utterance's end");
    const rec = await t.recording();
    // The user's words over the bot become a turn once the VAD's speech end (its redemption) and the STT's flush are done.
    const userFinals = () => t.log.transcripts.filter((line) => line.startsWith("user:")).length;
    await until(() => userFinals() > 1, 8_000, "the barge-in's user turn").catch(() => {});
    trial.audibleAtOnset = audibleBefore(rec, t.context.sampleRate, utterance.onset);
    trial.onsetToSilentMs = silentAfterMs(rec, t.context.sampleRate, utterance.onset, speechEnd + 0.4);
    trial.erleDb = echoFigures(t)?.erleDb ?? null;
    trial.errors = t.log.errors;
    trial.vad = t.log.vad.join(" ");
    trial.states = t.log.states.join(" ");
    trial.transcripts = t.log.transcripts;
    return trial;
  } finally {
    await t.session.stop();
    await t.context.close();
  }
}

export async function bargeIns({ echo, guard, cleanUplink, tailMs, count, seed = 11 }) {
  const random = prng(seed);
  const trials = [];
  for (let i = 0; i < count; i++) trials.push(await bargeInTrial({ echo, guard, cleanUplink, tailMs, moment: 1.5 + random() }));
  return { trials, errors: trials.flatMap((t) => t.errors ?? []) };
}

/**
 * The guard's cost per render quantum in a worker of this Chromium (the
 * render thread has no clock finer than Date.now()): the bot's voice (a
 * fixture) through the echo path, rendered offline at 48 kHz, then a user
 * talking over it, fed quantum by quantum to the capture side of the guard.
 */
export async function guardCost({ echo, seconds = 12 }) {
  const rate = 48000;
  const ctx = new OfflineAudioContext(1, rate * seconds, rate);
  const decode = async (name) => ctx.decodeAudioData(await (await fetch(`/test/fixtures/speech/${name}.wav`)).arrayBuffer());
  const [bot, user] = [await decode("weather-question"), await decode("help-me")];
  // The bot talks for the whole span (its fixture looped), the user from 60 % of it.
  const ref = new Float32Array(rate * seconds);
  const voice = bot.getChannelData(0);
  for (let i = 0; i < ref.length; i++) ref[i] = voice[i % voice.length] * 0.5;
  const refBuffer = ctx.createBuffer(1, ref.length, rate);
  refBuffer.copyToChannel(ref, 0);
  const source = new AudioBufferSourceNode(ctx, { buffer: refBuffer });
  connectEchoPath(ctx, source, ctx.destination, echo);
  const talker = new AudioBufferSourceNode(ctx, { buffer: user });
  talker.connect(ctx.destination);
  source.start(0);
  talker.start(seconds * 0.6);
  const mic = (await ctx.startRendering()).getChannelData(0);
  const worker = new Worker(new URL("./build/guard-cost-worker.js", import.meta.url), { type: "module" });
  try {
    return await new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(`guard-cost worker: ${e.message}`));
      worker.postMessage({ mic, ref, rate, crossOriginIsolated: self.crossOriginIsolated }, [mic.buffer, ref.buffer]);
    });
  } finally {
    worker.terminate();
  }
}

window.echoBench = { replies, bargeIns, guardCost };
window.echoBenchReady = true;
