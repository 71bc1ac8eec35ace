// `npm run size` (and `npm test`, after the build): the gzip size of each
// bundle, worklet and worker in dist/ against its budget in
// scripts/size-budget.json. Prints a table; exits 1 when a file is over its
// budget or missing. gzip -9 is what a CDN or a static host typically serves;
// the .wasm and .onnx files are fixed third-party binaries and not budgeted.
// The `app:` rows are what an app ships: dist/bargein.js bundled by esbuild
// (minified, tree-shaken) with only the names it imports. "app: A + B" is an
// app importing A and B from "bargein"; "app: + X" is the marginal cost of
// provider X over the base app (BASE).
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = new URL("../", import.meta.url);
const budgets = JSON.parse(readFileSync(new URL("scripts/size-budget.json", root), "utf8"));
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

const BASE = ["VoiceSession", "kyutaiStt", "kyutaiTts", "openaiChat"];

/** gzip bytes of an app that imports `names` from dist/bargein.js, as a bundler ships it (minified, tree-shaken). */
async function appBytes(names) {
  const result = await build({
    stdin: { contents: `import { ${names.join(", ")} } from "./dist/bargein.js"; globalThis.__app = [${names.join(", ")}];`, resolveDir: new URL(".", root).pathname, loader: "js" },
    bundle: true,
    minify: true,
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return gzipSync(result.outputFiles[0].contents, { level: 9 }).length;
}

const rows = [];
let failed = false;
const baseApp = Object.keys(budgets).some((k) => k.startsWith("app:")) ? await appBytes(BASE) : 0;
for (const [file, budget] of Object.entries(budgets)) {
  if (file.startsWith("//")) continue;
  if (file.startsWith("app:")) {
    // "app: + name" is that provider's marginal cost over the base app; "app: A + B" the app importing A and B.
    const extra = file.match(/^app: \+ (\w+)$/)?.[1];
    const names = file.slice("app:".length).split("+").map((n) => n.trim());
    const gz = extra ? (await appBytes([...BASE, extra])) - baseApp : names.join() === BASE.join() ? baseApp : await appBytes(names);
    const over = gz > budget;
    failed ||= over;
    rows.push([file, "-", kb(gz), kb(budget), `${(((budget - gz) / budget) * 100).toFixed(1)}%`, over ? "OVER BUDGET" : "ok"]);
    continue;
  }
  let bytes;
  try {
    bytes = readFileSync(new URL(`dist/${file}`, root));
  } catch {
    rows.push([file, "-", "-", kb(budget), "-", "MISSING (run npm run build)"]);
    failed = true;
    continue;
  }
  const gz = gzipSync(bytes, { level: 9 }).length;
  const over = gz > budget;
  failed ||= over;
  rows.push([file, kb(bytes.length), kb(gz), kb(budget), `${(((budget - gz) / budget) * 100).toFixed(1)}%`, over ? "OVER BUDGET" : "ok"]);
}

const header = ["file (dist/)", "raw", "gzip", "budget", "headroom", ""];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd();
console.log(line(header));
for (const row of rows) console.log(line(row));
if (failed) {
  console.error("size-check: a file is over its gzip budget (scripts/size-budget.json). Shrink it, or raise the budget in the same commit and say why.");
  process.exit(1);
}
