import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Playwright specs live in test/browser and end in .spec.ts; keep them out.
    // `npm run test:unit` runs test/unit, test/bench and test/demo-server (the unit tests of the
    // bench code and of the reference backend's pure cores) in parallel; `npm test` then runs
    // test/backend two files at a time (scripts/test-backend.mjs): each backend file starts its own
    // reference backend (flite WASI, pocketsphinx through koffi). A lost worker
    // process fails the run, named as such; there is no re-run (the two causes
    // found are fixed: docs/post-mortems.md).
    include: ["test/unit/**/*.test.ts", "test/bench/**/*.test.ts", "test/demo-server/**/*.test.ts", "test/backend/**/*.test.ts", "test/contract/**/*.test.ts"],
    environment: "node",
    // Node 20 has the browser WebSocket only behind a flag; providers use it as in a page.
    pool: "forks",
    // --no-turbo-fast-api-calls: V8's fast API calls into Node 20's WASI (flite) crash the process
    // under GC pressure: a vitest worker running ElevenLabs streams at pace=0 died with SIGSEGV on
    // the third stream, every time (test/unit/providers-tts-session.test.ts never ran); with the
    // flag it passes. Likely the cause of the earlier "Worker exited unexpectedly" deaths too.
    // test/backend/worker-flags.test.ts checks that the flag reaches the workers.
    execArgv: ["--experimental-websocket", "--no-turbo-fast-api-calls"],
    testTimeout: 30_000,
    // Every reference backend a test starts hears the speech fixtures deterministically: their words
    // are the ones pocketsphinx heard in them on a quiet machine (demo/server/known-speech.mjs). A test
    // of real recognition asks for pocketsphinx alone with the knob known_speech=0.
    env: { BARGEIN_KNOWN_SPEECH: "test/fixtures/speech" },
  },
});
