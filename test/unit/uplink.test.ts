import { afterEach, describe, expect, test, vi } from "vitest";
import { Uplink, type UplinkSink } from "../../src/uplink/uplink.js";

/**
 * A socket stand-in whose send buffer drains at `bytesPerMs` while `stalled`
 * is false, on a virtual clock: the same arithmetic as WebSocket.bufferedAmount
 * against a server that stops reading. (The real socket against the reference
 * server's stall knob is in the browser suite and the uplink benchmark.)
 */
class VirtualSocket implements UplinkSink {
  buffered = 0;
  stalled = false;
  wire: Array<{ audio: number } | { gap: number }> = [];
  constructor(readonly clock: { t: number }, readonly bytesPerMs: number, readonly bytesPerSample: number) {}
  #last = 0;
  tick() {
    const dt = this.clock.t - this.#last;
    this.#last = this.clock.t;
    if (!this.stalled) this.buffered = Math.max(0, this.buffered - dt * this.bytesPerMs);
  }
  get bufferedAmount() {
    this.tick();
    return this.buffered;
  }
  sendAudio(pcm: Float32Array | Int16Array) {
    this.tick();
    this.buffered += pcm.length * this.bytesPerSample;
    this.wire.push({ audio: pcm.length });
    return pcm.length * this.bytesPerSample;
  }
  sendGap(samples: number) {
    this.wire.push({ gap: samples });
  }
}

const FRAME = 320; // 20 ms at 16 kHz
function run(policy: "gap" | "end", opts: { observe?: boolean } = {}) {
  const clock = { t: 0 };
  const socket = new VirtualSocket(clock, 64, 2); // 64 B/ms = 2× real time for 16 kHz s16
  const uplink = new Uplink(socket, { sampleRate: 16000, bytesPerSample: 2, policy, now: () => clock.t, retryMs: 1e9, ...opts });
  const overloads: unknown[] = [];
  const ended: unknown[] = [];
  uplink.on("overload", (e) => overloads.push(e));
  uplink.on("ended", (e) => ended.push(e));
  const push = (frames: number) => {
    for (let i = 0; i < frames; i++) {
      clock.t += 20;
      uplink.push(new Int16Array(FRAME));
    }
  };
  return { clock, socket, uplink, overloads, ended, push };
}

describe("Uplink", () => {
  test("the budget is 0.5 s of audio in the wire format: 16,000 bytes of 16 kHz s16", () => {
    const { uplink } = run("gap");
    expect(uplink.budgetBytes).toBe(16000);
    const kyutai = new Uplink({ sendAudio: () => 0, bufferedAmount: 0 }, { sampleRate: 24000, bytesPerSample: 5 });
    expect(kyutai.budgetBytes).toBe(60000);
  });

  test("a stalled socket: pending bytes never pass the budget, and every sample is sent or counted in a gap", () => {
    const t = run("gap");
    t.push(50); // 1 s flowing
    t.socket.stalled = true;
    t.push(500); // 10 s stalled
    t.socket.stalled = false;
    t.push(100); // 2 s after it resumes
    const m = t.uplink.metrics;
    expect(m.pendingBytesMax).toBeLessThanOrEqual(m.budgetBytes);
    expect(m.pushedSamples).toBe(650 * FRAME);
    const queued = m.pendingFrames * FRAME;
    expect(m.sentSamples + m.gapSamples + queued).toBe(m.pushedSamples);
    expect(m.gapSamples).toBeGreaterThan(400 * FRAME);
    expect(m.unsentAfterEndSamples).toBe(0);
    // One overload episode, reported once.
    expect(t.overloads).toHaveLength(1);
    // On the wire the gap comes in order, between the audio before and after the
    // stall, and the 10 s stall is not one marker per frame: at most two markers
    // (the frames that expired in the queue, and those refused at its door while
    // fresher frames still waited), which sum to the gap.
    const kinds = t.socket.wire.map((w) => ("gap" in w ? "gap" : "audio"));
    const gaps = t.socket.wire.filter((w): w is { gap: number } => "gap" in w);
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    expect(gaps.length).toBeLessThanOrEqual(2);
    expect(gaps.reduce((n, g) => n + g.gap, 0)).toBe(m.gapSamples);
    expect(kinds.slice(0, 50).every((k) => k === "audio")).toBe(true);
    expect(kinds.slice(kinds.lastIndexOf("gap") + 1).every((k) => k === "audio")).toBe(true);
    const wired = t.socket.wire.reduce((n, w) => n + ("gap" in w ? w.gap : w.audio), 0);
    expect(wired + queued).toBe(m.pushedSamples);
  });

  test("while the socket is busy, frames wait in the queue (where they can still expire), not in the socket's buffer", () => {
    const t = run("gap");
    t.socket.stalled = true;
    let socketMax = 0;
    let queuedMax = 0;
    for (let i = 0; i < 100; i++) {
      t.push(1);
      const m = t.uplink.metrics;
      socketMax = Math.max(socketMax, t.socket.buffered);
      queuedMax = Math.max(queuedMax, m.pendingFrames);
      // At every moment, during the stall too (a gap marker not yet sent included):
      expect(m.sentSamples + m.gapSamples + m.pendingFrames * FRAME).toBe(m.pushedSamples);
      expect(m.pendingBytes).toBeLessThanOrEqual(m.budgetBytes);
    }
    // The socket holds a quarter of the budget (16,000 / 4 bytes); the queue holds the rest.
    expect(socketMax).toBeLessThanOrEqual(4000);
    expect(queuedMax).toBeGreaterThanOrEqual(Math.floor(12000 / (FRAME * 2)) - 1);
    expect(t.uplink.metrics.queueWaitMsP95).toBe(0); // nothing sent since the stall: no wait recorded yet
    t.socket.stalled = false;
    t.push(30);
    // Frames that waited out the stall in the queue went out with their real wait.
    expect(t.uplink.metrics.queueWaitMsP95).toBeGreaterThan(100);
    expect(t.uplink.metrics.queueWaitMsP95).toBeLessThanOrEqual(500);
  });

  test("a link slower than the audio is one overload episode, not one per frame that gets through", () => {
    const clock = { t: 0 };
    const socket = new VirtualSocket(clock, 16, 2); // 16 B/ms: half of real time for 16 kHz s16
    const uplink = new Uplink(socket, { sampleRate: 16000, bytesPerSample: 2, policy: "gap", now: () => clock.t, retryMs: 1e9 });
    const overloads: unknown[] = [];
    uplink.on("overload", (e) => overloads.push(e));
    for (let i = 0; i < 250; i++) {
      clock.t += 20;
      uplink.push(new Int16Array(FRAME));
    }
    const m = uplink.metrics;
    // About half the audio gets through, in many small pieces, yet it is one episode.
    expect(m.sentSamples / m.pushedSamples).toBeGreaterThan(0.4);
    expect(m.gapSamples).toBeGreaterThan(0);
    expect(overloads).toHaveLength(1);
    expect(m.overloads).toBe(1);
  });

  test("frames older than the budget expire from the queue: no frame waits longer than 0.5 s", () => {
    const t = run("gap");
    t.socket.stalled = true;
    t.push(100);
    t.socket.stalled = false;
    t.push(50);
    const m = t.uplink.metrics;
    expect(m.oldestFrameAgeMsMax).toBeLessThanOrEqual(500 + 20);
    expect(m.queueWaitMsP95).toBeLessThanOrEqual(500);
    expect(m.oldestFrameAgeMs).toBeLessThanOrEqual(500);
  });

  test('the "end" policy ends the stream cleanly once, and counts what it did not send', () => {
    const t = run("end");
    t.socket.stalled = true;
    t.push(100);
    expect(t.ended).toEqual([{ reason: "overload" }]);
    expect(t.uplink.ended).toBe(true);
    const m = t.uplink.metrics;
    expect(m.sentSamples + m.unsentAfterEndSamples).toBe(m.pushedSamples);
    expect(m.pendingFrames).toBe(0);
    expect(t.overloads).toHaveLength(1);
  });

  test("observe mode sends everything, as a naive sender would, and only counts what it would reject", () => {
    const t = run("gap", { observe: true });
    t.socket.stalled = true;
    t.push(100);
    const m = t.uplink.metrics;
    expect(m.sentSamples).toBe(100 * FRAME);
    expect(m.admissionRejects).toBe(0);
    expect(m.wouldReject).toBe(100 - 25);
    expect(m.pendingBytesMax).toBe(100 * FRAME * 2);
  });

  test("one timer at most, whatever the number of frames, and none after close", async () => {
    const created: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    const pending = new Set<unknown>();
    (globalThis as any).setTimeout = (fn: () => void, ms: number) => {
      created.push(ms);
      const id = realSetTimeout(() => {
        pending.delete(id);
        fn();
      }, ms);
      pending.add(id);
      return id;
    };
    (globalThis as any).clearTimeout = (id: any) => {
      pending.delete(id);
      realClearTimeout(id);
    };
    const live = () => pending.size;
    try {
      // Busy but inside the budget: frames queue (up to the budget), the rest becomes a gap.
      const socket = { bufferedAmount: 8000, sendAudio: () => 0, sendGap: () => {} };
      const uplink = new Uplink(socket, { sampleRate: 16000, bytesPerSample: 2, policy: "gap", retryMs: 5 });
      let maxLive = 0;
      for (let i = 0; i < 1000; i++) {
        uplink.push(new Int16Array(FRAME));
        maxLive = Math.max(maxLive, live());
      }
      expect(maxLive).toBe(1);
      expect(uplink.metrics.pendingFrames).toBe(Math.floor(8000 / (FRAME * 2)));
      await new Promise((r) => realSetTimeout(r, 20));
      expect(live()).toBe(1); // still retrying the stuck queue
      uplink.close();
      expect(live()).toBe(0);
    } finally {
      globalThis.setTimeout = realSetTimeout;
      globalThis.clearTimeout = realClearTimeout;
    }
  });

  test("a replay burst draining slowly does not overload the live audio behind it; live audio past the budget still does", () => {
    // 1 s of replay (32,000 B, twice the budget) into a socket that drains at 2× real time.
    const t = run("end");
    t.uplink.sendBurst(Array.from({ length: 50 }, () => new Int16Array(FRAME)));
    expect(t.socket.bufferedAmount).toBe(32000);
    t.push(30); // 600 ms of live audio while the burst drains
    expect(t.overloads).toEqual([]);
    expect(t.ended).toEqual([]);
    expect(t.socket.wire.filter((w) => "audio" in w)).toHaveLength(80);
    expect(t.uplink.metrics.pendingFrames).toBe(0);
    expect(t.uplink.metrics.sentSamples).toBe(30 * FRAME);
    // The same burst with the server stalled: the live audio behind it piles up and overloads.
    const s = run("end");
    s.socket.stalled = true;
    s.uplink.sendBurst(Array.from({ length: 50 }, () => new Int16Array(FRAME)));
    s.push(30);
    expect(s.overloads).toEqual([{ policy: "end", pendingBytes: expect.any(Number), budgetBytes: 16000, reason: "bytes" }]);
    expect(s.ended).toHaveLength(1);
  });

  test("a flush's padding the owner wrote itself (noteBurst) does not overload the next frame while the browser reports it late; live audio behind it past the budget still does", () => {
    // Kyutai: 80 ms frames of 1,920 samples at 5 B (budget 60,000 B); its flush pads with 0.5 s of silence: 60,150 B with framing.
    const make = () => {
      const clock = { t: 0 };
      const socket = new VirtualSocket(clock, 0, 5);
      socket.stalled = true; // a busy page has not yet run the task that lowers bufferedAmount
      const uplink = new Uplink(socket, { sampleRate: 24000, bytesPerSample: 5, policy: "end", now: () => clock.t, retryMs: 1e9 });
      const overloads: Array<{ reason: string }> = [];
      uplink.on("overload", (e) => overloads.push(e));
      const frames = (n: number) => {
        for (let i = 0; i < n; i++) {
          clock.t += 80;
          uplink.push(new Float32Array(1920));
        }
      };
      return { socket, uplink, overloads, frames };
    };
    // Counted as backlog (what the session did): the first frame after the flush overloads, as in the bargein bench's busy page.
    const counted = make();
    counted.frames(1);
    counted.socket.buffered += 60150;
    counted.frames(1);
    expect(counted.overloads.map((o) => o.reason)).toEqual(["bytes"]);
    expect(counted.uplink.ended).toBe(true);
    // Noted as a burst: the live audio has its whole budget, and only its own backlog overloads.
    const noted = make();
    noted.frames(1);
    noted.socket.buffered += 60150;
    noted.uplink.noteBurst(60150);
    noted.frames(5); // 6 live frames pending: 57,600 B
    expect(noted.overloads).toEqual([]);
    expect(noted.uplink.pendingBytes).toBe(6 * 9600);
    noted.frames(1);
    expect(noted.overloads.map((o) => o.reason)).toEqual(["bytes"]);
  });

  test("big frames: the socket may hold three (up to half the budget), so a bufferedAmount reported late does not hold each frame behind the last", () => {
    // Kyutai: 80 ms frames of 1,920 samples at 5 bytes; the budget's quarter (15,000 B) is one and a half frames.
    const clock = { t: 0 };
    const socket = new VirtualSocket(clock, 0, 5);
    socket.stalled = true; // the browser has not yet reported any byte as sent
    const uplink = new Uplink(socket, { sampleRate: 24000, bytesPerSample: 5, policy: "end", now: () => clock.t, retryMs: 1e9 });
    for (let i = 0; i < 4; i++) {
      clock.t += 80;
      uplink.push(new Float32Array(1920));
    }
    expect(socket.wire).toHaveLength(3);
    expect(socket.buffered).toBe(3 * 9600);
    expect(uplink.metrics.pendingFrames).toBe(1);
    // Small frames keep the quarter: 16 kHz s16, 640 B frames, 4,000 B in the socket at most (see above).
    const small = new Uplink(new VirtualSocket(clock, 0, 2), { sampleRate: 16000, bytesPerSample: 2, now: () => clock.t, retryMs: 1e9 });
    for (let i = 0; i < 10; i++) small.push(new Int16Array(FRAME));
    expect(small.metrics.pendingFrames).toBe(10 - Math.floor(4000 / 640));
    small.close();
    uplink.close();
  });

  test("sendQueued hands every queued frame and a trailing gap marker to the socket at once, so an end marker written after it follows the audio", () => {
    // A turn's end: the provider writes its commit/activityEnd to the socket itself, right after sendQueued().
    const t = run("gap");
    t.socket.stalled = true;
    t.push(12); // 7,680 B: the socket takes its quarter (6 frames), the rest waits
    expect(t.uplink.metrics.pendingFrames).toBe(6);
    t.uplink.sendQueued();
    t.socket.wire.push({ gap: -1 }); // stands for the end marker
    expect(t.socket.wire.map((w) => ("audio" in w ? w.audio : "end"))).toEqual([...Array(12).fill(FRAME), "end"]);
    expect(t.uplink.metrics.pendingFrames).toBe(0);
    expect(t.uplink.metrics.sentSamples).toBe(12 * FRAME);
    // Audio refused at the queue's door is a gap: its marker goes out too, before the end marker, so the service's timeline is whole.
    const g = run("gap");
    g.socket.stalled = true;
    for (let i = 0; i < 30; i++) g.uplink.push(new Int16Array(FRAME)); // a burst over the budget: the last frames are refused
    expect(g.uplink.metrics.gapSamples).toBeGreaterThan(0); // a gap marker waits at the back of the queue
    g.uplink.sendQueued();
    expect(g.socket.wire.at(-1)).toEqual({ gap: g.uplink.metrics.gapSamples });
    const gaps = g.socket.wire.filter((w): w is { gap: number } => "gap" in w);
    expect(gaps.reduce((n, w) => n + w.gap, 0)).toBe(g.uplink.metrics.gapSamples);
    expect(g.uplink.metrics.pendingFrames).toBe(0);
    const wired = g.socket.wire.reduce((n, w) => n + ("gap" in w ? w.gap : w.audio), 0);
    expect(wired).toBe(g.uplink.metrics.pushedSamples);
  });

  describe("the age bound, judged from each frame's capture time at the moment of sending", () => {
    afterEach(() => vi.useRealTimers());

    /**
     * A 16 kHz s16 uplink on a virtual clock and vitest's fake timers, so the
     * test decides when the retry timer runs (late, as on a busy main thread).
     * Each frame carries its sequence number in sample 0; the sink writes down
     * when each one went out, so the age at sending is read off the wire.
     */
    function tagged(policy: "gap" | "end") {
      vi.useFakeTimers();
      const clock = { t: 0 };
      const socket = new VirtualSocket(clock, 64, 2);
      const sent: Array<{ seq: number; at: number }> = [];
      const sendAudio = socket.sendAudio.bind(socket);
      socket.sendAudio = (pcm) => {
        sent.push({ seq: pcm[0], at: clock.t });
        return sendAudio(pcm);
      };
      const uplink = new Uplink(socket, { sampleRate: 16000, bytesPerSample: 2, policy, now: () => clock.t, retryMs: 10 });
      const overloads: Array<{ reason: string }> = [];
      const ended: unknown[] = [];
      uplink.on("overload", (e) => overloads.push(e));
      uplink.on("ended", (e) => ended.push(e));
      const capturedAt: number[] = [];
      /** One frame whose capture ended at `at` (default now), pushed now. */
      const push = (at = clock.t) => {
        const pcm = new Int16Array(FRAME);
        pcm[0] = capturedAt.length;
        capturedAt.push(at);
        uplink.push(pcm, at);
      };
      const ageAtSend = () => sent.map((s) => s.at - capturedAt[s.seq]);
      const accounted = () => {
        const m = uplink.metrics;
        return m.sentSamples + m.gapSamples + m.unsentAfterEndSamples + m.pendingFrames * FRAME;
      };
      return { clock, socket, uplink, overloads, ended, push, sent, ageAtSend, accounted };
    }

    test("the retry timer fires 800 ms late (a blocked main thread): the frames it finds past the budget go into one gap, none is sent late", () => {
      const t = tagged("gap");
      t.socket.stalled = true;
      for (let i = 0; i < 10; i++) {
        t.clock.t += 20;
        t.push();
      }
      // The thread blocks: the clock runs on, no timer and no push for 800 ms; the socket drains meanwhile.
      t.clock.t += 800;
      t.socket.stalled = false;
      t.socket.buffered = 0;
      vi.advanceTimersByTime(10); // the late timer finally runs
      for (let i = 0; i < 5; i++) {
        t.clock.t += 20;
        t.push();
        vi.advanceTimersByTime(20);
      }
      const ages = t.ageAtSend();
      expect(Math.max(...ages)).toBeLessThanOrEqual(500);
      const m = t.uplink.metrics;
      // What the socket held before the stall went out fresh; the rest of the ten expired in the queue.
      const expiredSeqs = capturedSeqs(t.sent, 10).missing;
      expect(expiredSeqs.length).toBeGreaterThan(0);
      expect(m.gapSamples).toBe(expiredSeqs.length * FRAME);
      expect(m.oldestFrameAgeMsMax).toBeLessThanOrEqual(500);
      // Found 800 ms late, the oldest expired frame was over 1 s old: reported apart, never sent.
      expect(m.expiredFrameAgeMsMax).toBeGreaterThan(800);
      expect(t.overloads.map((o) => o.reason)).toEqual(["age"]);
      const gaps = t.socket.wire.filter((w): w is { gap: number } => "gap" in w);
      expect(gaps.reduce((n, g) => n + g.gap, 0)).toBe(m.gapSamples);
      expect(t.accounted()).toBe(m.pushedSamples);
      expect(m.pushedSamples).toBe(15 * FRAME);
    });

    test('the same late timer with the "end" policy: the stream ends once, and what it did not send is counted', () => {
      const t = tagged("end");
      t.socket.stalled = true;
      for (let i = 0; i < 10; i++) {
        t.clock.t += 20;
        t.push();
      }
      t.clock.t += 800;
      t.socket.stalled = false;
      t.socket.buffered = 0;
      vi.advanceTimersByTime(10);
      t.clock.t += 20;
      t.push();
      expect(t.ended).toEqual([{ reason: "overload" }]);
      expect(t.overloads.map((o) => o.reason)).toEqual(["age"]);
      expect(Math.max(...t.ageAtSend())).toBeLessThanOrEqual(500);
      const m = t.uplink.metrics;
      expect(m.unsentAfterEndSamples).toBeGreaterThan(0);
      expect(m.sentSamples + m.unsentAfterEndSamples).toBe(m.pushedSamples);
      expect(vi.getTimerCount()).toBe(0);
    });

    test("frames a busy thread delivered late are judged by their capture time: one past the budget is rejected on arrival, one inside it expires while it waits", () => {
      for (const policy of ["gap", "end"] as const) {
        const t = tagged(policy);
        t.clock.t = 1000;
        t.push(t.clock.t - 600); // captured 600 ms ago: over the budget as it arrives
        expect(t.sent).toEqual([]);
        const m = t.uplink.metrics;
        expect(m.lateArrivals).toBe(1);
        expect(m.arrivalAgeMsMax).toBe(600);
        expect(t.overloads).toEqual([expect.objectContaining({ reason: "age", policy })]);
        if (policy === "gap") {
          expect(m.gapSamples).toBe(FRAME);
          // Captured 450 ms ago, it fits, but the socket is busy: 60 ms later it is past the budget and never goes out.
          t.socket.buffered = 8000;
          t.socket.stalled = true;
          t.push(t.clock.t - 450);
          expect(t.uplink.metrics.pendingFrames).toBe(1);
          t.clock.t += 60;
          vi.advanceTimersByTime(10);
          expect(t.sent).toEqual([]);
          expect(t.uplink.metrics.gapSamples).toBe(2 * FRAME);
          expect(t.uplink.metrics.pendingFrames).toBe(0);
        } else {
          expect(t.ended).toHaveLength(1);
          expect(m.unsentAfterEndSamples).toBe(FRAME);
        }
        expect(t.accounted()).toBe(t.uplink.metrics.pushedSamples);
        vi.useRealTimers();
      }
    });

    test("a stalled socket and late timers at random, 2,000 frames: no sample leaves older than the budget, and every sample pushed is sent, in a gap, or counted unsent", () => {
      let seed = 7;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      for (const policy of ["gap", "end"] as const) {
        const t = tagged(policy);
        for (let i = 0; i < 2000; i++) {
          const late = random() < 0.05 ? 200 + random() * 900 : 0; // now and then the thread blocks
          t.clock.t += 20 + late;
          t.socket.stalled = random() < 0.3;
          // Frames come as captured, some delivered late in a burst after the block.
          t.push(t.clock.t - random() * late);
          vi.advanceTimersByTime(20);
          const m = t.uplink.metrics;
          expect(t.accounted()).toBe(m.pushedSamples);
        }
        expect(Math.max(0, ...t.ageAtSend())).toBeLessThanOrEqual(500);
        const m = t.uplink.metrics;
        expect(m.oldestFrameAgeMsMax).toBeLessThanOrEqual(500);
        expect(m.pushedSamples).toBe(2000 * FRAME);
        if (policy === "gap") {
          expect(m.gapSamples).toBeGreaterThan(0);
          const wired = t.socket.wire.reduce((n, w) => n + ("gap" in w ? w.gap : w.audio), 0);
          const heldGap = m.gapSamples - t.socket.wire.reduce((n, w) => n + ("gap" in w ? w.gap : 0), 0);
          expect(wired + heldGap + m.pendingFrames * FRAME).toBe(m.pushedSamples);
        } else {
          expect(t.ended).toHaveLength(1);
        }
        vi.useRealTimers();
      }
    });
  });

  test("bad options fail with a ConfigError naming the option", () => {
    const sink = { sendAudio: () => 0, bufferedAmount: 0 };
    expect(() => new Uplink(sink, { sampleRate: 16000, bytesPerSample: 2, policy: "gap" })).toThrow(/gap markers/);
    expect(() => new Uplink(sink, { sampleRate: 16000, bytesPerSample: 2, budgetMs: 0 })).toThrow(/budgetMs/);
  });
});

/** Which of the first `count` sequence numbers never went out. */
function capturedSeqs(sent: Array<{ seq: number }>, count: number) {
  const seen = new Set(sent.map((s) => s.seq));
  return { missing: Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i)) };
}
