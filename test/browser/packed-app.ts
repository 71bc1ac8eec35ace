/**
 * A new user's app with bargein installed from its packed tarball, offline: `npm pack` of the repo as
 * built (no prepack rebuild: dist/ is what the suite tests), the tarball extracted into the app's
 * node_modules (bargein has no runtime dependencies to install), the repo's own vite linked in as the
 * app's devDependency, then strict `tsc` and a production `vite build`, as the app's own scripts would.
 * Shared by consumer-vite.spec.ts (test/consumer/vite-app) and quickstart.spec.ts (the README's).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");

export type Packed = { files: { path: string }[]; size: number; filename: string };

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** A temporary folder holding the packed tarball; `remove()` deletes it and every app made in it. */
export function packBargein(): { temp: string; packed: Packed; remove: () => void } {
  const temp = mkdtempSync(join(tmpdir(), "bargein-consumer-"));
  const packed: Packed = JSON.parse(run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", temp], REPO))[0];
  return { temp, packed, remove: () => rmSync(temp, { recursive: true, force: true }) };
}

/** Installs the tarball and vite into the app folder `app` (its own files already there). */
export function installPacked(app: string, temp: string, packed: Packed): void {
  const pkgDir = join(app, "node_modules/bargein");
  mkdirSync(pkgDir, { recursive: true });
  run("tar", ["-xzf", join(temp, packed.filename), "-C", pkgDir, "--strip-components=1"], temp);
  symlinkSync(realpathSync(join(REPO, "node_modules/vite")), join(app, "node_modules/vite"), "dir");
}

/** Strict TypeScript against the packed .d.ts files, then `vite build` into `out`, served under `base`. Returns vite's log. */
export function typecheckAndBuild(app: string, base: string, out: string): string {
  run(process.execPath, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], app);
  rmSync(out, { recursive: true, force: true });
  return run(process.execPath, [join(REPO, "node_modules/vite/bin/vite.js"), "build"], app, {
    NODE_ENV: "production",
    CONSUMER_BASE: base,
    CONSUMER_OUT: out,
  });
}
