// The reference backend as a library: one HTTP server on loopback that serves the
// demo and test pages (static.mjs) and the reference services:
//   WS   /api/asr-streaming                 STT (stt.mjs, pocketsphinx)
//   WS   /api/tts_streaming                 TTS (tts.mjs, flite)
//   POST /v1/chat/completions               LLM over SSE (llm.mjs, scripted ELIZA)
//   WS   /v1/responses                      LLM over a WebSocket
//   WS   /v3/ws                             AssemblyAI Universal-Streaming emulator (emulators/assemblyai.mjs)
//   WS   /v1/text-to-speech/{voice}/multi-stream-input  ElevenLabs TTS (emulators/elevenlabs.mjs, flite)
//   WS   /tts/websocket                     Cartesia TTS (emulators/cartesia.mjs, flite)
//   GET  /__stats                           counters (stats.mjs) as JSON
//   GET  /api/health                        which services are real here
//   GET  /api/token                         a token for the page's token functions
// Used by main.mjs (`npm run demo`), the backend tests, browser tests and benchmarks.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { WebSocketServer } from "ws";
import { createStaticHandler } from "./static.mjs";
import { createStats } from "./stats.mjs";
import { isAuthorized, parseKnobs } from "./knobs.mjs";
import { DecoderPool, recogniserAvailable, recogniserUnavailableReason } from "./pocketsphinx.mjs";
import { installCommand } from "./speech-deps.mjs";
import { createSttService } from "./stt.mjs";
import { createTtsService } from "./tts.mjs";
import { createLlmService } from "./llm.mjs";
import { createAssemblyAiService } from "./emulators/assemblyai.mjs";
import { ELEVENLABS_PATH, createElevenlabsEmulator } from "./emulators/elevenlabs.mjs";
import { CARTESIA_PATH, createCartesiaEmulator } from "./emulators/cartesia.mjs";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * @typedef {object} BackendOptions
 * @property {number} [port]    0 (default) picks a free port
 * @property {string} [host]    default 127.0.0.1
 * @property {string} [token]   when set, `auth_id` (or `Authorization: Bearer`) must match
 * @property {{ stt?: import("./knobs.mjs").Knobs, tts?: import("./knobs.mjs").Knobs, llm?: import("./knobs.mjs").Knobs }} [defaults]
 *   knob defaults per service; query parameters override them per request
 * @property {boolean} [serveStatic]  serve dist/, demo/, test/, bench/ (default true)
 * @property {boolean} [prewarm]      load one recogniser at start-up (default true)
 * @property {boolean} [recogniser]   false: run as if pocketsphinx were not installed (for the typed-input path)
 */

/**
 * @param {BackendOptions} [options]
 */
export async function startReferenceBackend(options = {}) {
  const host = options.host ?? "127.0.0.1";
  const token = options.token || undefined;
  const defaults = options.defaults ?? {};
  const stats = createStats();
  const pool = new DecoderPool();
  const install = installCommand();
  const hasRecogniser = options.recogniser === false ? false : await recogniserAvailable();
  const stt = createSttService({ stats, pool: hasRecogniser ? pool : null, install });
  const tts = createTtsService({ stats });
  const llm = createLlmService({ stats });
  const serveStatic = options.serveStatic === false ? () => false : createStaticHandler(REPO_ROOT);
  if (hasRecogniser && options.prewarm !== false) await pool.prewarm();

  const health = () => ({
    stt: {
      recogniser: hasRecogniser,
      reason: hasRecogniser ? null : (recogniserUnavailableReason() ?? "disabled by the recogniser:false option"),
      install: hasRecogniser ? null : install,
    },
    tts: { synthesiser: "flite", voices: ["slt", "rms"] },
    llm: { model: "bargein-eliza", languageModel: false },
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/__stats" && req.method === "GET") {
      return sendJson(res, 200, stats.snapshot());
    }
    if (url.pathname === "/api/health" && req.method === "GET") {
      return sendJson(res, 200, health());
    }
    // The page's token function calls this. A real app's server would check
    // the user's session and mint a short-lived token for the speech services;
    // the secret itself never reaches the page's source.
    if (url.pathname === "/api/token" && req.method === "GET") {
      return sendJson(res, 200, { token: token ?? "", expiresInS: 300 });
    }
    if (url.pathname === "/v1/chat/completions") {
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "Access-Control-Allow-Origin": "*",
          "Access-Control-Allow-Methods": "POST, OPTIONS",
          "Access-Control-Allow-Headers": "Authorization, Content-Type",
        });
        return res.end();
      }
      if (req.method !== "POST") return sendJson(res, 405, { error: { message: "use POST" } });
      if (!isAuthorized(req, url, token)) {
        stats.add("http", "unauthorized");
        return sendJson(res, 401, { error: { message: "missing or wrong bearer token", type: "unauthorized" } });
      }
      llm.handleChat(req, res, parseKnobs(url.searchParams, defaults.llm)).catch((err) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(err?.message ?? err) } });
        else res.destroy();
      });
      return;
    }
    if (serveStatic(req, res)) return;
    res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(`not found: ${req.url}\n`);
  });

  const wss = new WebSocketServer({ noServer: true });
  // A `*` in a route's path matches one path segment (a voice id). An emulator checks the
  // token the way its service does: before the upgrade (`authorize`, refused with HTTP 401),
  // or itself after it (`checksToken`); the others take `isAuthorized`'s ways.
  /** @type {Record<string, { handle: (ws: import("ws").WebSocket, knobs: any, url: URL, req: import("node:http").IncomingMessage) => unknown, knobs?: import("./knobs.mjs").Knobs, checksToken?: boolean, authorize?: typeof isAuthorized }>} */
  const routes = {
    "/api/asr-streaming": { handle: stt, knobs: defaults.stt },
    "/api/tts_streaming": { handle: tts, knobs: defaults.tts },
    "/v1/responses": { handle: llm.handleResponses, knobs: defaults.llm },
    "/v3/ws": { handle: createAssemblyAiService({ stats, pool: hasRecogniser ? pool : null, token }), knobs: defaults.stt, checksToken: true },
    [ELEVENLABS_PATH]: { ...createElevenlabsEmulator({ stats }), knobs: defaults.tts },
    [CARTESIA_PATH]: { ...createCartesiaEmulator({ stats }), knobs: defaults.tts },
  };
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = findRoute(routes, url.pathname);
    if (!route) return refuseUpgrade(socket, 404, "Not Found");
    if (!route.checksToken && !(route.authorize ?? isAuthorized)(req, url, token)) {
      stats.add("http", "unauthorized");
      return refuseUpgrade(socket, 401, "Unauthorized");
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      Promise.resolve(route.handle(ws, parseKnobs(url.searchParams, route.knobs), url, req)).catch((err) => {
        console.error(`reference backend: ${url.pathname} failed:`, err);
        ws.terminate();
      });
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const port = address.port;

  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    port,
    stats: stats.snapshot,
    events: stats.events,
    health,
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      pool.close();
    },
  };
}

/** @typedef {Awaited<ReturnType<typeof startReferenceBackend>>} ReferenceBackend */

/**
 * The route for a path: an exact match, else one whose `*` segments match any one segment.
 * @template T @param {Record<string, T>} routes @param {string} pathname @returns {T | undefined}
 */
function findRoute(routes, pathname) {
  if (routes[pathname]) return routes[pathname];
  const segments = pathname.split("/");
  for (const [path, route] of Object.entries(routes)) {
    const pattern = path.split("/");
    if (pattern.length === segments.length && pattern.every((p, i) => p === segments[i] || (p === "*" && segments[i] !== ""))) return route;
  }
  return undefined;
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {unknown} body */
function sendJson(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
}

/** @param {import("node:stream").Duplex} socket @param {number} status @param {string} text */
function refuseUpgrade(socket, status, text) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`);
}
