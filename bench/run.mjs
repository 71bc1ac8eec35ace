// `npm run bench` runs every bench/*.bench.mjs; `npm run bench -- NAME [NAME…]`
// runs those only. Each benchmark's default export returns a plain object,
// written to bench/results/NAME.json and printed as a short table.
// `--provider NAME` (bench/lib/bench-args.mjs) runs a bench that exports
// `takesProvider = true` on that STT or TTS: its default export is called with
// `{ provider }` and its result goes to bench/results/NAME.PROVIDER.json.
//
// First, as `npm test` does, scripts/ensure-system.mjs checks (and as root
// installs) the Debian packages the benches need: Chromium, pocketsphinx,
// and pocketsphinx-testdata's recordings of real people.
// After each bench, anything it left running (a backend, a browser, a child)
// is named and stopped; that bench then counts as failed. SIGINT/SIGTERM stop
// what is running (bench/lib/cleanup.mjs).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { stopAll, tracked } from "./lib/cleanup.mjs";
import { printTable, writeResult } from "./lib/results.mjs";
import { parseBenchArgs, resultName } from "./lib/bench-args.mjs";

const available = readdirSync(new URL(".", import.meta.url))
  .filter((f) => f.endsWith(".bench.mjs"))
  .map((f) => f.replace(/\.bench\.mjs$/, ""))
  .sort();
/** @type {{ names: string[], provider: string | undefined }} */
let args;
try {
  args = parseBenchArgs(process.argv.slice(2));
} catch (err) {
  console.error(`bench: ${err.message}`);
  process.exit(2);
}
const { names: wanted, provider } = args;
const unknown = wanted.filter((n) => !available.includes(n));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; available: ${available.join(", ")}`);
  process.exit(2);
}
const selected = wanted.length ? wanted : available;
const load = (name) => import(pathToFileURL(new URL(`./${name}.bench.mjs`, import.meta.url).pathname).href);
/** With --provider, every bench named must take it: checked before anything runs. */
const modules = new Map();
if (provider !== undefined) {
  for (const name of selected) modules.set(name, await load(name));
  const refusing = selected.filter((n) => modules.get(n).takesProvider !== true);
  if (refusing.length) {
    console.error(`bench: --provider is not taken by ${refusing.join(", ")}; name only benches that take it (turn, bargein)`);
    process.exit(2);
  }
}
const ensureSystem = fileURLToPath(new URL("../scripts/ensure-system.mjs", import.meta.url));
const system = spawnSync(process.execPath, [ensureSystem, "--bench"], { stdio: "inherit" });
if (system.status !== 0) {
  console.error(`bench: the system check (node scripts/ensure-system.mjs --bench) failed${system.error ? `: ${system.error.message}` : ""}; nothing was run`);
  process.exit(1);
}

let failed = false;

for (const name of selected) {
  const label = resultName(name, provider);
  console.log(`\n=== bench ${label} ===`);
  const started = Date.now();
  try {
    const mod = modules.get(name) ?? (await load(name));
    const result = provider === undefined ? await mod.default() : await mod.default({ provider });
    const file = writeResult(label, result);
    printTable(result);
    console.log(`wrote ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (err) {
    failed = true;
    console.error(`bench ${name} failed:`, err);
  }
  const left = tracked();
  if (left.length) {
    failed = true;
    console.error(`bench ${name} left running: ${left.join(", ")}; stopping them`);
    await stopAll();
  }
}
process.exit(failed ? 1 : 0);
