/**
 * The root entry (`bargein`, src/index.ts) stays small: at most 70 names,
 * values and types together. The building blocks belong in `bargein/advanced`
 * (src/advanced.ts). The names are read from the files' export statements,
 * which list every name (no `export *`); the values found that way are checked
 * against what the module really exports, so the parse cannot miss one.
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import * as advanced from "../../src/advanced.js";
import * as root from "../../src/index.js";

const ROOT_LIMIT = 70;

interface ExportedNames {
  values: string[];
  types: string[];
  /** `export * from` / `export * as` statements, which hide their names. */
  stars: string[];
}

/** The names a module's source exports, by its export statements. */
function exportedNames(file: string): ExportedNames {
  const source = readFileSync(new URL(`../../src/${file}`, import.meta.url), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
  const names: ExportedNames = { values: [], types: [], stars: [] };
  for (const m of source.matchAll(/\bexport\s+\*[^;]*;/g)) names.stars.push(m[0]);
  for (const m of source.matchAll(/\bexport\s+(type\s+)?\{([^}]*)\}/g)) {
    const allTypes = m[1] !== undefined;
    for (const raw of m[2].split(",")) {
      const spec = raw.trim();
      if (spec === "") continue;
      const isType = allTypes || spec.startsWith("type ");
      const name = spec.replace(/^type\s+/, "").split(/\s+as\s+/).at(-1)!.trim();
      (isType ? names.types : names.values).push(name);
    }
  }
  for (const m of source.matchAll(/\bexport\s+(?:declare\s+)?(?:async\s+)?(const|let|var|function\*?|class|enum|interface|type)\s+([A-Za-z_$][\w$]*)/g)) {
    (m[1] === "interface" || m[1] === "type" ? names.types : names.values).push(m[2]);
  }
  return names;
}

test("bargein (src/index.ts) lists every name and exports at most 70, values and types together", () => {
  const names = exportedNames("index.ts");
  expect(names.stars, "export * hides names from this count: list them").toEqual([]);
  const all = [...names.values, ...names.types];
  expect(new Set(all).size, "a name listed twice").toBe(all.length);
  expect(names.values.sort()).toEqual(Object.keys(root).sort());
  expect(all.length, `${names.values.length} values + ${names.types.length} types`).toBeLessThanOrEqual(ROOT_LIMIT);
});

test("bargein/advanced (src/advanced.ts) lists every name and shares none with the root entry", () => {
  const names = exportedNames("advanced.ts");
  expect(names.stars).toEqual([]);
  expect(names.values.sort()).toEqual(Object.keys(advanced).sort());
  const rootNames = exportedNames("index.ts");
  const inRoot = new Set([...rootNames.values, ...rootNames.types]);
  expect([...names.values, ...names.types].filter((n) => inRoot.has(n))).toEqual([]);
});
