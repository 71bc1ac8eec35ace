// The echo guard's promises, on an open-speaker echo path built here from
// real speech: the bot (flite "slt") plays through a mildly clipping
// loudspeaker into a room (exponentially decaying seeded noise, RT60 0.2 /
// 0.5 / 0.8 s) with a bulk delay (10 / 60 / 120 ms) and a gain (−20 / −6 /
// −3 dB), plus mic noise at −70 dBFS; the person (flite "rms", other files)
// talks over it at the echo's level. Measured: ERLE after convergence, the
// detected delay, the barge-in gate on echo alone, on double talk and on a
// silent reference, the fail-safe after an echo-path change, and the cost.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, test } from "vitest";
import { EchoGuard } from "../../src/audio/echo/echo-guard.js";
import { NlmsFilter } from "../../src/audio/echo/nlms-filter.js";
import { PbfdafFilter } from "../../src/audio/echo/pbfdaf-filter.js";
import { RealFft } from "../../src/audio/echo/real-fft.js";
import { prng } from "../lib/prng.mjs";
import { RATE, readWav, utterance, BOT, PERSON, botTurn, gaussian, roomResponse, convolve, echoOf, noise, run, erle, activeRms, person, type PathOptions, type Run, type Utterance } from "../lib/echo-room.js";

const TURN_S = 12;
const turn = botTurn(TURN_S);
const micNoise = noise(turn.length, 99);
const rounded = (x: number) => Math.round(x * 10) / 10;

/** Echo alone, in nine rooms: RT60 0.2 / 0.5 / 0.8 s × delay 10 / 60 / 120 ms, gain −6 dB. */
function measureRooms() {
  // A different room (seed) for each case: the ERLE of one noise realisation
  // to the next differs by up to 6 dB at the same RT60.
  const cases = [0.2, 0.5, 0.8].flatMap((rt60, i) => [10, 60, 120].map((delayMs, j) => ({ rt60, delayMs, seed: 1 + 3 * i + j })));
  const results = cases.map(({ rt60, delayMs, seed }) => {
    const echo = echoOf(turn, { rt60, delayMs, gainDb: -6, seed });
    const r = run(echo.map((v, i) => v + micNoise[i]), turn);
    const residual = (t: number) => r.out[t] - micNoise[t];
    const firstConverged = r.converged.indexOf(1);
    const after = firstConverged < 0 ? r.time.length : firstConverged + Math.round((0.5 * RATE) / 64);
    let gateOpenBlocks = 0;
    let trustedOpenBlocks = 0;
    for (let b = after; b < r.nearEnd.length; b++) {
      gateOpenBlocks += r.nearEnd[b];
      trustedOpenBlocks += r.nearEnd[b] & r.trusted[b];
    }
    return {
      rt60,
      delayMs,
      r,
      erleFrom2: erle(echo, residual, 2, TURN_S),
      erleFrom3: erle(echo, residual, 3, TURN_S),
      convergedAt: firstConverged < 0 ? Number.NaN : r.time[firstConverged],
      gateOpenBlocks,
      trustedOpenBlocks,
      blocksAfter: r.nearEnd.length - after,
    };
  });
  console.table(
    results.map((x) => ({
      rt60: x.rt60,
      "delay ms": x.delayMs,
      "ERLE dB (2 s–)": rounded(x.erleFrom2),
      "ERLE dB (3 s–)": rounded(x.erleFrom3),
      "estimate dB": rounded(x.r.erleEstimateDb),
      "converged at s": rounded(x.convergedAt),
      "detected ms": x.r.delayMs,
      "gate open (trusted) after convergence": `${x.gateOpenBlocks} (${x.trustedOpenBlocks}) / ${x.blocksAfter}`,
      "µs / block": Math.round(x.r.microsPerBlock),
    })),
  );
  return results;
}

describe("EchoGuard on an open-speaker echo path", () => {
  let results: ReturnType<typeof measureRooms> = [];
  // A few seconds of offline DSP per room: slow on a loaded machine, so a long hook timeout.
  beforeAll(() => {
    results = measureRooms();
  }, 60_000);

  test("after convergence it cancels 20 dB of a −6 dB echo on average at RT60 0.2–0.5 s, 18 dB in every room", () => {
    for (const rt60 of [0.2, 0.5]) {
      const rows = results.filter((x) => x.rt60 === rt60);
      for (const x of rows) {
        // Converged (by its own flag) within 2 s; measured from 3 s, a second later.
        expect(x.convergedAt, `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBeLessThan(2);
        expect(x.erleFrom3, `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBeGreaterThanOrEqual(18);
      }
      expect(rows.reduce((a, x) => a + x.erleFrom3, 0) / rows.length, `RT60 ${rt60} s`).toBeGreaterThanOrEqual(20);
    }
    // RT60 0.8 s: the 256 ms tail holds only the first 19 dB of the decay and
    // converges slowly; reported, and it must never add echo.
    for (const x of results.filter((x) => x.rt60 === 0.8)) expect(x.erleFrom3).toBeGreaterThan(3);
  });

  test("it finds the bulk delay within ±2 ms, from the filter's own first arrival", () => {
    for (const x of results) {
      expect(x.r.delayFromFilter, `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBe(true);
      expect(Math.abs(x.r.delayMs - x.delayMs), `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBeLessThanOrEqual(2);
    }
  });

  test("on echo alone the barge-in gate stays closed once converged, and never opens trusted", () => {
    for (const x of results) {
      const where = `RT60 ${x.rt60} s, ${x.delayMs} ms`;
      expect(x.trustedOpenBlocks, where).toBe(0);
      if (x.rt60 <= 0.5) expect(x.gateOpenBlocks, where).toBeLessThanOrEqual(0.005 * x.blocksAfter);
    }
  });

  test("echo gains of −20 dB and −3 dB converge too", () => {
    const rows = [-20, -3].map((gainDb) => {
      const echo = echoOf(turn, { rt60: 0.5, delayMs: 60, gainDb, seed: 7 });
      const r = run(echo.map((v, i) => v + micNoise[i]), turn);
      const firstConverged = r.converged.indexOf(1);
      let open = 0;
      for (let b = firstConverged + 125; b < r.nearEnd.length; b++) open += r.nearEnd[b];
      return { gainDb, erle: erle(echo, (t) => r.out[t] - micNoise[t], 3, TURN_S), convergedAt: r.time[firstConverged], open, delay: r.delayMs };
    });
    console.table(rows.map((x) => ({ "gain dB": x.gainDb, "ERLE dB (3 s–)": rounded(x.erle), "converged at s": rounded(x.convergedAt), "gate-open blocks": x.open, "detected ms": x.delay })));
    for (const x of rows) {
      expect(x.convergedAt).toBeLessThan(2.5);
      expect(x.erle).toBeGreaterThanOrEqual(x.gainDb === -20 ? 15 : 19);
      expect(x.open).toBe(0);
      expect(Math.abs(x.delay - 60)).toBeLessThanOrEqual(2);
    }
  });
});


/** A talker over the echo, at its level, four times in each of six rooms. */
function measureDoubleTalk() {
  const at = [3, 5.6, 8.2, 10.4];
  const rooms = [0.2, 0.5].flatMap((rt60, i) => [10, 60, 120].map((delayMs, j) => ({ rt60, delayMs, seed: 21 + 3 * i + j })));
  const rows = rooms.map((room) => {
    const echo = echoOf(turn, { ...room, gainDb: -6 });
    const p = person(at, activeRms(echo), turn.length);
    const alone = run(echo.map((v, i) => v + micNoise[i]), turn);
    const both = run(echo.map((v, i) => v + p.signal[i] + micNoise[i]), turn);
    // Gate latency: from the person's onset to the end of the first open block at or after it.
    const latencies = p.onsets.map((onset) => {
      const b = both.time.findIndex((t, k) => t * RATE > onset && both.nearEnd[k] === 1);
      return b < 0 ? Infinity : both.time[b] - onset / RATE;
    });
    let falseOpen = 0;
    let echoBlocks = 0;
    both.time.forEach((t, k) => {
      const sample = Math.round(t * RATE) - 1;
      if (t > 2.5 && !p.mask[sample]) {
        echoBlocks++;
        falseOpen += both.nearEnd[k];
      }
    });
    return {
      ...room,
      latencies,
      erleAlone: erle(echo, (t) => alone.out[t] - micNoise[t], 3, TURN_S, p.mask),
      erleBoth: erle(echo, (t) => both.out[t] - micNoise[t] - p.signal[t], 3, TURN_S, p.mask),
      erleLast: erle(echo, (t) => both.out[t] - micNoise[t] - p.signal[t], p.offsets[3] / RATE + 0.3, TURN_S),
      falseOpen,
      echoBlocks,
    };
  });
  console.table(
    rows.map((x) => ({
      rt60: x.rt60,
      "delay ms": x.delayMs,
      "gate latency ms": x.latencies.map((l) => Math.round(l * 1000)).join(" "),
      "ERLE echo-only spans, alone / with talker dB": `${rounded(x.erleAlone)} / ${rounded(x.erleBoth)}`,
      "ERLE after the last talk dB": rounded(x.erleLast),
      "gate open on echo-only spans": `${x.falseOpen} / ${x.echoBlocks}`,
    })),
  );
  return rows;
}

describe("EchoGuard in double talk", () => {
  let rows: ReturnType<typeof measureDoubleTalk> = [];
  beforeAll(() => {
    rows = measureDoubleTalk();
  }, 60_000);

  test("the gate opens within 100 ms of the person's onset on ≥ 95 % of onsets", () => {
    const all = rows.flatMap((x) => x.latencies);
    const quick = all.filter((l) => l <= 0.1).length;
    expect(all.length).toBeGreaterThanOrEqual(20);
    expect(quick / all.length).toBeGreaterThanOrEqual(0.95);
  });

  test("the filter does not diverge: ERLE on the echo-only stretches stays within 3 dB of echo alone", () => {
    for (const x of rows) {
      expect(x.falseOpen, `RT60 ${x.rt60} s, ${x.delayMs} ms: gate open between the talks`).toBeLessThanOrEqual(0.005 * x.echoBlocks);
      expect(x.erleBoth, `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBeGreaterThan(x.erleAlone - 3);
      expect(x.erleLast, `RT60 ${x.rt60} s, ${x.delayMs} ms`).toBeGreaterThan(15);
    }
  });
});

describe("EchoGuard with a silent reference", () => {
  const at = [0.5, 3, 5.5, 8];
  const p = person(at, 0.05, turn.length);
  const mic = p.signal.map((v, i) => v + micNoise[i]);
  const silent = new Float32Array(turn.length);
  const r = run(mic, silent);

  test("passes the mic through unchanged (within 1e-6)", () => {
    let worst = 0;
    for (let t = 0; t < turn.length - 64; t++) worst = Math.max(worst, Math.abs(r.out[t] - Math.fround(mic[t])));
    expect(worst).toBeLessThanOrEqual(1e-6);
  });

  test("the gate follows the person's speech", () => {
    let inside = 0;
    let insideOpen = 0;
    let outside = 0;
    let outsideOpen = 0;
    r.time.forEach((t, k) => {
      const sample = Math.round(t * RATE) - 1;
      const speaking = p.onsets.some((on, i) => sample >= on && sample < p.offsets[i]);
      const near = p.onsets.some((on, i) => sample >= on - 0.1 * RATE && sample < p.offsets[i] + 0.2 * RATE);
      if (speaking) {
        inside++;
        insideOpen += r.nearEnd[k];
      } else if (!near) {
        outside++;
        outsideOpen += r.nearEnd[k];
      }
    });
    console.log(`silent reference: gate open on ${insideOpen}/${inside} blocks of speech, ${outsideOpen}/${outside} of silence`);
    expect(insideOpen / inside).toBeGreaterThanOrEqual(0.7);
    expect(outsideOpen / outside).toBeLessThanOrEqual(0.02);
    // Every utterance opens it within 100 ms.
    for (const on of p.onsets) {
      const b = r.time.findIndex((t, k) => t * RATE > on && r.nearEnd[k] === 1);
      expect(r.time[b] - on / RATE).toBeLessThanOrEqual(0.1);
    }
  });
});

describe("EchoGuard with headphones: the bot plays, and none of it reaches the mic", () => {
  const at = [0.5, 3, 5.5, 8];
  const p = person(at, 0.05, turn.length);
  for (const [what, floor] of [["mic noise at −70 dBFS", micNoise], ["a digitally silent mic between words", new Float64Array(turn.length)]] as const) {
    test(`${what}: the mic passes through, every utterance opens the gate within 100 ms, and trusted within 250 ms`, () => {
      const mic = p.signal.map((v, i) => v + floor[i]);
      const r = run(mic, turn);
      let worst = 0;
      for (let t = 0; t < turn.length - 64; t++) worst = Math.max(worst, Math.abs(r.out[t] - Math.fround(mic[t])));
      const after = (on: number, trusted: boolean) => {
        const b = r.time.findIndex((t, k) => t * RATE > on && r.nearEnd[k] === 1 && (!trusted || r.trusted[k] === 1));
        return b < 0 ? Infinity : r.time[b] - on / RATE;
      };
      const open = p.onsets.map((on) => after(on, false));
      const trusted = p.onsets.map((on) => after(on, true));
      const ms = (v: number[]) => v.map((d) => (d * 1000).toFixed(0)).join(", ");
      console.log(`headphones, ${what}: worst |out − mic| ${worst.toExponential(1)}; gate open after onsets ${ms(open)} ms, trusted ${ms(trusted)} ms`);
      // Until the guard has heard half a second of the bot with no echo, its filter adapts on the mic's noise: −40 dB at worst.
      expect(worst).toBeLessThanOrEqual(1e-2);
      for (const d of open) expect(d).toBeLessThanOrEqual(0.1);
      // Trust waits out the 150 ms in which the delay probe would show an echo that has just appeared.
      for (const d of trusted) expect(d).toBeLessThanOrEqual(0.25);
    });
  }
});

describe("EchoGuard with no echo path, when the person asked first and talks over the first reply early", () => {
  // Before the first convergence every block is learnt as residual echo. A person who talks
  // 0.5 s into the first reply, before the no-echo-path check (0.5 s of a quiet mic) could pass,
  // was learnt as echo: the gate stayed shut on him for the whole utterance, and the VAD saw
  // silence (found by bench realtime: a barge-in 0.5 s into the first reply, no echo, never heard).
  test("the gate opens on him within 400 ms of his onset, trusted within 500 ms", () => {
    const length = 7 * RATE;
    const ref = new Float32Array(length);
    ref.set(BOT[0]!.samples, Math.round(3.5 * RATE));
    const mic = new Float64Array(length);
    // The question, then digital silence, then the talker with his onset 0.5 s after the reply's start.
    PERSON[1]!.samples.subarray(0, Math.round(2.5 * RATE)).forEach((v, i) => (mic[i] = v));
    const t = PERSON[0]!;
    const start = Math.round(4.0 * RATE) - t.onset;
    t.samples.forEach((v, i) => start + i < length && (mic[start + i] += v));
    const talker = { onsets: [start + t.onset] };
    const r = run(mic, ref);
    const on = talker.onsets[0]!;
    const after = (trusted: boolean) => {
      const b = r.time.findIndex((t, k) => t * RATE > on && r.nearEnd[k] === 1 && (!trusted || r.trusted[k] === 1));
      return b < 0 ? Infinity : r.time[b] - on / RATE;
    };
    console.log(`no echo, a talker 0.5 s into the first reply after a question: gate open ${(after(false) * 1000).toFixed(0)} ms after his onset, trusted ${(after(true) * 1000).toFixed(0)} ms`);
    expect(after(false)).toBeLessThanOrEqual(0.4);
    expect(after(true)).toBeLessThanOrEqual(0.5);
  });
});

describe("EchoGuard over an echo, when the person talks over the first reply before it converged", () => {
  // Found in Chromium (echo-barge-in.spec, −6 dB, RT60 0.3 s): a user who spoke 1.5 s into the first
  // reply, the filter at 9 dB and not yet called converged, was learnt as echo: ERLE fell to −1 dB,
  // the guard took the mic for one with no echo path, and then trusted its gate on the bot's echo.
  // Here the filter is held unconverged by a convergence bar it cannot reach (convergedDb 30), so the
  // talker at 1.5 s always finds it so; he must not be learnt, whatever the bar.
  test("he is not learnt as echo: no trusted opening on the echo after him, and ERLE holds", () => {
    const echo = echoOf(turn, { rt60: 0.3, delayMs: 60, gainDb: -6, seed: 7 });
    const talker = person([1.5], activeRms(echo), turn.length);
    const r = run(echo.map((v, i) => v + micNoise[i] + talker.signal[i]), turn, new EchoGuard({ convergedDb: 30 }));
    const firstBlockAfter = Math.ceil((talker.offsets[0]! + 0.5 * RATE) / 64);
    let trustedOnEcho = 0;
    for (let b = firstBlockAfter; b < r.trusted.length; b++) trustedOnEcho += r.trusted[b] & r.nearEnd[b];
    const after = erle(echo, (t) => r.out[t] - micNoise[t] - talker.signal[t], talker.offsets[0]! / RATE + 1, TURN_S);
    console.log(`a talker 1.5–${rounded(talker.offsets[0]! / RATE)} s into the first reply: trusted openings on the echo after him ${trustedOnEcho}; ERLE from 1 s after him ${rounded(after)} dB; converged at ${rounded(r.time[r.converged.indexOf(1)])} s`);
    expect(trustedOnEcho).toBe(0);
    expect(after).toBeGreaterThan(15);
  });
});

describe("EchoGuard's fail-safe", () => {
  test("untrusted before convergence; after the echo path changes it never opens trusted on the echo, and re-converges", () => {
    // At 6 s the speaker is moved: a new room, a longer delay, 5 dB louder.
    const before = echoOf(turn, { rt60: 0.3, delayMs: 40, gainDb: -8, seed: 31 });
    const after = echoOf(turn, { rt60: 0.3, delayMs: 90, gainDb: -3, seed: 32 });
    const change = 6 * RATE;
    const echo = before.map((v, i) => (i < change ? v : after[i]));
    const r = run(echo.map((v, i) => v + micNoise[i]), turn);
    const at = (seconds: number) => Math.round((seconds * RATE) / 64) - 1;
    expect(r.trusted[at(0.3)]).toBe(0);
    expect(r.trusted[at(5.9)]).toBe(1);
    // Trust is withdrawn at once: the gate opens on the new echo, undecided...
    const lost = r.trusted.indexOf(0, at(6));
    expect(r.time[lost] - 6).toBeLessThanOrEqual(0.05);
    // ...and no opening on this echo-only input comes trusted.
    let open = 0;
    let trustedOpen = 0;
    for (let b = at(6); b < r.trusted.length; b++) {
      open += r.nearEnd[b];
      trustedOpen += r.trusted[b] & r.nearEnd[b];
    }
    const erleAfter = erle(echo, (t) => r.out[t] - micNoise[t], 9, TURN_S);
    console.log(`echo-path change at 6 s: trust lost at ${rounded(r.time[lost])} s; gate open ${open} blocks after it, ${trustedOpen} trusted; ERLE 9–12 s ${rounded(erleAfter)} dB; delay now ${r.delayMs} ms`);
    expect(trustedOpen).toBe(0);
    expect(erleAfter).toBeGreaterThan(15);
    expect(Math.abs(r.delayMs - 90)).toBeLessThanOrEqual(2);
  });
});

describe("EchoGuard's cost and the filter choice", () => {
  test("prints µs per 16 kHz block, and PBFDAF vs NLMS on the same aligned echo", () => {
    const seconds = 6;
    const ref = turn.subarray(0, seconds * RATE);
    const echo = echoOf(ref, { rt60: 0.5, delayMs: 60, gainDb: -6, seed: 41 });
    const mic = echo.map((v, i) => v + micNoise[i]);
    const converged = run(mic, ref);
    const bypass = run(mic, new Float32Array(ref.length));
    // The filters alone, aligned by hand (16 ms margin), pre-emphasised as in the guard.
    const n = 64;
    const margin = 256;
    const taps = Math.ceil((margin + 4096) / n) * n;
    const compare = (filter: { process(x: Float64Array, d: Float64Array, y: Float64Array, e: Float64Array): void }, block: number) => {
      const [x, d, y, e] = [0, 0, 0, 0].map(() => new Float64Array(block));
      const out = new Float64Array(ref.length);
      const delay = 960 - margin;
      let lastX = 0;
      let lastD = 0;
      let lastE = 0;
      const started = performance.now();
      for (let t0 = 0; t0 + block <= ref.length; t0 += block) {
        for (let i = 0; i < block; i++) {
          const xv = t0 + i >= delay ? ref[t0 + i - delay] : 0;
          x[i] = xv - 0.9 * lastX;
          lastX = xv;
          d[i] = mic[t0 + i] - 0.9 * lastD;
          lastD = mic[t0 + i];
        }
        filter.process(x, d, y, e);
        for (let i = 0; i < block; i++) out[t0 + i] = lastE = e[i] + 0.9 * lastE;
      }
      const micros = ((performance.now() - started) * 1000) / (ref.length / 64);
      return { erle: erle(echo, (t) => out[t] - micNoise[t], 2, seconds), micros };
    };
    const pbfdaf = compare(new PbfdafFilter({ blockSize: n, partitions: taps / n }), n);
    const nlms = compare(new NlmsFilter({ blockSize: 128, taps }), 128);
    console.table([
      { what: "EchoGuard, speech, converging", "µs / 64-sample block": Math.round(converged.microsPerBlock) },
      { what: "EchoGuard, silent reference (bypass)", "µs / 64-sample block": Math.round(bypass.microsPerBlock * 10) / 10 },
      { what: `PBFDAF alone, ${taps} taps (ERLE 2–6 s ${rounded(pbfdaf.erle)} dB)`, "µs / 64-sample block": Math.round(pbfdaf.micros) },
      { what: `NLMS alone, ${taps} taps (ERLE 2–6 s ${rounded(nlms.erle)} dB)`, "µs / 64-sample block": Math.round(nlms.micros) },
    ]);
    expect(pbfdaf.micros).toBeLessThan(nlms.micros);
  });
});
