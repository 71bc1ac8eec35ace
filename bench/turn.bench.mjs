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
import { PAGE_OP_MS, withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";
import { DEFAULT_PROVIDER } from "./lib/bench-args.mjs";

const PORT = 8850;
const FIXTURES = ["weather-question", "help-me", "turn-on-lights", "stop-please"];
const TURNS = 8;
/**
 * Turns run first and left out of the statistics: the backend compiles
 * flite's WASM on its first synthesis (about a second, on its event loop),
 * which is the reference server warming up, not the SDK.
 */
const WARMUP_TURNS = 2;

const round = (v) => Math.round(v * 10) / 10;
const stats = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

/** `npm run bench -- turn --provider NAME` runs the turns on that STT or TTS (bench/lib/bench-args.mjs). */
export const takesProvider = true;

export default function turnBench({ provider = DEFAULT_PROVIDER } = {}) {
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
      // Turns the session took that no fixture asked for (late STT words after a flush timeout), left out above.
      phantomTurns: r.phantoms,
      sampleRate: r.sampleRate,
      errors: [...r.errors, ...pageErrors, ...r.csp],
      warnings: r.warnings,
    };
  });
}
