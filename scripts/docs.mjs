// `npm run docs`: the API reference, generated from the types, into docs/reference/ (Markdown,
// committed so it reads on GitHub), and the same as JSON into .cache/reference/api.json for
// scripts/doc-drift.mjs. TypeDoc needs TypeScript's JS compiler API, which the root's TypeScript 7
// does not have, so it runs from its own install in tools/reference (installed here when its
// lockfile changed or it is missing).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tools = `${root}tools/reference`;
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The public entry points: one per package export with types (bargein/advanced only once it exists). */
const ENTRIES = ["src/index.ts", "src/testing/index.ts", "src/react/index.ts", "src/advanced.ts"].filter((f) => existsSync(`${root}${f}`));
export const API_JSON = `${root}.cache/reference/api.json`;

const lockHash = createHash("sha256").update(readFileSync(`${tools}/package-lock.json`)).digest("hex");
const stamp = `${tools}/node_modules/.lock-hash`;
if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== lockHash) {
  run(npm, ["ci", "--prefix", tools, "--no-audit", "--no-fund", "--loglevel=error"]);
  writeFileSync(stamp, lockHash);
}

rmSync(`${root}docs/reference`, { recursive: true, force: true });
run(process.execPath, [
  `${tools}/node_modules/typedoc/bin/typedoc`,
  "--options", `${tools}/typedoc.json`,
  "--out", `${root}docs/reference`,
  "--json", API_JSON,
  ...ENTRIES.flatMap((e) => ["--entryPoints", `${root}${e}`]),
]);

function run(command, args) {
  const r = spawnSync(command, args, { stdio: "inherit", cwd: root });
  if (r.status !== 0) {
    console.error(`docs: ${command} ${args[0]} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
}
