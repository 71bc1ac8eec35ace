// The backchannel part of `bench/results/turn.json` (issue #19), from the
// trials of bench/pages/session/backchannel.js under one confirmation policy.
import { quantile } from "./results.mjs";

const round = (v) => (v === null || !Number.isFinite(v) ? null : Math.round(v * 1000) / 1000);
const ms = (values) => ({ p50: values.length ? Math.round(quantile(values, 0.5) * 10) / 10 : null, p95: values.length ? Math.round(quantile(values, 0.95) * 10) / 10 : null });

/**
 * @param {Array<{ kind: string, source: string, outcome: string, onsetToConfirmMs: number | null }>} trials
 *   every attempt; a "void" one (the reply ended under it) is left out of the rates
 */
export function summariseBackchannels(trials) {
  const judged = trials.filter((t) => t.outcome !== "void");
  const of = (kind, source) => judged.filter((t) => t.kind === kind && (source === undefined || t.source === source));
  const interruptRate = (list) => (list.length ? round(list.filter((t) => t.outcome === "interruption").length / list.length) : null);
  const real = of("interruption");
  const confirmed = real.filter((t) => t.outcome === "interruption");
  return {
    backchannels: of("backchannel").length,
    backchannelInterruptRate: interruptRate(of("backchannel")),
    backchannelInterruptRateBySource: { flite: interruptRate(of("backchannel", "flite")), human: interruptRate(of("backchannel", "human")) },
    realInterruptions: real.length,
    realInterruptConfirmRate: interruptRate(real),
    realInterruptConfirmRateBySource: { flite: interruptRate(of("interruption", "flite")), human: interruptRate(of("interruption", "human")) },
    realInterruptConfirmMs: ms(confirmed.map((t) => t.onsetToConfirmMs).filter((v) => v !== null)),
    outcomes: Object.fromEntries(["interruption", "backchannel", "resumed"].map((o) => [o, judged.filter((t) => t.outcome === o).length])),
    voided: trials.length - judged.length,
  };
}
