// Replays the contract sequences (test/contract/sequences/<service>.mjs, written from each service's
// docs) against the live service and against the reference backend's emulator, and prints both side
// by side: a team with keys sees where the emulator and the service part ways. Then one spoken turn
// through the SDK's own provider (test/contract/live-turn.ts, which live-turn.test.ts runs against the
// emulators in npm test), on both sides too: a barge-in on OpenAI Realtime and Gemini Live (a
// VoiceSession with bargein/testing's fakes and flite's speech), a speech fixture's final words on
// Deepgram and AssemblyAI, a reply cut after its first audio and a second one on ElevenLabs and Cartesia.
//
//   npm run check:live -- <service>     openai | gemini | deepgram | assemblyai | elevenlabs | cartesia
//
// The key comes from the environment (the variable is named below and in docs/contributing.md).
// Without it the emulator's column is still run and printed, then the script says which variable to
// set and exits with 2. Exit 1: a rule failed on either side; 0: everything matched.
// Not part of npm test: it needs keys and the network.
//
// The providers are TypeScript and open their sockets with the global WebSocket, as in a page: the
// spoken turn is bundled with esbuild (to .cache/check-live/, the src/ and test/ code only), and Node 20
// needs --experimental-websocket for the global (package.json's script passes it, as vitest.config.ts
// does for the tests; run directly, the script starts itself again with it).
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startReferenceBackend } from "../demo/server/backend.mjs";
import { assemblyaiSequences } from "../test/contract/sequences/assemblyai.mjs";
import { cartesiaSequences } from "../test/contract/sequences/cartesia.mjs";
import { deepgramSequences } from "../test/contract/sequences/deepgram.mjs";
import { elevenlabsSequences } from "../test/contract/sequences/elevenlabs.mjs";
import { geminiSequences } from "../test/contract/sequences/gemini.mjs";
import { openaiSequences } from "../test/contract/sequences/openai.mjs";

const EMULATOR_KEY = "check-live-emulator-key";
/** The voice and model the live ElevenLabs and Gemini checks use; override with the variables named. */
const ELEVENLABS_VOICE = process.env.ELEVENLABS_VOICE_ID ?? "21m00Tcm4TlvDq8ikWAM";
const GEMINI_MODEL = process.env.GEMINI_LIVE_MODEL ?? "models/gemini-live-2.5-flash-preview";

/**
 * Per service: the variable holding its key, its sequences, and the target for a base URL and key
 * (the emulator takes the same auth as the service where the docs allow a server-side key).
 * @type {Record<string, { env: string, sequences: Record<string, (target: any) => Promise<{ checks: import("../test/contract/sequences/socket.mjs").Check[] }>>, live: (key: string) => unknown, emulator: (wsUrl: string) => unknown }>}
 */
const SERVICES = {
  openai: {
    env: "OPENAI_API_KEY",
    sequences: openaiSequences,
    live: (key) => ({ url: "wss://api.openai.com/v1/realtime?model=gpt-realtime", auth: { headers: { Authorization: `Bearer ${key}` } } }),
    emulator: (wsUrl) => ({ url: `${wsUrl}/v1/realtime?model=gpt-realtime&pace=1&burst_s=0.2`, auth: { protocols: ["realtime", `openai-insecure-api-key.${EMULATOR_KEY}`] } }),
  },
  gemini: {
    env: "GEMINI_API_KEY",
    sequences: geminiSequences,
    live: (key) => ({ url: `wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=${key}`, auth: {}, model: GEMINI_MODEL }),
    emulator: (wsUrl) => ({ url: `${wsUrl}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=${EMULATOR_KEY}`, auth: {}, model: GEMINI_MODEL }),
  },
  deepgram: {
    env: "DEEPGRAM_API_KEY",
    sequences: deepgramSequences,
    live: (key) => ({ base: "wss://api.deepgram.com", auth: { headers: { Authorization: `Token ${key}` } } }),
    emulator: (wsUrl) => ({ base: wsUrl, auth: { protocols: ["token", EMULATOR_KEY] } }),
  },
  assemblyai: {
    env: "ASSEMBLYAI_API_KEY",
    sequences: assemblyaiSequences,
    live: (key) => ({ base: "wss://streaming.assemblyai.com", auth: { headers: { Authorization: key } } }),
    emulator: (wsUrl) => ({ base: wsUrl, auth: { headers: { Authorization: EMULATOR_KEY } } }),
  },
  elevenlabs: {
    env: "ELEVENLABS_API_KEY",
    sequences: elevenlabsSequences,
    live: (key) => ({ url: `wss://api.elevenlabs.io/v1/text-to-speech/${ELEVENLABS_VOICE}/multi-stream-input?model_id=eleven_flash_v2_5&output_format=pcm_16000`, auth: { headers: { "xi-api-key": key } } }),
    emulator: (wsUrl) => ({ url: `${wsUrl}/v1/text-to-speech/${ELEVENLABS_VOICE}/multi-stream-input?model_id=eleven_flash_v2_5&output_format=pcm_16000&pace=0`, auth: { headers: { "xi-api-key": EMULATOR_KEY } } }),
  },
  cartesia: {
    env: "CARTESIA_API_KEY",
    sequences: cartesiaSequences,
    live: (key) => ({ url: (/** @type {string} */ version) => `wss://api.cartesia.ai/tts/websocket?cartesia_version=${version}`, auth: { headers: { "X-API-Key": key } } }),
    emulator: (wsUrl) => ({ url: (/** @type {string} */ version) => `${wsUrl}/tts/websocket?cartesia_version=${version}&pace=0`, auth: { headers: { "X-API-Key": EMULATOR_KEY } } }),
  },
};

if (typeof globalThis.WebSocket !== "function") {
  const again = spawnSync(process.execPath, ["--experimental-websocket", "--no-turbo-fast-api-calls", ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(again.status ?? 1);
}

const name = process.argv[2];
const service = name ? SERVICES[name] : undefined;
if (!service) {
  console.error(`check:live: name a service: npm run check:live -- <${Object.keys(SERVICES).join(" | ")}>${name ? ` (not ${JSON.stringify(name)})` : ""}`);
  process.exit(2);
}

/**
 * Every sequence against one target: per sequence, its rules and whether each held, or the error
 * that stopped it. @param {unknown} target
 */
async function runAll(target) {
  /** @type {Map<string, { rule: string, ok: boolean, got: string }[]>} */
  const results = new Map();
  for (const [sequence, run] of Object.entries(service.sequences)) {
    try {
      results.set(sequence, (await run(target)).checks);
    } catch (err) {
      results.set(sequence, [{ rule: "the sequence runs to its end", ok: false, got: /** @type {Error} */ (err).message }]);
    }
  }
  return results;
}

const mark = (/** @type {{ ok: boolean } | undefined} */ c) => (c === undefined ? "  –  " : c.ok ? " ok  " : "DIFF ");
/** @param {Map<string, any[]>} emulator @param {Map<string, any[]> | null} live */
function print(emulator, live) {
  console.log(`\n${name}: the documented sequences (test/contract/sequences/${name}.mjs)`);
  console.log(`${"emulator".padEnd(9)}${"live".padEnd(6)}rule`);
  for (const [sequence, checks] of emulator) {
    console.log(`\n  ${sequence}`);
    const liveChecks = live?.get(sequence) ?? [];
    const rules = [...new Set([...checks.map((c) => c.rule), ...liveChecks.map((c) => c.rule)])];
    for (const rule of rules) {
      const e = checks.find((c) => c.rule === rule);
      const l = live ? liveChecks.find((c) => c.rule === rule) : undefined;
      console.log(`  ${mark(e)}   ${live ? mark(l) : "  ?  "} ${rule}`);
      if (e && !e.ok) console.log(`               emulator: ${e.got}`);
      if (l && !l.ok) console.log(`               live:     ${l.got}`);
    }
  }
}

/**
 * The spoken turn's module (test/contract/live-turn.ts), bundled for Node: src/ and test/ inlined,
 * the packages and the reference backend's modules (demo/server, which find their WASM and data
 * beside them) imported from where they are.
 * @returns {Promise<typeof import("../test/contract/live-turn.js")>}
 */
async function loadSpokenTurn() {
  const { build } = await import("esbuild");
  const root = fileURLToPath(new URL("..", import.meta.url));
  const outfile = `${root}.cache/check-live/live-turn.mjs`;
  await build({
    entryPoints: [`${root}test/contract/live-turn.ts`],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
    plugins: [
      {
        name: "demo-server-external",
        setup(b) {
          b.onResolve({ filter: /demo\/server\/[^/]+\.mjs$/ }, (args) => ({ path: pathToFileURL(`${args.resolveDir}/${args.path}`).href, external: true }));
        },
      },
    ],
  });
  return import(pathToFileURL(outfile).href);
}

/** @typedef {{ observed: string[], checks: { rule: string, ok: boolean, got: string }[] }} TurnResult */

/** @param {TurnResult} emulatorTurn @param {TurnResult | null} liveTurn @param {string} title */
function printTurn(emulatorTurn, liveTurn, title) {
  console.log(`\n${name}: ${title} (test/contract/live-turn.ts)`);
  console.log(`${"emulator".padEnd(9)}${"live".padEnd(6)}rule`);
  const rules = [...new Set([...emulatorTurn.checks.map((c) => c.rule), ...(liveTurn?.checks ?? []).map((c) => c.rule)])];
  for (const rule of rules) {
    const e = emulatorTurn.checks.find((c) => c.rule === rule);
    const l = liveTurn?.checks.find((c) => c.rule === rule);
    console.log(`  ${mark(e)}   ${liveTurn ? mark(l) : "  ?  "} ${rule}`);
    if (e) console.log(`               emulator: ${e.got}`);
    if (l) console.log(`               live:     ${l.got}`);
  }
  console.log("\n  what happened, in order");
  console.log(emulatorTurn.observed.map((o) => `    emulator: ${o}`).join("\n"));
  if (liveTurn) console.log(liveTurn.observed.map((o) => `    live:     ${o}`).join("\n"));
}

const turns = await loadSpokenTurn();
const fixtures = fileURLToPath(new URL("../test/fixtures/speech", import.meta.url));
// The emulator hears the speech fixtures as the tests do (known-speech.mjs): its column is deterministic.
const backend = await startReferenceBackend({ serveStatic: false, token: EMULATOR_KEY, knownSpeech: fixtures });
let emulator;
/** @type {TurnResult} */
let emulatorTurn;
try {
  emulator = await runAll(service.emulator(backend.wsUrl));
  emulatorTurn = await turns.spokenTurn(name, turns.emulatorTarget(name, backend, EMULATOR_KEY));
} finally {
  await backend.close();
}
const title = turns.TURN_TITLE[name];
const key = process.env[service.env];
if (!key) {
  print(emulator, null);
  printTurn(emulatorTurn, null, title);
  console.error(`\ncheck:live: no key for ${name}. Set ${service.env} to run these sequences and the spoken turn against the live service, e.g.\n  ${service.env}=… npm run check:live -- ${name}`);
  process.exit(2);
}
const live = await runAll(service.live(key));
const liveTurn = await turns.spokenTurn(name, turns.liveTarget(name, key, process.env));
print(emulator, live);
printTurn(emulatorTurn, liveTurn, title);
const failed = [...emulator.values(), ...live.values(), [emulatorTurn.checks, liveTurn.checks]].flat(2).filter((c) => !c.ok).length;
console.log(failed ? `\ncheck:live: ${failed} rule(s) did not hold (DIFF above)` : "\ncheck:live: every rule held on both sides");
process.exit(failed ? 1 : 0);
