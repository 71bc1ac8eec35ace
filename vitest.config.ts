import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Playwright specs live in test/browser and end in .spec.ts; keep them out.
    // `npm run test:unit` runs test/unit in parallel, then test/backend one file
    // at a time: each backend file starts its own reference backend (flite WASI,
    // pocketsphinx through koffi). Lost worker processes, seen before the fix of
    // the decoders' log-file race (demo/server/pocketsphinx.mjs), are guarded by
    // scripts/test-backend.mjs: one re-run on that crash alone (never on a failed
    // assertion), announced.
    include: ["test/unit/**/*.test.ts", "test/backend/**/*.test.ts"],
    environment: "node",
    // Node 20 has the browser WebSocket only behind a flag; providers use it as in a page.
    pool: "forks",
    execArgv: ["--experimental-websocket"],
    testTimeout: 30_000,
  },
});
