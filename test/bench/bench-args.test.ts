// The bench runner's command line (bench/lib/bench-args.mjs): which benches,
// which provider, and where a non-default provider's result is written, so a
// run on another provider never overwrites the reference results.
import { describe, expect, test } from "vitest";
import { BENCH_PROVIDERS, parseBenchArgs, resultName } from "../../bench/lib/bench-args.mjs";

describe("bench runner arguments", () => {
  test("names alone: no provider", () => {
    expect(parseBenchArgs(["turn", "bargein"])).toEqual({ names: ["turn", "bargein"], provider: undefined });
    expect(parseBenchArgs([])).toEqual({ names: [], provider: undefined });
  });

  test("--provider NAME and --provider=NAME, before or after the bench name", () => {
    expect(parseBenchArgs(["turn", "--provider", "deepgram"])).toEqual({ names: ["turn"], provider: "deepgram" });
    expect(parseBenchArgs(["--provider=elevenlabs", "bargein"])).toEqual({ names: ["bargein"], provider: "elevenlabs" });
    expect(parseBenchArgs(["turn", "--provider", "deepgram-flux"]).provider).toBe("deepgram-flux");
  });

  test("every name the brief lists is known, kyutai being the pair itself", () => {
    expect(Object.keys(BENCH_PROVIDERS).sort()).toEqual(["assemblyai", "cartesia", "deepgram", "deepgram-flux", "elevenlabs", "kyutai"]);
    expect(BENCH_PROVIDERS.kyutai).toBe("pair");
    expect(BENCH_PROVIDERS.deepgram).toBe("stt");
    expect(BENCH_PROVIDERS.cartesia).toBe("tts");
  });

  test("a bad provider, a missing name, a second provider or an unknown flag is refused, naming it", () => {
    expect(() => parseBenchArgs(["turn", "--provider", "whisper"])).toThrow(/unknown provider "whisper".*deepgram/);
    expect(() => parseBenchArgs(["turn", "--provider"])).toThrow(/--provider needs a name/);
    expect(() => parseBenchArgs(["--provider", "--fast"])).toThrow(/--provider needs a name/);
    expect(() => parseBenchArgs(["--provider", "deepgram", "--provider", "cartesia"])).toThrow(/given twice/);
    expect(() => parseBenchArgs(["turn", "--fast"])).toThrow(/unknown option --fast/);
  });

  test("results: the reference pair keeps NAME.json, another provider writes NAME.PROVIDER.json", () => {
    expect(resultName("turn", undefined)).toBe("turn");
    expect(resultName("turn", "kyutai")).toBe("turn");
    expect(resultName("turn", "deepgram")).toBe("turn.deepgram");
    expect(resultName("bargein", "elevenlabs")).toBe("bargein.elevenlabs");
  });
});
