// Pre-compresses what a page fetches from dist/ (the bundles, the worklets, the VAD worker, the
// Silero models and onnxruntime's wasm) into FILE.br and FILE.gz beside each file, with Node's
// zlib, so that a static server sends the small copy without compressing on every request
// (demo/server/static.mjs; nginx's `gzip_static`/`brotli_static` read the same names).
//
// Brotli at quality 9, not 11: on onnxruntime's wasm, 11 took over twenty times as long for a
// sixth fewer bytes, too slow for every fresh clone's build (the bytes sent are in
// bench/results/coldstart.json); a site that builds once can afford 11
// (docs/guides/bundlers-and-csp.md). A copy is rewritten only when its source's content changed
// (hashes in dist/.precompressed.json), so a rebuild costs the changed bundles only. A copy kept
// is touched, so it is never older than its source: the server takes an older copy for stale.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** Names in dist/ worth sending compressed: what a page loads (source maps only with the devtools open). */
export const PRECOMPRESSED = /\.(js|mjs|wasm|onnx)$/;
const MANIFEST = ".precompressed.json";

/** The encodings written, by file suffix, and how. */
export const ENCODINGS = {
  br: (bytes) =>
    brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }),
  gz: (bytes) => gzipSync(bytes, { level: 9 }),
};

/**
 * Writes FILE.br and FILE.gz for every file in `dir` whose name matches `pattern`.
 * Returns one row per file: its size and its compressed sizes, in bytes.
 * @param {string} dir
 * @param {RegExp} [pattern]
 * @returns {{ file: string, bytes: number, br: number, gz: number, rewritten: boolean }[]}
 */
export function precompress(dir, pattern = PRECOMPRESSED) {
  const manifestPath = join(dir, MANIFEST);
  /** @type {Record<string, string>} */
  const seen = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, "utf8")) : {};
  const rows = [];
  for (const file of readdirSync(dir).filter((f) => pattern.test(f)).sort()) {
    const bytes = readFileSync(join(dir, file));
    const hash = createHash("sha256").update(bytes).digest("hex");
    const current = seen[file] === hash && Object.keys(ENCODINGS).every((ext) => existsSync(join(dir, `${file}.${ext}`)));
    const sizes = {};
    for (const [ext, compress] of Object.entries(ENCODINGS)) {
      const target = join(dir, `${file}.${ext}`);
      if (current) utimesSync(target, new Date(), new Date());
      else writeFileSync(target, compress(bytes));
      sizes[ext] = readFileSync(target).length;
    }
    seen[file] = hash;
    rows.push({ file, bytes: bytes.length, br: sizes.br, gz: sizes.gz, rewritten: !current });
  }
  writeFileSync(manifestPath, `${JSON.stringify(seen, null, 2)}\n`);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of precompress(process.argv[2] ?? "dist")) console.log(`${r.file}: ${r.bytes} B, br ${r.br} B, gzip ${r.gz} B${r.rewritten ? "" : " (unchanged)"}`);
}
