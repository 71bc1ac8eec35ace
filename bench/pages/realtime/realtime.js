// The realtime bench's page: one conversation per run, on one client
// (clients.js), in the rig's room (rig.js). The user asks a question; each
// trial then talks over the reply at a seeded moment after its first audible
// sample, and the barge-in's words are the next question, whose reply the
// next trial talks over. Per trial the page records what the recording shows
// (judge.js) and the item's id; the emulator's log (what it got: the truncate,
// the next response's input) is read once at the end.
import { makeRig, itemPcm, RATE, SILENT } from "./rig.js";
import { judgeBargeIn, loudMoment, wordsHeard } from "./judge.js";
import { bargeinClient, geminiPeerClient, peerClient } from "./clients.js";

const until = (cond, ms, what) =>
  new Promise((resolve, reject) => {
    const start = performance.now();
    const check = async () => {
      const v = await cond();
      if (v) return resolve(v);
      if (performance.now() - start > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      setTimeout(check, 10);
    };
    check();
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The emulator's log of each socket (OpenAI Realtime: /__realtime/log; Gemini Live: /__gemini/log). */
async function serviceLog(protocol) {
  return (await (await fetch(protocol === "gemini" ? "/__gemini/log" : "/__realtime/log")).json()).sessions;
}
/** Model turns (responses) the socket's log holds. */
const turnsOf = (protocol, session) => (protocol === "gemini" ? session?.turns : session?.responses) ?? [];

/** The context time of the item's first audible sample, read back from the recording. */
async function firstAudibleAt(rig, since) {
  return until(
    async () => {
      const rec = await rig.window(since, rig.context.currentTime);
      const i = rec.samples.findIndex((v) => Math.abs(v) >= 1e-3);
      return i >= 0 ? (rec.startFrame + i) / RATE : false;
    },
    10_000,
    "the reply's first audible sample",
  );
}

/**
 * The trial's onset, in seconds after the reply's first audible sample: the planned moment, moved on to
 * where the reply is loud (judge.js loudMoment), read from the item's audio as it arrives (the emulator
 * sends ahead of playback). Without that, an onset in a pause of the reply is no barge-in, and the trial
 * was not judged (a few of every 24; more under load). The planned moment when the audio has not come by
 * shortly before it.
 */
async function loudMomentOf(item, planned, audibleAt, rig) {
  for (;;) {
    const moment = loudMoment(itemPcm(item), planned);
    if (moment !== undefined || rig.context.currentTime > audibleAt + planned - 0.15) return moment ?? planned;
    await sleep(20);
  }
}

async function run({ client, protocol = "openai", trials, sessionOptions }) {
  const rig = await makeRig();
  const sessionsBefore = (await serviceLog(protocol)).length;
  const peer = protocol === "gemini" ? geminiPeerClient : peerClient;
  const c = await (client === "peer" ? peer(rig) : bargeinClient(rig, sessionOptions, protocol));
  const results = [];
  const problems = [];
  let lostReplies = 0;
  try {
    await rig.say("weather-question");
    // The next reply to talk over is the first item after `seen` (the last trial's item, or after a lost reply).
    let seen = 0;
    for (const [n, trial] of trials.entries()) {
      const state = () => `the client's last events: ${c.trace.slice(-16).join("; ")}; ${c.errors.join("; ")}; wire: ${rig.items.wire.map((w) => `${w.at} ${w.dir} ${w.kind}${w.n > 1 ? ` ×${w.n}` : ""}`).join(" | ")}`;
      let item;
      let audibleAt;
      for (let attempt = 0; audibleAt === undefined; attempt++) {
        // A reply that never came, or came and never played (a lost reply: the client's defect,
        // counted and shown), is asked for again; three in a row end the run.
        if (attempt === 3) throw new Error(`trial ${n}: three replies in a row lost; ${state()}`);
        item = await until(() => rig.items[seen], 30_000, `reply ${n + 1}'s audio`).catch((e) => void problems.push(`trial ${n}: ${e.message}; ${state()}`));
        if (item) {
          audibleAt = await firstAudibleAt(rig, rig.context.currentTime - 0.2).catch((e) => {
            lostReplies++;
            problems.push(`trial ${n}: ${e.message} (item ${item.itemId}): a lost reply; ${state()}`);
            seen = rig.items.indexOf(item) + 1;
          });
        }
        if (audibleAt === undefined) await rig.say("weather-question");
      }
      seen = rig.items.indexOf(item) + 1;
      const moment = await loudMomentOf(item, trial.moment, audibleAt, rig);
      const said = await rig.say(trial.fixture, { onsetAt: audibleAt + moment });
      await until(() => rig.context.currentTime > said.speechEnd + 0.45, 15_000, "the barge-in's speech to end");
      const confirmAt = c.interruptions.find((t) => t >= said.onset - 0.05);
      const rec = await rig.window(audibleAt - 0.25, said.speechEnd + 0.35);
      const judged = judgeBargeIn(rec, itemPcm(item), { ...said, confirmAt });
      if (confirmAt === undefined) problems.push(`trial ${n}: no interruption (onset ${said.onset.toFixed(3)}, speech end ${said.speechEnd.toFixed(3)}): ${state()}`);
      results.push({
        n,
        fixture: trial.fixture,
        moment: trial.moment,
        onsetMoment: moment,
        itemId: item.itemId,
        itemIndex: rig.items.indexOf(item),
        ...judged,
        onsetToConfirmMs: confirmAt === undefined ? null : (confirmAt - said.onset) * 1000,
        outputLatencyMs: c.outputLatencyS() * 1000,
      });
    }
    // The last barge-in's reply: its response's input is the model's view of the last cut item.
    await until(async () => turnsOf(protocol, (await serviceLog(protocol)).at(-1)).length > trials.length, 30_000, "the reply to the last barge-in").catch((e) => problems.push(e.message));
  } finally {
    await c.stop();
    await sleep(200);
    rig.close();
  }
  const log = (await serviceLog(protocol)).slice(sessionsBefore).at(-1);
  const view = protocol === "gemini" ? withGeminiView(log, client) : (t) => withServiceView(t, log);
  return { trials: results.map(view), lostReplies, problems: [...problems, ...c.errors], sampleRate: RATE };
}

/**
 * The emulator's side of a trial: the truncate it got for the item (or none),
 * and the text of the item the next response read.
 */
function withServiceView(t, log) {
  const k = log.responses.findIndex((r) => r.item_id === t.itemId);
  const response = log.responses[k];
  const truncate = log.truncates.find((x) => x.item_id === t.itemId);
  const heardTruthMs = t.renderedMs - t.outputLatencyMs;
  const next = log.responses[k + 1];
  const modelText = next?.input.filter((i) => i.role === "assistant").at(-1)?.text ?? null;
  const words = response?.words ?? [];
  // Without a truncate the model keeps every word of the item.
  const modelWords = modelText === null ? null : modelText.split(/\s+/).filter(Boolean).length;
  return {
    ...t,
    heardTruthMs,
    audioSentMs: response?.audioSentMs ?? null,
    truncate: truncate ? { audio_end_ms: truncate.audio_end_ms, audioSentMs: truncate.audioSentMs, accepted: truncate.accepted } : null,
    truncateErrorMs: truncate ? truncate.audio_end_ms - heardTruthMs : null,
    // The ms the model believes were heard: the truncate's, or (none sent) all the audio it sent.
    modelHeardMs: truncate?.accepted ? truncate.audio_end_ms : response?.audioSentMs ?? null,
    wordsHeard: wordsHeard(words, heardTruthMs),
    modelWords,
    historyWordError: modelWords === null ? null : Math.abs(modelWords - wordsHeard(words, heardTruthMs)),
  };
}

/**
 * The Gemini emulator's side of each trial. The Live API has no truncate and no item ids: the
 * k-th item with audio is the k-th model turn that sent audio. What the model counts as heard:
 * with bargein, the words its note quoted (their last one's end, in ms); with the peer, which
 * sends nothing, all it sent (the service keeps what it sent to the client).
 */
function withGeminiView(log, client) {
  const spoken = (log?.turns ?? []).filter((x) => x.audioSentMs > 0);
  const notes = (log?.clientContents ?? []).map((c) => /"(.*)"/.exec(c.turns?.[0]?.text ?? "")?.[1] ?? "");
  let noted = 0;
  return (t) => {
    const turn = spoken[t.itemIndex];
    const words = turn?.words ?? [];
    const heardTruthMs = t.renderedMs - t.outputLatencyMs;
    const count = (text) => text.split(/\s+/).filter(Boolean).length;
    let modelWords = null;
    let modelHeardMs = null;
    if (client === "peer") {
      modelWords = turn?.contextText == null ? null : count(turn.contextText);
      modelHeardMs = turn?.audioSentMs ?? null;
    } else if (t.onsetToConfirmMs !== null) {
      const note = notes[noted++] ?? "";
      modelWords = count(note);
      modelHeardMs = modelWords === 0 ? 0 : (words[modelWords - 1]?.stop ?? NaN) * 1000;
    }
    const truth = wordsHeard(words, heardTruthMs);
    return {
      ...t,
      heardTruthMs,
      audioSentMs: turn?.audioSentMs ?? null,
      truncate: null,
      modelHeardMs,
      truncateErrorMs: modelHeardMs === null ? null : modelHeardMs - heardTruthMs,
      wordsHeard: truth,
      modelWords,
      historyWordError: modelWords === null ? null : Math.abs(modelWords - truth),
    };
  };
}

window.bench = { run };
window.benchReady = true;
export { SILENT };
