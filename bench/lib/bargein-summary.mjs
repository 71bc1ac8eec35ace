// Summaries of barge-in trials (bench/pages/session/bargein.js), shared by the
// bargein and providers benches so both read a trial the same way.
import { quantile } from "./results.mjs";

export const round = (v) => (v === null || v === undefined ? v : Math.round(v * 10) / 10);
export const stats = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)), max: round(Math.max(...values)) });
const round2 = (v) => Math.round(v * 100) / 100;
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The figures of a run's trials; failed trials are counted, not measured. */
export function summarise(trials) {
  const ok = trials.filter((t) => !t.failed);
  const quiet = ok.map((t) => t.onsetToFirstQuietMs).filter((v) => v !== null);
  return {
    trials: ok.length,
    failed: trials.length - ok.length,
    onsetToSilenceMs: stats(ok.map((t) => t.onsetToSilenceMs)),
    onsetToFirstQuietMs: stats(quiet),
    onsetToFlushMs: stats(ok.map((t) => t.onsetToFlushMs)),
    staleSamples: ok.reduce((a, t) => a + t.staleSamples, 0),
    trialsWithLeak: ok.filter((t) => t.leakSamples > 0).length,
    heardWordError: { mean: round2(mean(ok.map((t) => t.heardWordError))), max: Math.max(...ok.map((t) => t.heardWordError)) },
    heardWordErrorSameRule: { mean: round2(mean(ok.map((t) => t.heardWordErrorSameRule))), max: Math.max(...ok.map((t) => t.heardWordErrorSameRule)) },
    onsetToVadSpeechStartMs: stats(ok.map((t) => t.onsetToVadSpeechStartMs).filter((v) => v !== null)),
    directPauses: ok.filter((t) => t.directPause).length,
    botAudibleAtOnset: ok.filter((t) => t.audibleAtOnset).length,
    reasons: countBy(ok.map((t) => t.reason)),
    renderedAgreementMs: stats(ok.map((t) => Math.abs(t.renderedAgreementMs))),
    unknownQuanta: ok.reduce((a, t) => a + t.unknownQuanta, 0),
  };
}
