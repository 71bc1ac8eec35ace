// The turn bench's backchannel summary (bench/lib/backchannel-summary.mjs):
// rates over the judged trials only (a voided trial, whose reply ended under
// it, is left out), split by source, and the confirm times of the real
// interruptions that interrupted.
import { describe, expect, test } from "vitest";
// @ts-ignore: plain ESM bench code
import { summariseBackchannels } from "../../bench/lib/backchannel-summary.mjs";

const trial = (kind: string, source: string, outcome: string, onsetToConfirmMs: number | null = null) => ({ kind, source, outcome, onsetToConfirmMs });

describe("summariseBackchannels", () => {
  test("counts interruptions of backchannels and confirmations of real interruptions, leaving voided trials out", () => {
    const s = summariseBackchannels([
      trial("backchannel", "flite", "backchannel"),
      trial("backchannel", "flite", "interruption", 400),
      trial("backchannel", "human", "resumed"),
      trial("backchannel", "human", "void"),
      trial("interruption", "flite", "interruption", 200),
      trial("interruption", "flite", "interruption", 300),
      trial("interruption", "human", "resumed"),
      trial("interruption", "human", "interruption", 1000),
    ]);
    expect(s.backchannels).toBe(3);
    expect(s.backchannelInterruptRate).toBeCloseTo(1 / 3, 3);
    expect(s.backchannelInterruptRateBySource).toEqual({ flite: 0.5, human: 0 });
    expect(s.realInterruptions).toBe(4);
    expect(s.realInterruptConfirmRate).toBe(0.75);
    expect(s.realInterruptConfirmRateBySource).toEqual({ flite: 1, human: 0.5 });
    expect(s.realInterruptConfirmMs.p50).toBe(300);
    expect(s.outcomes).toEqual({ interruption: 4, backchannel: 1, resumed: 2 });
    expect(s.voided).toBe(1);
  });

  test("no trial of a kind gives null rates, not NaN", () => {
    const s = summariseBackchannels([trial("backchannel", "flite", "void")]);
    expect(s.backchannelInterruptRate).toBeNull();
    expect(s.realInterruptConfirmRate).toBeNull();
    expect(s.realInterruptConfirmMs).toEqual({ p50: null, p95: null });
  });
});
