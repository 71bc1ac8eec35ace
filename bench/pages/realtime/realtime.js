// The realtime bench's page: one conversation per run, on one client
// (clients.js), in the rig's room (rig.js). The user asks a question; each
// trial then talks over the reply at a seeded moment after its first audible
// sample, and the barge-in's words are the next question, whose reply the
// next trial talks over. Per trial the page records what the recording shows
// (judge.js) and the item's id; the emulator's log (what it got: the truncate,
// the next response's input) is read once at the end.
import { makeRig, itemPcm, RATE, SILENT } from "./rig.js";
import { OutputTracker, judgeBargeIn, loudOnsetOnOutput, wordsHeard } from "./judge.js";
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
 * The trial's onset (context s): the planned moment after the reply's first audible sample, moved on to
 * where the output, as it is being rendered, is loud (judge.js loudOnsetOnOutput). Chosen as late as the
 * fixture allows (its speech starts `lead` s after it is scheduled), from what the recording shows has
 * played: an onset placed on the item's own timeline fell, under load, where the output lagging it was
 * quiet ("inaudible onset", 3 of 24 of bargein's and 4 of the peer's with two CPU burners). The planned
 * moment when the output reaches no loud moment within 10 s (the judge then says why).
 */
async function loudOnsetOf(rig, tracker, audibleAt, planned, { lead, cueLead }, problems, n) {
  const target = audibleAt + planned;
  const started = performance.now();
  for (;;) {
    const now = rig.context.currentTime;
    const earliest = now + lead;
    if (performance.now() - started > 10_000) {
      problems.push(`trial ${n}: the output reached no loud moment after ${planned.toFixed(2)} s within 10 s; the onset stays planned`);
      return Math.max(target, earliest);
    }
    const wanted = Math.max(target, earliest);
    // Decide only once the onset is near: the less time between the reading and the onset, the less the output can slip.
    if (wanted - earliest > 0.05) {
      await sleep((wanted - earliest - 0.04) * 1000);
      continue;
    }
    tracker.advance(await rig.window(audibleAt - 0.25, rig.context.currentTime));
    // Loud before the earliest moment the user's speech could pause bargein, not only before its labelled
    // onset: turn-on-lights can cue 98 ms early, and an onset 10 ms into a phrase had the bot paused
    // before that phrase was heard (2 of bargein's trials, "inaudible onset", with the output placed right).
    const cued = loudOnsetOnOutput(tracker, rig.items.map(itemPcm), wanted - cueLead);
    const found = cued && { onset: Math.max(wanted, cued.onset + cueLead) };
    if (found && found.onset - (rig.context.currentTime + lead) <= 0.1) return found.onset;
    if (found) {
      await sleep((found.onset - rig.context.currentTime - lead - 0.04) * 1000);
      continue;
    }
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
  // Which item's audio each quantum of the output was, followed over the whole run (judge.js).
  const tracker = new OutputTracker(() => rig.items.map((item) => ({ pcm: itemPcm(item), arrivedFrame: item.arrivedFrame })));
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
      // The fixture's speech starts onsetS after it is scheduled; a few quanta more for the page to schedule it.
      const fixture = await rig.fixture(trial.fixture);
      const timing = { lead: fixture.onsetS + 0.03, cueLead: fixture.onsetS - fixture.cueS };
      const onset = await loudOnsetOf(rig, tracker, audibleAt, trial.moment, timing, problems, n);
      const said = await rig.say(trial.fixture, { onsetAt: onset });
      const moment = said.onset - audibleAt;
      await until(() => rig.context.currentTime > said.speechEnd + 0.45, 15_000, "the barge-in's speech to end");
      const confirmAt = c.interruptions.find((t) => t >= said.onset - 0.05);
      const rec = await rig.window(audibleAt - 0.25, said.speechEnd + 0.35);
      tracker.advance(rec);
      const judged = judgeBargeIn(rec, itemPcm(item), { ...said, confirmAt }, { tracker, index: rig.items.indexOf(item) });
      if (!judged.judged) problems.push(`trial ${n}: not judged: ${judged.unjudged}`);
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
  // Not below zero: an item cut before it played (an older one playing at the onset) was not heard at all.
  const heardTruthMs = Math.max(0, t.renderedMs - t.outputLatencyMs);
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
    const heardTruthMs = Math.max(0, t.renderedMs - t.outputLatencyMs);
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
