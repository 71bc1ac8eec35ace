// `npm run bench` runs every bench/*.bench.mjs; `npm run bench -- NAME [NAME…]`
// runs those only. Each benchmark's default export returns a plain object,
// written to bench/results/NAME.json and printed as a short table.
import { readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { printTable, writeResult } from "./lib/results.mjs";

const available = readdirSync(new URL(".", import.meta.url))
  .filter((f) => f.endsWith(".bench.mjs"))
  .map((f) => f.replace(/\.bench\.mjs$/, ""))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !available.includes(n));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; available: ${available.join(", ")}`);
  process.exit(2);
}
let failed = false;
for (const name of wanted.length ? wanted : available) {
  console.log(`\n=== bench ${name} ===`);
  const started = Date.now();
  try {
    const mod = await import(pathToFileURL(new URL(`./${name}.bench.mjs`, import.meta.url).pathname).href);
    const result = await mod.default();
    const file = writeResult(name, result);
    printTable(result);
    console.log(`wrote ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (err) {
    failed = true;
    console.error(`bench ${name} failed:`, err);
  }
}
process.exit(failed ? 1 : 0);
