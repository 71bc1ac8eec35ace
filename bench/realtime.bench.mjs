// `npm run bench -- realtime`: barge-in on a speech-to-speech API, bargein
// against the peer's own client, in the same Chromium, against the same
// emulator (the reference backend's OpenAI Realtime, built from OpenAI's docs:
// it is not the service), with the same injected speech and the same seeded
// moments (bench/pages/realtime/).
//
// Per client, one conversation of TRIALS barge-ins, each at a seeded moment
// 0.25–2.5 s after the reply's first audible sample, moved on to where the output is
// loud, so every onset is over the bot's voice. Judged on the recorded
// output and on what the emulator got (bench/pages/realtime/judge.js):
// - onsetToSilentMs: the barge-in's speech onset → the output silent for good;
// - truncateErrorMs: the truncate's audio_end_ms − the item's ms heard, i.e. its
//   rendered ms (where the recorded output stops matching the item's PCM) less
//   the output latency, the rule the issue gives; rejectedTruncates: truncates
//   the emulator refused (past the audio sent); noTruncate: cuts that sent none
//   (the model then keeps all the audio sent);
// - staleSamples: output of the item from 20 ms after the client stopped it
//   (bargein: the interruption; the peer: audio_interrupted) to the speech's
//   end + 0.3 s;
// - historyWordError: |words of the item in the next response's input − words
//   heard| (a word is heard when its midpoint played: the emulator's own rule);
// - lostReplies: replies whose audio came and never played (the question is
//   asked again; three in a row end the run);
// - notStopped: barge-ins the client never stopped (the item played on over the
//   user; in the figures);
// - staleAudioTrials / staleAudioMs: trials whose output held an older item's
//   audio (the client's queue playing an older turn on after a barge-in it did
//   not stop), judged and in the figures; staleAtOnset: those over it at the onset;
// - left out of the figures, each with the judge's reason (unjudged):
//   notBargeIns (the output was quiet at the onset) and misaligned (the output
//   at the onset was neither the reply nor an older item).
// The onset is chosen on the output as rendered (what the recording shows is
// playing, shortly before), not on the item's own timeline, which the output
// lags under load.
// The peer is @openai/agents-realtime 0.20.0's OpenAIRealtimeWebSocket with
// server_vad, bundled at bench time (bench/lib/page-bundle.mjs) into
// bench/pages/realtime/vendor/, removed after.
//
// Gemini Live (`gemini.*`), on the Gemini Live emulator: bargein's geminiLive
// against @google/genai 3.3.0's live client (bundled as vendor/genai.js). The
// protocol has no truncate, so truncateErrorMs there is the ms the model counts
// as heard (bargein: the end of the last word its note quoted; the peer, which
// sends nothing: all the audio sent, which the service keeps) less the ms heard.
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { planTrials, round } from "./lib/bargein-summary.mjs";
import { bundleForPage, writeVendor } from "./lib/page-bundle.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8861;
const SEED = 23;
const TRIALS = Number(process.env.BENCH_REALTIME_TRIALS ?? 24);
const FIXTURES = ["help-me", "turn-on-lights"];
const VENDOR = new URL("./pages/realtime/vendor/", import.meta.url);
/** Which runs, in order; BENCH_REALTIME_RUNS=openai.bargein,gemini.peer (say) runs some, for exploring. */
const RUNS = (process.env.BENCH_REALTIME_RUNS ?? "openai.bargein,openai.peer,gemini.bargein,gemini.peer").split(",").map((r) => r.split("."));
const CLIENTS = {
  openai: {
    bargein: "bargein openaiRealtime, turnDetection client (its default)",
    peer: "@openai/agents-realtime 0.20.0 OpenAIRealtimeWebSocket, server_vad, the app's queue player emptied on audio_interrupted",
  },
  gemini: {
    bargein: "bargein geminiLive, turnDetection client (its default): the heard words told in a clientContent note",
    peer: "@google/genai 3.3.0 live.connect, automatic activity detection, the app's queue player emptied on serverContent.interrupted",
  },
};

export default async function realtimeBench() {
  const plan = planTrials(TRIALS, SEED, FIXTURES);
  const removeVendor = writeVendor(VENDOR, {
    "agents-realtime.js": { code: await bundleForPage("bench/pages/realtime/agents-entry.js") },
    "genai.js": { code: await bundleForPage("bench/pages/realtime/genai-entry.js") },
  });
  const problems = [];
  const runs = {};
  try {
    await withBench({ port: PORT }, async ({ server, browser, step }) => {
      for (const [protocol, client] of RUNS) {
        const name = `${protocol}.${client}`;
        const page = await step(`${name}: a new page`, () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
        page.on("pageerror", (e) => problems.push(`${name}: pageerror: ${e.message}`));
        page.on("console", (m) => m.type() === "error" && problems.push(`${name}: console: ${m.text()}`));
        page.on("response", (r) => r.status() >= 400 && problems.push(`${name}: ${r.status()} ${r.url()}`));
        await step(`${name}: open realtime.html`, async () => {
          await page.goto(`${server.base}/bench/pages/realtime/realtime.html`);
          await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
        });
        const started = Date.now();
        runs[name] = await step(`${name}: ${plan.length} barge-ins`, () => page.evaluate((o) => window.bench.run(o), { client, protocol, trials: plan, sessionOptions: process.env.BENCH_REALTIME_GUARD === "off" ? { echoGuard: { enabled: false } } : {} }), { timeoutMs: 40_000 * plan.length });
        problems.push(...runs[name].problems.map((p) => `${name}: ${p}`));
        const s = summarise(runs[name].trials, protocol);
        console.log(`  ${name}: ${s.judged} of ${s.planned} judged (${s.notBargeIns} inaudible, ${s.misaligned} misaligned, ${s.staleAudioTrials} with stale audio, ${s.notStopped} not stopped) in ${((Date.now() - started) / 1000).toFixed(0)} s; silent p95 ${s.onsetToSilentMs.p95} ms; truncate error mean ${s.truncateErrorMs.mean} ms, max ${s.truncateErrorMs.max} ms; rejected ${s.rejectedTruncates}`);
        await step(`${name}: close the page`, () => page.close(), { timeoutMs: PAGE_OP_MS });
      }
    });
  } finally {
    removeVendor();
  }
  const pair = (protocol) => {
    const bargein = runs[`${protocol}.bargein`] ? summarise(runs[`${protocol}.bargein`].trials, protocol) : null;
    const peer = runs[`${protocol}.peer`] ? summarise(runs[`${protocol}.peer`].trials, protocol) : null;
    const ratio =
      bargein && peer
        ? {
            onsetToSilentP95: round(peer.onsetToSilentMs.p95 / bargein.onsetToSilentMs.p95),
            truncateErrorMeanAbs: round(peer.truncateErrorMs.meanAbs / Math.max(bargein.truncateErrorMs.meanAbs, 0.01)),
          }
        : null;
    const lost = (client) => runs[`${protocol}.${client}`]?.lostReplies ?? null;
    return { bargein: { client: CLIENTS[protocol].bargein, ...bargein, lostReplies: lost("bargein") }, peer: { client: CLIENTS[protocol].peer, ...peer, lostReplies: lost("peer") }, ratio };
  };
  return {
    openai: { emulator: "the reference backend's OpenAI Realtime emulator (demo/server/emulators/openai-realtime.mjs), not the service", ...pair("openai") },
    gemini: {
      emulator: "the reference backend's Gemini Live emulator (demo/server/emulators/gemini-live.mjs), not the service",
      truncateErrorMs:
        "the Live API has no truncate: the ms the model counts as heard (bargein: to the end of the last word its note quoted; the peer: all the audio the service sent, which it keeps) less the ms heard",
      ...pair("gemini"),
    },
    goal: "onsetToSilentMs p95 < 100; |truncateErrorMs| < 3 with 0 rejectedTruncates",
    plan: { seed: SEED, trials: TRIALS, fixtures: FIXTURES.join(","), momentS: "0.25–2.5" },
    problems,
    perTrial: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, r.trials.map(compact)])),
  };
}

/**
 * Figures over the judged trials: barge-ins over the bot's audible voice, whether the output at the
 * onset was the trial's reply or an older item's audio (the client's queue playing an older turn on:
 * a finding of the row, staleAudioTrials, in the figures as the user met it).
 */
function summarise(all, protocol) {
  const trials = all.filter((t) => t.judged);
  const values = (key) => trials.map((t) => t[key]).filter((v) => typeof v === "number");
  const dist = (v) => ({ p50: round(quantile(v, 0.5)), p95: round(quantile(v, 0.95)), max: round(Math.max(...v)) });
  const errors = values("truncateErrorMs");
  const words = values("historyWordError");
  const stale = trials.filter((t) => t.staleAudioMs > 0);
  return {
    planned: all.length,
    judged: trials.length,
    trials: trials.length,
    // Not judged, each with the judge's reason: the output quiet at the onset…
    notBargeIns: all.filter((t) => !t.judged && !t.botAudibleAtOnset).length,
    // …or neither the trial's reply nor an older item's audio there.
    misaligned: all.filter((t) => !t.judged && t.botAudibleAtOnset).length,
    unjudged: all.filter((t) => !t.judged).map((t) => ({ n: t.n, reason: t.unjudged })),
    // Barge-ins the client never stopped: the item played on over the user (counted in the figures).
    notStopped: trials.filter((t) => t.onsetToConfirmMs === null).length,
    // Judged trials whose output held an older item's audio (the client's queue playing an older turn),
    // how many were over it at the onset, and how much of it played (ms; after the onset).
    staleAudioTrials: stale.length,
    staleAtOnset: trials.filter((t) => t.playingAtOnset === "older").length,
    staleAudioMs: { total: round(sum(values("staleAudioMs"))), max: round(Math.max(0, ...values("staleAudioMs"))), afterOnset: round(sum(values("staleAfterOnsetMs"))) },
    onsetToSilentMs: dist(values("onsetToSilentMs")),
    onsetToConfirmMs: dist(values("onsetToConfirmMs")),
    truncateErrorMs: {
      mean: round(mean(errors)),
      meanAbs: round(mean(errors.map(Math.abs))),
      max: round(Math.max(...errors.map(Math.abs))),
      // Signed extremes: above 0 the model believes more was heard than was.
      min: round(Math.min(...errors)),
      maxSigned: round(Math.max(...errors)),
    },
    rejectedTruncates: trials.filter((t) => t.truncate && !t.truncate.accepted).length,
    // OpenAI: cuts that sent no truncate (the model keeps all the audio sent). Gemini has none to send.
    noTruncate: protocol === "openai" ? trials.filter((t) => !t.truncate).length : null,
    staleSamples: values("staleSamples").reduce((a, b) => a + b, 0),
    historyWordError: { mean: round(mean(words)), max: Math.max(...words) },
    unknownQuanta: values("unknownQuanta").reduce((a, b) => a + b, 0),
    outputLatencyMs: round(trials[0]?.outputLatencyMs),
  };
}

const mean = (v) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : null);
const sum = (v) => v.reduce((a, b) => a + b, 0);

function compact(t) {
  const r = (v) => (typeof v === "number" ? round(v) : v);
  return {
    fixture: t.fixture,
    moment: r(t.moment),
    silent: r(t.onsetToSilentMs),
    confirm: r(t.onsetToConfirmMs),
    rendered: r(t.renderedMs),
    heard: r(t.heardTruthMs),
    sent: t.truncate?.audio_end_ms ?? null,
    accepted: t.truncate?.accepted ?? null,
    err: r(t.truncateErrorMs),
    words: `${t.modelWords}/${t.wordsHeard}`,
    stale: t.staleSamples,
    ok: t.botAudibleAtOnset && t.aligned,
    judged: t.judged,
    ...(t.judged ? {} : { unjudged: t.unjudged }),
    atOnset: t.playingAtOnset,
    ...(t.staleAudioMs > 0 ? { staleAudioMs: r(t.staleAudioMs), staleAfterOnsetMs: r(t.staleAfterOnsetMs) } : {}),
    peakBefore: r(t.peakBeforeOnset),
    onsetMoment: r(t.onsetMoment),
    // Where the recorded output stopped matching the item (the cut, unless something else changed it).
    diverged: r(t.divergedMs),
    ...(t.aligned || t.playingAtOnset === "older" ? {} : { atDivergence: t.atDivergence }),
  };
}
