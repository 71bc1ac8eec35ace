// `npm run build`: rollup bundles, then tsc emits the .d.ts files, then the React demo's bundle.
import { execFileSync } from "node:child_process";
import { buildReactDemo } from "./react-pages.mjs";

// dist/ is overwritten in place, not deleted first: pages being served from it
// (a running demo, another test run) keep working while it rebuilds.
const run = (cmd, args) => execFileSync(cmd, args, { stdio: "inherit" });
run(process.execPath, ["node_modules/rollup/dist/bin/rollup", "-c", "--silent"]);
run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]);
// demo/react.html's app (demo/react/build/, gitignored): React from node_modules, the SDK from /dist/.
await buildReactDemo();
