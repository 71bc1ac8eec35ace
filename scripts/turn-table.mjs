// `node scripts/turn-table.mjs`: docs/turn-machine.md, the turn machine read state by state, generated from
// the machine (test/lib/turn-table.ts). `--check` writes nothing and exits 1 when the committed page differs;
// test/unit/turn-table.test.ts checks the same, row by row. Bundles the TypeScript with esbuild (no tsx needed).
import { build } from "esbuild";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const doc = join(root, "docs", "turn-machine.md");
const dir = mkdtempSync(join(tmpdir(), "turn-table-"));
try {
  const outfile = join(dir, "turn-table.mjs");
  await build({ entryPoints: [join(root, "test", "lib", "turn-table.ts")], bundle: true, format: "esm", platform: "node", outfile, logLevel: "warning" });
  const { renderTurnTable } = await import(pathToFileURL(outfile).href);
  const text = renderTurnTable();
  if (process.argv.includes("--check")) {
    let committed = "";
    try {
      committed = readFileSync(doc, "utf8");
    } catch {}
    if (committed !== text) {
      console.error("docs/turn-machine.md differs from the machine: run node scripts/turn-table.mjs");
      process.exitCode = 1;
    }
  } else {
    writeFileSync(doc, text);
    console.log(`wrote ${doc}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
