// The real playback processor driven through the Player's two real transports
// (shared memory and MessagePort), in Node, under a stand-in for the
// AudioWorkletGlobalScope, as in capture-worklet.test.ts. Messages are
// delivered at once, so both transports see the same timeline and must render
// the same samples. No timers: each step is a render quantum.
import { loadProcessor, scope, type Posted } from "./worklet-scope.js";
import { beforeAll, describe, expect, test } from "vitest";
import { PortPlayerTransport } from "../../src/audio/player-port-transport.js";
import { SharedPlayerTransport } from "../../src/audio/player-shared-transport.js";
import type { PlayerTransport } from "../../src/audio/player-transport.js";

const QUANTUM = 128;
const RATE = 48000;
const FADE = 64;

let Processor: any;

beforeAll(async () => {
  Processor = await loadProcessor("bargein-playback", "playback-worklet.ts", RATE);
});

/** Distinct never-zero samples, labelled by `label` in their tenths (as the browser tests' generationSignal). */
function signal(label: number, length: number): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = 0.1 * label + ((i * 7919) % 1000) / 20000 + 0.0001;
  return out;
}

/** A processor fed by `kind`'s transport, with a control port as the VAD worker would hold. */
function rig(kind: "shared" | "port") {
  const transport: PlayerTransport = kind === "shared" ? new SharedPlayerTransport(RATE) : new PortPlayerTransport();
  const processor = new Processor({
    processorOptions: { shared: transport.shared, capacity: RATE, prebufferSamples: 256, fadeSamples: FADE },
  });
  transport.connect({ postMessage: (data: unknown) => processor.port.onmessage({ data }) } as unknown as MessagePort);
  const controlPort = { onmessage: null as any, close() {} };
  processor.port.onmessage({ data: { kind: "attach-control", port: controlPort } });
  const rendered: number[] = [];
  const events: Posted[] = [];
  return {
    transport,
    processor,
    rendered,
    events,
    /** A command on the control port, as a worker sends it. */
    command: (data: object) => controlPort.onmessage({ data }),
    render(quanta: number) {
      for (let q = 0; q < quanta; q++) {
        const out = new Float32Array(QUANTUM);
        processor.process([], [[out]]);
        for (const x of out) rendered.push(x);
        scope.currentFrame += QUANTUM;
        for (const m of processor.posted.splice(0)) {
          if (m.kind === "status" || m.kind === "space") transport.handle(m as any);
          else events.push(m);
        }
      }
    },
  };
}

/** Where `written` starts in `rendered` (its first sample, exactly), or -1. */
const indexOf = (rendered: number[], written: Float32Array) => rendered.indexOf(written[0]);

/** Pause, resume, the next generation, and a late pause of the old token from every channel. */
function latePause(kind: "shared" | "port") {
  const r = rig(kind);
  const g = 4;
  const old = signal(3, 40 * QUANTUM);
  const next = signal(6, 20 * QUANTUM);
  r.transport.fence(g);
  r.transport.send(old.slice(), g);
  r.render(10);
  r.transport.pause(g);
  r.render(5);
  r.transport.resume(g);
  r.render(5);
  r.transport.fence(g + 1);
  r.transport.send(next.slice(), g + 1);
  r.transport.end(g + 1);
  r.command({ kind: "pause", token: g, sampleIndex: 0 }); // the worker's, late
  r.render(4);
  r.transport.pause(g); // and once more from the Player, while g + 1 plays
  r.command({ kind: "pause", token: g, sampleIndex: 0 });
  r.render(30);
  return { ...r, next };
}

/** g + 1 paused by its own token; stale resumes (token g) from every channel; then its own resume. */
function staleResume(kind: "shared" | "port") {
  const r = rig(kind);
  const g = 4;
  const next = signal(6, 30 * QUANTUM);
  r.transport.fence(g);
  r.transport.send(signal(3, 20 * QUANTUM), g);
  r.render(5);
  r.transport.fence(g + 1);
  r.transport.send(next.slice(), g + 1);
  r.render(5);
  r.transport.pause(g + 1);
  r.render(10); // the port path's position is the status of every 8th quantum
  const heldAt = r.transport.rendered();
  r.command({ kind: "resume", token: g, sampleIndex: 0 });
  r.transport.resume(g);
  r.render(20);
  const heldTo = r.transport.rendered();
  const stateHeld = r.transport.state;
  r.transport.resume(g + 1);
  r.transport.end(g + 1);
  r.render(40);
  return { ...r, next, heldAt, heldTo, stateHeld };
}

describe("the playback processor on both transports", () => {
  for (const kind of ["shared", "port"] as const) {
    test(`${kind}: a pause that arrives after a resume and a new generation holds nothing; g + 1 plays in full`, () => {
      const r = latePause(kind);
      const at = indexOf(r.rendered, r.next);
      expect(at).toBeGreaterThan(0);
      expect(r.rendered.slice(at, at + r.next.length)).toEqual(Array.from(r.next));
      expect(r.events.filter((e) => e.kind === "ended")).toEqual([{ kind: "ended", generation: 5, samples: r.next.length, frame: expect.any(Number) }]);
      expect(r.transport.state).toBe("idle");
      expect(r.transport.rendered()).toEqual({ generation: 5, samples: r.next.length });
    });

    test(`${kind}: a stale resume (token g) does not lift a pause of g + 1`, () => {
      const r = staleResume(kind);
      expect(r.stateHeld).toBe("paused");
      expect(r.heldTo).toEqual(r.heldAt);
      expect(r.heldAt.generation).toBe(5);
      // The held stretch is silent for the 20 quanta of stale resumes.
      const at = indexOf(r.rendered, r.next);
      let longest = 0;
      for (let i = at, run = 0; i < r.rendered.length; i++) {
        run = r.rendered[i] === 0 ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      expect(longest).toBeGreaterThanOrEqual(20 * QUANTUM);
      expect(r.events.filter((e) => e.kind === "ended").map((e) => e.samples)).toEqual([r.next.length]);
      expect(r.transport.rendered()).toEqual({ generation: 5, samples: r.next.length });
    });
  }

  test("both transports render the same samples for the same script", () => {
    expect(latePause("port").rendered).toEqual(latePause("shared").rendered);
    expect(staleResume("port").rendered).toEqual(staleResume("shared").rendered);
  });

  test("a pause or resume without a valid token, from a port, is dropped", () => {
    for (const kind of ["shared", "port"] as const) {
      const r = rig(kind);
      r.transport.fence(0);
      r.transport.send(signal(3, 60 * QUANTUM), 0);
      // 8 quanta a step: the port path's state is the status of every 8th quantum.
      r.render(8);
      r.command({ kind: "pause" }); // an old-style command: would read as token 0 if coerced
      r.render(8);
      expect(r.transport.state, kind).toBe("playing");
      r.command({ kind: "pause", token: 0 });
      r.render(8);
      expect(r.transport.state, kind).toBe("paused");
      r.command({ kind: "resume" });
      r.command({ kind: "resume", token: "0" });
      r.render(8);
      expect(r.transport.state, kind).toBe("paused");
    }
  });
});
