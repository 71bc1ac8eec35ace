// The bench runner's command line: bench names, and `--provider NAME` for the
// benches that can run on another STT or TTS (the page side of each name is
// bench/pages/session/bench-providers.js). A result on a provider other than
// the reference one is written beside the default result, never over it.

/** The reference pair, and each hosted provider with the kind it replaces in that pair. */
export const BENCH_PROVIDERS = {
  kyutai: "pair",
  deepgram: "stt",
  "deepgram-flux": "stt",
  assemblyai: "stt",
  elevenlabs: "tts",
  cartesia: "tts",
};
export const DEFAULT_PROVIDER = "kyutai";

/**
 * @param {string[]} argv the runner's arguments, after `npm run bench --`
 * @returns {{ names: string[], provider: string | undefined }}
 *   provider: undefined when no `--provider` was given
 * @throws {Error} naming the bad argument
 */
export function parseBenchArgs(argv) {
  const names = [];
  let provider;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--provider" || arg.startsWith("--provider=")) {
      const value = arg === "--provider" ? argv[++i] : arg.slice("--provider=".length);
      if (!value || value.startsWith("--")) throw new Error("--provider needs a name: " + Object.keys(BENCH_PROVIDERS).join(", "));
      if (!(value in BENCH_PROVIDERS)) throw new Error(`unknown provider "${value}"; one of: ${Object.keys(BENCH_PROVIDERS).join(", ")}`);
      if (provider !== undefined && provider !== value) throw new Error(`--provider given twice (${provider}, ${value})`);
      provider = value;
    } else if (arg.startsWith("--")) {
      throw new Error(`unknown option ${arg}; the runner takes bench names and --provider NAME`);
    } else {
      names.push(arg);
    }
  }
  return { names, provider };
}

/** The results file's name: `turn` for the reference pair, `turn.deepgram` for another provider. */
export function resultName(bench, provider) {
  return provider === undefined || provider === DEFAULT_PROVIDER ? bench : `${bench}.${provider}`;
}
