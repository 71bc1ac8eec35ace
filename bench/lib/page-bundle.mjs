// A peer's npm package, bundled with rollup at bench time into a page's
// vendor/ folder, as an app's bundler would ship it; removed after the run
// (the page's worklet and module fetches are not interceptable by page.route).
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { rollup } from "rollup";
import commonjs from "@rollup/plugin-commonjs";
import { nodeResolve } from "@rollup/plugin-node-resolve";

/** Bundles `entry` for the browser as one ES module; returns its code. @param {string} entry */
export async function bundleForPage(entry) {
  const bundle = await rollup({ input: entry, plugins: [nodeResolve({ browser: true, preferBuiltins: false }), commonjs()], onwarn: () => {} });
  try {
    const { output } = await bundle.generate({ format: "es", inlineDynamicImports: true });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

/**
 * Writes `files` (name → code, or name → a path to copy) into `dir`; returns the function that removes it.
 * @param {URL} dir @param {Record<string, { code?: string, copy?: string }>} files
 */
export function writeVendor(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, f] of Object.entries(files)) {
    if (f.code !== undefined) writeFileSync(new URL(name, dir), f.code);
    else if (f.copy) copyFileSync(f.copy, new URL(name, dir));
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
