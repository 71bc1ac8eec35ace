// The turn-taking part of `bench/results/turn.json` (issue #19), from the
// results of bench/pages/session/turn-taking.js under one end-of-turn policy.
import { quantile } from "./results.mjs";

const stats = (values) => (values.length ? { p50: Math.round(quantile(values, 0.5) * 10) / 10, p95: Math.round(quantile(values, 0.95) * 10) / 10 } : { p50: null, p95: null });
const rate = (n, d) => (d ? Math.round((n / d) * 1000) / 1000 : null);

/**
 * @param {Array<{ kind: string, premature: boolean, decidedInPause?: boolean, answered: boolean, wastedLlmRequests: number, voiceToVoiceTruthMs: number | null, voiceToVoiceMs: number | null }>} results
 */
export function summariseTurnTaking(results) {
  const timed = results.filter((r) => r.voiceToVoiceTruthMs !== null);
  const both = timed.filter((r) => r.voiceToVoiceMs !== null);
  const kinds = [...new Set(results.map((r) => r.kind))];
  return {
    utterances: results.length,
    voiceToVoiceMs: stats(timed.map((r) => r.voiceToVoiceTruthMs)),
    sdkVoiceToVoiceMs: stats(both.map((r) => r.voiceToVoiceMs)),
    sdkVoiceToVoiceErrorMs: stats(both.map((r) => Math.abs(r.voiceToVoiceMs - r.voiceToVoiceTruthMs))),
    prematureEndRate: rate(results.filter((r) => r.premature).length, results.length),
    // Earlier runs' measure: a reply began before the labelled end, felt or not (a resumed turn is not felt).
    decidedInPauseRate: rate(results.filter((r) => r.decidedInPause ?? r.premature).length, results.length),
    prematureEndRateByKind: Object.fromEntries(kinds.map((k) => [k, rate(results.filter((r) => r.kind === k && r.premature).length, results.filter((r) => r.kind === k).length)])),
    voiceToVoiceMsByKind: Object.fromEntries(kinds.map((k) => [k, stats(timed.filter((r) => r.kind === k).map((r) => r.voiceToVoiceTruthMs))])),
    wastedLlmRequestsPerTurn: rate(results.reduce((n, r) => n + r.wastedLlmRequests, 0), results.length),
    unanswered: results.filter((r) => !r.answered).length,
  };
}
