// The realtime bench's page: one conversation per run, on one client
// (clients.js), in the rig's room (rig.js). The user asks a question; each
// trial then talks over the reply at a seeded moment after its first audible
// sample, and the barge-in's words are the next question, whose reply the
// next trial talks over. Per trial the page records what the recording shows
// (judge.js) and the item's id; the emulator's log (what it got: the truncate,
// the next response's input) is read once at the end.
import { makeRig, itemPcm, RATE, SILENT } from "./rig.js";
import { judgeBargeIn, wordsHeard } from "./judge.js";
import { bargeinClient, peerClient } from "./clients.js";

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

async function realtimeLog() {
  return (await (await fetch("/__realtime/log")).json()).sessions;
}

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

async function run({ client, trials, sessionOptions }) {
  const rig = await makeRig();
  const sessionsBefore = (await realtimeLog()).length;
  const c = await (client === "peer" ? peerClient(rig) : bargeinClient(rig, sessionOptions));
  const results = [];
  const problems = [];
  try {
    await rig.say("weather-question");
    for (const [n, trial] of trials.entries()) {
      const seen = results.length === 0 ? 0 : rig.items.findIndex((i) => i.itemId === results.at(-1).itemId) + 1;
      let item;
      try {
        item = await until(() => rig.items[seen], 30_000, `reply ${n + 1}'s audio`);
      } catch (err) {
        // The STT heard nothing in the last utterance: ask again.
        problems.push(`trial ${n}: ${err.message}; asked again`);
        await rig.say("weather-question");
        item = await until(() => rig.items[seen], 30_000, `reply ${n + 1}'s audio (asked again)`);
      }
      const since = rig.context.currentTime - 0.2;
      const audibleAt = await firstAudibleAt(rig, since);
      const said = await rig.say(trial.fixture, { onsetAt: audibleAt + trial.moment });
      await until(() => rig.context.currentTime > said.speechEnd + 0.45, 15_000, "the barge-in's speech to end");
      const confirmAt = c.interruptions.find((t) => t >= said.onset - 0.05);
      const rec = await rig.window(audibleAt - 0.25, said.speechEnd + 0.35);
      const judged = judgeBargeIn(rec, itemPcm(item), { ...said, confirmAt });
      if (confirmAt === undefined) problems.push(`trial ${n}: no interruption (onset ${said.onset.toFixed(3)}, speech end ${said.speechEnd.toFixed(3)}): ${c.trace.slice(-12).join("; ")}`);
      results.push({
        n,
        fixture: trial.fixture,
        moment: trial.moment,
        itemId: item.itemId,
        ...judged,
        onsetToConfirmMs: confirmAt === undefined ? null : (confirmAt - said.onset) * 1000,
        outputLatencyMs: c.outputLatencyS() * 1000,
      });
    }
    // The last barge-in's reply: its response's input is the model's view of the last cut item.
    await until(async () => (await realtimeLog()).at(-1)?.responses.length > trials.length, 30_000, "the reply to the last barge-in").catch((e) => problems.push(e.message));
  } finally {
    await c.stop();
    await sleep(200);
    rig.close();
  }
  const log = (await realtimeLog()).slice(sessionsBefore).at(-1);
  return { trials: results.map((t) => withServiceView(t, log)), problems: [...problems, ...c.errors], sampleRate: RATE };
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

window.bench = { run };
window.benchReady = true;
export { SILENT };
