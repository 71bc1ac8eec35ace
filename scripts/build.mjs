// `npm run build`: rollup bundles, then tsc emits the .d.ts files, then the pre-compressed copies
// (scripts/precompress.mjs), then the React demo's bundle.
import { execFileSync } from "node:child_process";
import { buildReactDemo } from "./react-pages.mjs";
import { precompress } from "./precompress.mjs";

// dist/ is overwritten in place, not deleted first: pages being served from it
// (a running demo, another test run) keep working while it rebuilds.
const run = (cmd, args) => execFileSync(cmd, args, { stdio: "inherit" });
run(process.execPath, ["node_modules/rollup/dist/bin/rollup", "-c", "--silent"]);
run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]);
// FILE.br and FILE.gz beside what a page fetches from dist/, for servers that send them as they are.
precompress("dist");
// demo/react.html's app (demo/react/build/, gitignored): React from node_modules, the SDK from /dist/.
await buildReactDemo();
