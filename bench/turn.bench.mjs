// `npm run bench -- turn`: end-to-end turn latency in Chromium against the
// reference backend (pocketsphinx STT, scripted LLM over SSE, flite TTS), on
// the real parts (capture and playback worklets, Silero VAD worker).
//
// Known speech (test/fixtures/speech) is fed through the session's `input`
// in the same AudioContext that renders and records the reply
// (bench/pages/session/turn.js). Two views of each turn:
// - sdk: the session's own `turn` event (TurnMetrics). Its clock starts when
//   the session decided the user had finished (VAD speech end or the STT's
//   pause probability), and "audible" is the first rendered sample of the
//   reply plus the context's output latency.
// - recorded: from the fixture's labelled end of speech (context time) to the
//   first loud (≥ -40 dBFS) sample of the reply in the recording, and to the
//   reply's first sample (first loud sample less its offset in the TTS audio).
// sdkSpeechEndLagMs is how long after the true end of speech the session's
// "speech end" instant falls; audibleAgreementMs compares the session's
// audible instant with the recorded first sample (expected: the output
// latency, give or take the clock mapping, a few ms).
//
// turn-taking (issue #19): the corpus of bench/lib/turn-corpus.mjs (50
// utterances, 40 with pauses inside: hesitations, lists, afterthoughts; the
// turn's end labelled) under each end-of-turn policy of TURN_POLICIES, in the
// same run (bench/pages/session/turn-taking.js): voice to voice from the
// labelled end, premature ends, wasted LLM requests.
//
// backchannel (issue #19): the corpus of bench/lib/backchannel-corpus.mjs (34
// backchannels and short bursts, 30 real interruptions; flite and recordings
// of real people) said over the bot's story, under the backchannel policy
// (`bargeIn.backchannels: true`) and under today's default, where any word
// confirms (bench/pages/session/backchannel.js), in the same run.
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";
import { DEFAULT_PROVIDER } from "./lib/bench-args.mjs";
import { prepareBackchannelCorpus } from "./lib/backchannel-corpus.mjs";
import { summariseBackchannels } from "./lib/backchannel-summary.mjs";
import { prepareTurnCorpus } from "./lib/turn-corpus.mjs";
import { summariseTurnTaking } from "./lib/turn-taking-summary.mjs";
import { runTurnTaking } from "./lib/turn-taking-run.mjs";
import { prng } from "../test/lib/prng.mjs";

const PORT = 8850;
const FIXTURES = ["weather-question", "help-me", "turn-on-lights", "stop-please"];
const TURNS = 8;
/**
 * Turns run first and left out of the statistics: the backend compiles
 * flite's WASM on its first synthesis (about a second, on its event loop),
 * which is the reference server warming up, not the SDK.
 */
const WARMUP_TURNS = 2;

/**
 * The end-of-turn policies compared. baseline: the first default, the VAD's 600 ms of silence alone (no hold, no
 * resumed turns). policyNoResume: the default before turn.resumeUnheard: 300 ms of silence, and a turn whose last
 * word leaves it unfinished held 700 ms more (turn.holdUnfinished). policy: the same with a turn resumed before its
 * reply is heard kept as one (turn.resumeUnheard); the session's defaults. policyShort: that with 200 ms of silence
 * and 800 ms of hold. preemptive: `policy` with the reply prepared at 160 ms of quiet (turn.preemptive).
 */
const TURN_POLICIES = {
  baseline: { vad: { redemptionMs: 600 }, turn: { holdUnfinished: false, resumeUnheard: false } },
  policyNoResume: { vad: { redemptionMs: 300 }, turn: { holdUnfinished: { holdMs: 700 }, resumeUnheard: false } },
  policy: { vad: { redemptionMs: 300 }, turn: { holdUnfinished: { holdMs: 700 } } },
  policyShort: { vad: { redemptionMs: 200 }, turn: { holdUnfinished: { holdMs: 800 } } },
  preemptive: { vad: { redemptionMs: 300 }, turn: { holdUnfinished: { holdMs: 700 }, preemptive: { quietMs: 160 } } },
};
/** The policies that prepare a preemptive reply, reported under `preemptive` too. */
const PREEMPTIVE_POLICIES = ["preemptive"];
/** Which of TURN_POLICIES the README's defaults give. */
const DEFAULT_POLICY = "policy";

const round = (v) => Math.round(v * 10) / 10;
const stats = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

/** `npm run bench -- turn --provider NAME` runs the turns on that STT or TTS (bench/lib/bench-args.mjs). */
export const takesProvider = true;

/** The corpus in a seeded order, kinds mixed, so neither policy meets the same item at the same point of a reply. */
function shuffled(items, seed) {
  const random = prng(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export default function turnBench({ provider = DEFAULT_PROVIDER } = {}) {
  const corpus = prepareBackchannelCorpus();
  const utterances = prepareTurnCorpus();
  return withBench({ port: PORT }, async ({ server, browser, step }) => {
    const page = await step("open a page", () => browser.newPage(), { timeoutMs: PAGE_OP_MS });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await step("open turn.html", async () => {
      await page.goto(`${server.base}/bench/pages/session/turn.html`);
      await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
    });
    const fixtures = Array.from({ length: WARMUP_TURNS + TURNS }, (_, i) => FIXTURES[i % FIXTURES.length]);
    // A turn takes a few seconds; a minute each is a bound, not a measurement.
    const r = await step(`run ${fixtures.length} turns`, () => page.evaluate((o) => window.bench.run(o), { fixtures, provider }), { timeoutMs: 60_000 * fixtures.length });
    const turnTaking = {};
    const turnTakingResults = {};
    for (const [name, sessionOptions] of Object.entries(TURN_POLICIES)) {
      const problems = [];
      const tt = await runTurnTaking({ server, browser, step }, { name, sessionOptions, utterances, problems });
      r.errors.push(...problems);
      turnTaking[name] = summariseTurnTaking(tt.results);
      turnTakingResults[name] = tt.results;
      console.log(`  turn-taking ${name}: ${JSON.stringify(turnTaking[name])}`);
    }
    const backchannel = {};
    const backchannelTrials = {};
    for (const [name, policy] of [["policy", true], ["anyWord", false]]) {
      const bcPage = await step("open backchannel.html", async () => {
        const p = await browser.newPage();
        p.on("pageerror", (e) => pageErrors.push(e.message));
        await p.goto(`${server.base}/bench/pages/session/backchannel.html`);
        await p.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
        return p;
      });
      // An item takes 4–8 s; 30 s each is a bound, not a measurement.
      const b = await step(`say ${corpus.length} backchannels and interruptions over the bot (${name})`, () => bcPage.evaluate((o) => window.bench.run(o), { policy, items: shuffled(corpus, 19) }), { timeoutMs: 30_000 * corpus.length });
      await step("close backchannel.html", () => bcPage.close(), { timeoutMs: PAGE_OP_MS });
      backchannel[name] = summariseBackchannels(b.trials);
      backchannelTrials[name] = b.trials;
      r.errors.push(...b.errors.map((e) => `backchannel ${name}: ${e}`));
      console.log(`  backchannel ${name}: ${JSON.stringify(backchannel[name])}`);
    }
    const warmup = r.turns.slice(0, WARMUP_TURNS);
    const turns = r.turns.slice(WARMUP_TURNS);
    const pick = (f) => turns.map(f).filter((v) => Number.isFinite(v));
    return {
      provider,
      turns: turns.length,
      // What the user feels: their last speech frame → the reply's first sample heard (TurnMetrics.voiceToVoiceMs),
      // and how far that is from the recording's truth (labelled end of speech → first sample + output latency).
      voiceToVoiceMs: stats(pick((t) => t.metrics.voiceToVoiceMs)),
      voiceToVoiceTruthMs: stats(pick((t) => t.voiceToVoiceTruthMs)),
      voiceToVoiceErrorMs: stats(pick((t) => Math.abs(t.metrics.voiceToVoiceMs - t.voiceToVoiceTruthMs))),
      voiceEndToDecisionMs: stats(pick((t) => t.metrics.voiceEndToDecisionMs)),
      speechEndToSttFinalMs: stats(pick((t) => t.metrics.speechEndToSttFinalMs)),
      speechEndToFirstTokenMs: stats(pick((t) => t.metrics.speechEndToFirstTokenMs)),
      speechEndToFirstAudioByteMs: stats(pick((t) => t.metrics.speechEndToFirstAudioByteMs)),
      speechEndToFirstAudibleMs: stats(pick((t) => t.metrics.speechEndToFirstAudibleMs)),
      firstAudioByteToAudibleMs: stats(pick((t) => t.metrics.firstAudioByteToAudibleMs)),
      recorded: {
        speechEndToFirstLoudMs: stats(pick((t) => t.recorded.speechEndToFirstLoudMs)),
        speechEndToFirstSampleMs: stats(pick((t) => t.recorded.speechEndToFirstSampleMs)),
        firstAudioByteToFirstSampleMs: stats(pick((t) => t.recorded.firstAudioByteToFirstSampleMs)),
        sdkSpeechEndLagMs: stats(pick((t) => t.sdkSpeechEndLagMs)),
        audibleAgreementMs: stats(pick((t) => t.audibleAgreementMs)),
        outputLatencyMs: round(r.outputLatency * 1000),
      },
      method:
        "sdk numbers: the session's turn events (voiceToVoiceMs from the VAD's last speech frame; the others from its turn-end decision). voiceToVoiceTruthMs: the fixture's labelled speech end → the reply's first sample in the recording + output latency; voiceToVoiceErrorMs: |sdk − truth|. recorded: fixture's labelled speech end (context time) → first ≥-40 dBFS sample of the reply in an in-context recording; first sample = that less its offset in the TTS audio. sdkSpeechEndLagMs: session's speech-end instant − labelled end. audibleAgreementMs: session's audible instant − recorded first sample (expect ≈ output latency).",
      warmupTurns: warmup.map((t) => ({ fixture: t.fixture, ...Object.fromEntries(Object.entries(t.metrics).filter(([k]) => k.endsWith("Ms")).map(([k, v]) => [k, round(v)])) })),
      perTurn: turns.map((t) => ({
        fixture: t.fixture,
        heard: t.heard,
        reply: t.reply,
        ...Object.fromEntries(Object.entries(t.metrics).filter(([k]) => k.endsWith("Ms")).map(([k, v]) => [k, round(v)])),
        recordedSpeechEndToFirstLoudMs: round(t.recorded.speechEndToFirstLoudMs),
        recordedSpeechEndToFirstSampleMs: round(t.recorded.speechEndToFirstSampleMs),
        sdkSpeechEndLagMs: round(t.sdkSpeechEndLagMs),
        audibleAgreementMs: round(t.audibleAgreementMs),
        voiceToVoiceTruthMs: round(t.voiceToVoiceTruthMs),
        unknownQuanta: t.recorded.unknownQuanta,
      })),
      utterances: utterances.length,
      ...turnTaking,
      // turn.preemptive, the same corpus and run (also under their own names above).
      preemptiveReply: Object.fromEntries(PREEMPTIVE_POLICIES.map((name) => [name, turnTaking[name]])),
      default: { policy: DEFAULT_POLICY, ...turnTaking[DEFAULT_POLICY] },
      turnTaking: {
        policies: TURN_POLICIES,
        corpus: "bench/lib/turn-corpus.mjs: 20 hesitations (one 300–900 ms pause mid-phrase), 10 lists (a pause after each item but the last), 10 questions with an afterthought after a pause, 10 plain sentences; flite slt and rms; the turn's end labelled",
        method: "voiceToVoiceMs: labelled end of the utterance → the first sample of the reply that began after it, in an in-context recording, plus the output latency (utterances with no premature end); sdkVoiceToVoiceMs: the session's own TurnMetrics.voiceToVoiceMs for that reply. prematureEndRate: utterances whose turn ended inside a labelled pause in a way the user felt: their words went into two or more user messages, or the bot's voice is in the recording (≥ -40 dBFS, less the output latency) between the utterance's onset and its labelled end (heardInPause; the session's own bot_speaking before the end is audibleInPause). decidedInPauseRate: utterances where a reply began (bot_thinking) before the labelled end, felt or not (earlier runs' prematureEndRate). wastedLlmRequestsPerTurn: replies never heard, per utterance.",
        perUtterance: turnTakingResults,
      },
      backchannel: {
        ...backchannel,
        corpus: "bench/lib/backchannel-corpus.mjs: 24 flite backchannels (12 phrases × slt/rms) and 10 bursts of 160–260 ms cut from recordings of real people; 20 flite interruptions (10 phrases × slt/rms) and the 10 recordings whole; said 1.2 s or more into the bot's story reply, over a −53 dBFS room bed",
        method: "policy: bargeIn.backchannels true; anyWord: the default (any word confirms). backchannelInterruptRate: backchannel items whose outcome was an interruption; realInterruptConfirmMs: onset → the interruption event (context time) of real interruptions that interrupted. An item whose reply ended under it is said again once (voided). Per trial: words (a backchannel's, as its event gave them) and userText (an interruption's, the user's text the session showed until the next item).",
        perTrial: backchannelTrials,
      },
      // Turns the session took that no fixture asked for (late STT words after a flush timeout), left out above.
      phantomTurns: r.phantoms,
      sampleRate: r.sampleRate,
      errors: [...r.errors, ...pageErrors, ...r.csp],
      warnings: r.warnings,
    };
  });
}
