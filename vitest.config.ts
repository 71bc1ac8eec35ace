import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Playwright specs live in test/browser and end in .spec.ts; keep them out.
    // `npm run test:unit` runs test/unit in parallel, then test/backend one file
    // at a time: each backend file starts its own reference backend (flite WASI,
    // pocketsphinx through koffi), and files run side by side on this 2-core
    // machine intermittently lost their worker process. It still happens, rarely,
    // one file at a time: scripts/test-backend.mjs re-runs test/backend once on
    // that crash alone (never on a failed assertion) and says so.
    include: ["test/unit/**/*.test.ts", "test/backend/**/*.test.ts"],
    environment: "node",
    // Node 20 has the browser WebSocket only behind a flag; providers use it as in a page.
    pool: "forks",
    execArgv: ["--experimental-websocket"],
    testTimeout: 30_000,
  },
});
