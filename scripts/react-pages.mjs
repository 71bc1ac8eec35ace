// Bundles a page that uses bargein/react, as an app's bundler would: React and
// react-dom from node_modules, bargein/react from dist/react.js. The SDK itself
// is left out: `bargein` (and dist/react.js's own `./bargein.js`) stay imports
// of /dist/bargein.js, so the page and its other modules share one SDK.
// Used by `npm run build` (the React demo) and the browser tests (their pages).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST_REACT = fileURLToPath(new URL("../dist/react.js", import.meta.url));

const sdkFromDist = {
  name: "bargein-from-dist",
  setup(b) {
    b.onResolve({ filter: /^bargein$/ }, () => ({ path: "/dist/bargein.js", external: true }));
    b.onResolve({ filter: /^bargein\/react$/ }, () => ({ path: DIST_REACT }));
    b.onResolve({ filter: /^\.\/bargein\.js$/ }, (args) => (args.importer === DIST_REACT ? { path: "/dist/bargein.js", external: true } : undefined));
    // Pages' own modules import the SDK by its URL (test/browser/pages/session/reference-providers.js).
    b.onResolve({ filter: /^\/dist\// }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * `entry` and `outfile` relative to the repo. `mode`: React's build; "development"
 * has `act` and StrictMode's double mount.
 */
export async function buildReactPage({ entry, outfile, mode = "development" }) {
  await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: true,
    logLevel: "warning",
    define: { "process.env.NODE_ENV": JSON.stringify(mode) },
    plugins: [sdkFromDist],
  });
}

/** The React demo, demo/react.html (served by `npm run demo`). */
export const buildReactDemo = () => buildReactPage({ entry: "demo/react/app.js", outfile: "demo/react/build/app.js" });
