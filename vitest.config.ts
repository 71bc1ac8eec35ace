import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Playwright specs live in test/browser and end in .spec.ts; keep them out.
    include: ["test/unit/**/*.test.ts", "test/backend/**/*.test.ts"],
    environment: "node",
    // Node 20 has the browser WebSocket only behind a flag; providers use it as in a page.
    pool: "forks",
    execArgv: ["--experimental-websocket"],
    testTimeout: 30_000,
  },
});
