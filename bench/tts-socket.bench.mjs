// `npm run bench -- tts-socket`: what the shared TTS socket saves after a
// barge-in (issue 38). For ElevenLabs and Cartesia, on the reference
// backend's emulators, each trial speaks a long reply, cuts it after its
// second audio chunk (the barge-in: the stream's close), and starts the next
// reply at once, as the session does: the cut reply's close first, then the
// next reply's stream, its words and its end. Two ways per provider:
// - shared: the provider's session(), one socket for every reply (a barge-in
//   cancels the cut reply's context; the next reply is a new context on it);
// - perReply: the provider's connect(), a socket per reply (what every reply
//   did before session()): the cut reply's socket is closed, a new one opened.
// Per row: bargeInToFirstAudioMs {p50, p95} (the cut → the next reply's first
// audio byte), and its parts closeMs (the cut reply's close) and
// connectMs (the next reply's stream ready); sockets: the sockets the
// emulator saw opened over the row.
// Note: loopback, no TLS: a hosted service's handshake (TCP, TLS, the
// upgrade, the token check) costs far more than here, so the saving here is a
// lower bound. The client runs in Node (the providers bundled with esbuild,
// the `ws` package as the WebSocket), not in a page.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { WebSocket } from "ws";
import { withBench } from "./lib/with-bench.mjs";
import { quantile } from "./lib/results.mjs";

const PORT = 8862;
const TRIALS = 10;
const LONG = "Well, let me tell you the whole story from the start, because it is a long one, and every part of it matters to the end.";
const NEXT = "Of course, go ahead.";

const round = (x) => Math.round(x * 10) / 10;
const p50p95 = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

/** The two providers from the sources, as an app's bundler would ship them. */
async function loadProviders() {
  const dir = mkdtempSync(join(tmpdir(), "bargein-tts-socket-"));
  try {
    const out = join(dir, "providers.mjs");
    await build({
      stdin: { contents: 'export { elevenlabsTts } from "./src/providers/elevenlabs-tts.ts"; export { cartesiaTts } from "./src/providers/cartesia-tts.ts";', resolveDir: process.cwd(), loader: "ts" },
      bundle: true,
      format: "esm",
      platform: "node",
      outfile: out,
      logLevel: "error",
    });
    return await import(pathToFileURL(out).href);
  } finally {
    // The module is loaded: the file is no longer needed.
    setTimeout(() => rmSync(dir, { recursive: true, force: true }), 0);
  }
}

/** The first audio event of `stream`, then the iterator, still open. */
async function firstAudio(iterator) {
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error("the stream ended before any audio");
    if (next.value.kind === "audio") return;
  }
}

/** One trial: the long reply, cut after 2 chunks; then the next reply, timed from the cut. */
async function trial(open) {
  const cut = await open();
  for (const w of LONG.split(" ")) cut.sendText(w);
  cut.end();
  const events = cut.events()[Symbol.asyncIterator]();
  await firstAudio(events);
  await firstAudio(events);
  const t0 = performance.now();
  await cut.close();
  const closed = performance.now();
  const next = await open();
  const connected = performance.now();
  for (const w of NEXT.split(" ")) next.sendText(w);
  next.end();
  const iterator = next.events()[Symbol.asyncIterator]();
  await firstAudio(iterator);
  const firstByte = performance.now();
  // Drain the next reply to its end, so the trial after it starts on a quiet socket.
  for (let e = await iterator.next(); !e.done; e = await iterator.next());
  return { closeMs: closed - t0, connectMs: connected - closed, bargeInToFirstAudioMs: firstByte - t0 };
}

export default () =>
  withBench({ port: PORT, browser: false }, async ({ server, step }) => {
    globalThis.WebSocket ??= WebSocket;
    const { elevenlabsTts, cartesiaTts } = await step("bundle the providers", loadProviders);
    const url = `ws://127.0.0.1:${server.port}/?pace=1`;
    const make = { elevenlabs: () => elevenlabsTts({ voiceId: "slt", url }), cartesia: () => cartesiaTts({ voiceId: "slt", url }) };
    const opened = async () => (await (await fetch(`${server.base}/__stats`)).json()).tts.opened;
    const result = { trials: TRIALS };
    for (const [name, provider] of Object.entries(make)) {
      result[name] = {};
      for (const mode of ["shared", "perReply"]) {
        const before = await opened();
        const rows = await step(`${name} ${mode}`, async () => {
          const p = provider();
          const session = mode === "shared" ? p.session() : undefined;
          const open = () => (session ? session.connect() : p.connect());
          const out = [];
          try {
            for (let i = 0; i < TRIALS; i++) out.push(await trial(open));
          } finally {
            await session?.close();
          }
          return out;
        }, { timeoutMs: 300_000 });
        result[name][mode] = {
          bargeInToFirstAudioMs: p50p95(rows.map((r) => r.bargeInToFirstAudioMs)),
          closeMs: p50p95(rows.map((r) => r.closeMs)),
          connectMs: p50p95(rows.map((r) => r.connectMs)),
          sockets: (await opened()) - before,
        };
      }
      const saved = result[name].perReply.bargeInToFirstAudioMs.p50 - result[name].shared.bargeInToFirstAudioMs.p50;
      result[name].savedP50Ms = round(saved);
    }
    return result;
  });
