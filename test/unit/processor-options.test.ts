import { describe, expect, it } from "vitest";
import { requireProcessorOptions } from "../../worklets/processor-options";

type Opts = { capacity: number; fadeSamples: number };

describe("a bargein processor built without its options", () => {
  it("says that processorOptions are missing, which processor, and who builds the node", () => {
    expect(() => requireProcessorOptions<Opts>("bargein-playback", {}, ["capacity"], "bargein's Player")).toThrow(
      'bargein-playback: processorOptions are missing; build the node with bargein\'s Player, which passes them, not with new AudioWorkletNode(context, "bargein-playback") alone',
    );
    expect(() => requireProcessorOptions<Opts>("bargein-playback", undefined, ["capacity"], "bargein's Player")).toThrow(/processorOptions are missing/);
  });

  it("names a required number that is absent or not a number", () => {
    expect(() => requireProcessorOptions<Opts>("bargein-playback", { processorOptions: { capacity: 10 } }, ["capacity", "fadeSamples"], "bargein's Player")).toThrow(
      /processorOptions\.fadeSamples must be a number \(got nothing\)/,
    );
    expect(() => requireProcessorOptions<Opts>("bargein-playback", { processorOptions: { capacity: "10", fadeSamples: 1 } }, ["capacity", "fadeSamples"], "x")).toThrow(/capacity must be a number \(got 10\)/);
  });

  it("gives the options back when they are whole", () => {
    const processorOptions = { capacity: 10, fadeSamples: 1 };
    expect(requireProcessorOptions<Opts>("bargein-playback", { processorOptions }, ["capacity", "fadeSamples"], "x")).toBe(processorOptions);
  });
});
