// Firefox's outputLatency getter can freeze the page when read while the graph plays
// (src/audio/output-latency.ts). The Player reads it once, when start() finds the context running
// and before its own node exists, and never as playback starts; an app's value means no read at all.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Player } from "../../src/audio/player";

let reads = 0;
let readsWhenNodeBuilt: number[] = [];
let nodes: FakeNode[] = [];

class FakeNode {
  port = { onmessage: null as ((e: { data: unknown }) => void) | null, postMessage() {}, close() {} };
  constructor() {
    readsWhenNodeBuilt.push(reads);
    nodes.push(this);
  }
  connect() {}
  disconnect() {}
}

function fakeContext(latencies: number[] = [0.02]) {
  return {
    sampleRate: 48000,
    state: "running",
    currentTime: 0,
    destination: {},
    audioWorklet: { addModule: async () => {} },
    get outputLatency() {
      return latencies[Math.min(reads++, latencies.length - 1)];
    },
    baseLatency: 0.005,
  } as unknown as AudioContext;
}

beforeEach(() => {
  reads = 0;
  readsWhenNodeBuilt = [];
  nodes = [];
  (globalThis as any).AudioWorkletNode = FakeNode;
});
afterEach(() => {
  delete (globalThis as any).AudioWorkletNode;
});

describe("the Player's output latency", () => {
  it("is read once, before the player's node joins the graph, and not when playback starts", async () => {
    const player = new Player({ context: fakeContext(), assetsPath: "/dist/" });
    expect(player.outputLatency).toBe(0);
    await player.start();
    expect(readsWhenNodeBuilt).toEqual([1]);
    expect(player.outputLatency).toBeCloseTo(0.025, 9);
    player.write(new Float32Array(480), { sampleRate: 48000, generation: 1 });
    const started: number[] = [];
    player.on("started", (e) => started.push(e.generation));
    nodes[0]!.port.onmessage!({ data: { kind: "started", generation: 1, contextTime: 0.1 } });
    expect(started).toEqual([1]);
    for (let i = 0; i < 5; i++) expect(player.outputLatency).toBeCloseTo(0.025, 9);
    expect(reads).toBe(1);
  });

  it("a context that reports no latency before it rendered (Chromium) is read once more, at the first started, and not after", async () => {
    const player = new Player({ context: fakeContext([0, 0.03]), assetsPath: "/dist/" });
    await player.start();
    expect(player.outputLatency).toBeCloseTo(0.005, 9);
    player.write(new Float32Array(480), { sampleRate: 48000, generation: 1 });
    nodes[0]!.port.onmessage!({ data: { kind: "started", generation: 1, contextTime: 0.1 } });
    expect(player.outputLatency).toBeCloseTo(0.035, 9);
    player.write(new Float32Array(480), { sampleRate: 48000, generation: 2 });
    nodes[0]!.port.onmessage!({ data: { kind: "started", generation: 2, contextTime: 0.5 } });
    expect(reads).toBe(2);
  });

  it("given by the app, the context's getter is never read", async () => {
    const player = new Player({ context: fakeContext(), assetsPath: "/dist/", outputLatency: 0.08 });
    await player.start();
    expect(player.outputLatency).toBe(0.08);
    player.remeasureOutputLatency();
    expect(player.outputLatency).toBe(0.08);
    expect(reads).toBe(0);
  });

  it("refuses a latency that is not a number of seconds ≥ 0", () => {
    for (const outputLatency of [-0.01, Number.NaN, Infinity]) {
      expect(() => new Player({ context: fakeContext(), assetsPath: "/dist/", outputLatency })).toThrow(/outputLatency` must be a number of seconds/);
    }
  });
});
