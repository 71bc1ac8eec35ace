// The reference backend as a library: one HTTP server on loopback that serves the
// demo and test pages (static.mjs) and the service emulators, one file each in
// emulators/ (the protocol only; the shared parts are recogniser.mjs, synthesiser.mjs,
// eliza.mjs, knobs.mjs, socket-faults.mjs, stream-gate.mjs and the pure cores in core/):
//   WS   /api/asr-streaming                 Kyutai STT (emulators/kyutai-stt.mjs, pocketsphinx)
//   WS   /api/tts_streaming                 Kyutai TTS (emulators/kyutai-tts.mjs, flite)
//   POST /v1/chat/completions               LLM over SSE (emulators/openai-llm.mjs, scripted ELIZA)
//   WS   /v1/responses                      LLM over a WebSocket
//   WS   /v1/listen, /v2/listen             Deepgram Nova and Flux (emulators/deepgram.mjs, pocketsphinx)
//   POST /v1/auth/grant                     Deepgram's short-lived token (emulators/service-tokens.mjs, as the next three)
//   WS   /v3/ws                             AssemblyAI Universal-Streaming (emulators/assemblyai.mjs, pocketsphinx)
//   GET  /v3/token                          AssemblyAI's temporary token (one session)
//   WS   /v1/text-to-speech/{voice}/multi-stream-input  ElevenLabs TTS (emulators/elevenlabs.mjs, flite)
//   POST /v1/single-use-token/{token_type}  ElevenLabs' single-use token
//   WS   /tts/websocket                     Cartesia TTS (emulators/cartesia.mjs, flite)
//   POST /access-token                      Cartesia's access token (grants)
//   WS   /v1/realtime?model=…               OpenAI Realtime, GA (emulators/openai-realtime.mjs: pocketsphinx, ELIZA, flite)
//   POST /v1/realtime/client_secrets        OpenAI Realtime's ephemeral key (ek_…, expires_at)
//   GET  /__realtime/log                    what the Realtime emulator got per socket (truncates, responses)
//   WS   /ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=…
//        (and v1alpha …BidiGenerateContentConstrained?access_token=…)  Gemini Live (emulators/gemini-live.mjs)
//   POST /v1alpha/auth_tokens               Gemini Live's ephemeral token (auth_tokens/…, uses, expireTime)
//   GET  /__gemini/log                      what the Gemini Live emulator got per socket (model turns' input, clientContent)
//   GET  /__stats                           counters (stats.mjs) as JSON
//   GET  /api/health                        which services are real here
//   GET  /api/token                         the backend's token for the page's token functions (Kyutai, the LLM);
//        /api/token?service=NAME            a short-lived token of that service (deepgram, assemblyai, elevenlabs,
//                                           cartesia, openai-realtime, gemini-live), minted by its emulator's own mint code, never the key
// Used by main.mjs (`npm run demo`), the backend tests, browser tests and benchmarks.
//
// A new emulator is one file exporting a factory (EmulatorDeps → Emulator) and one entry
// in EMULATORS below.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { WebSocketServer } from "ws";
import { createStaticHandler } from "./static.mjs";
import { createStats } from "./stats.mjs";
import { isAuthorized, parseKnobs } from "./knobs.mjs";
import { sendJson } from "./http-json.mjs";
import { DecoderPool, recogniserAvailable, recogniserUnavailableReason } from "./pocketsphinx.mjs";
import { knownSpeechPool, loadKnownSpeech } from "./known-speech.mjs";
import { installCommand } from "./speech-deps.mjs";
import { kyutaiSttEmulator } from "./emulators/kyutai-stt.mjs";
import { kyutaiTtsEmulator } from "./emulators/kyutai-tts.mjs";
import { openaiLlmEmulator } from "./emulators/openai-llm.mjs";
import { deepgramEmulator } from "./emulators/deepgram.mjs";
import { createAssemblyAiService } from "./emulators/assemblyai.mjs";
import { ELEVENLABS_PATH, createElevenlabsEmulator } from "./emulators/elevenlabs.mjs";
import { CARTESIA_PATH, createCartesiaEmulator } from "./emulators/cartesia.mjs";
import { openaiRealtimeEmulator } from "./emulators/openai-realtime.mjs";
import { geminiLiveEmulator } from "./emulators/gemini-live.mjs";
import { assemblyaiTokens, cartesiaTokens, elevenlabsTokens } from "./emulators/service-tokens.mjs";

/** @param {EmulatorDeps} deps @returns {Emulator} AssemblyAI checks the token itself, after the upgrade (close 1008), as the service does. */
const assemblyaiEmulator = ({ stats, pool, token }) => {
  const tokens = assemblyaiTokens({ stats, key: token });
  return {
    name: "assemblyai",
    knobsFrom: "stt",
    sockets: { "/v3/ws": createAssemblyAiService({ stats, pool, credentials: tokens.checkSocket }) },
    http: tokens.http,
    authorize: () => true,
    mintForPage: tokens.forPage,
  };
};
/** @param {EmulatorDeps} deps @returns {Emulator} */
const elevenlabsEmulator = ({ stats, token }) => {
  const tokens = elevenlabsTokens({ stats, key: token });
  const { handle } = createElevenlabsEmulator({ stats });
  return { name: "elevenlabs", knobsFrom: "tts", sockets: { [ELEVENLABS_PATH]: handle }, http: tokens.http, authorize: tokens.authorize, mintForPage: tokens.forPage };
};
/** @param {EmulatorDeps} deps @returns {Emulator} */
const cartesiaEmulator = ({ stats, token }) => {
  const tokens = cartesiaTokens({ stats, key: token });
  const { handle } = createCartesiaEmulator({ stats });
  return { name: "cartesia", knobsFrom: "tts", sockets: { [CARTESIA_PATH]: handle }, http: tokens.http, authorize: tokens.authorize, mintForPage: tokens.forPage };
};

/** Every emulator the backend runs; each contributes its routes and its part of /api/health. */
const EMULATORS = [kyutaiSttEmulator, kyutaiTtsEmulator, openaiLlmEmulator, deepgramEmulator, assemblyaiEmulator, elevenlabsEmulator, cartesiaEmulator, openaiRealtimeEmulator, geminiLiveEmulator];

/** The header that carries BackendOptions.instance. */
export const INSTANCE_HEADER = "X-Bargein-Instance";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * What an emulator is given.
 * @typedef {object} EmulatorDeps
 * @property {import("./stats.mjs").Stats} stats
 * @property {DecoderPool | null} pool     null when there is no recogniser
 * @property {string} install              the apt-get line that installs the recogniser
 * @property {string | null} recogniserMissingReason
 * @property {string | undefined} token    the backend's token (the API key, for services that mint their own)
 */

/**
 * One service's protocol. `sockets` and `http` map paths to handlers; the backend parses
 * the knobs (query parameters over `defaults[name]`). WebSocket upgrades are checked by
 * `authorize` (default: knobs.mjs `isAuthorized`) before `sockets` sees them; `http`
 * handlers check auth themselves, as each service answers differently.
 * @typedef {object} Emulator
 * @property {string} name  the counter group, `defaults` key and /api/health key
 * @property {string} [knobsFrom]  the `defaults` key to read instead of `name` (an emulator of a
 *   hosted STT or TTS takes the reference stt/tts defaults)
 * @property {Record<string, (ws: import("ws").WebSocket, knobs: import("./knobs.mjs").Knobs, url: URL, req: import("node:http").IncomingMessage) => unknown>} [sockets]
 * @property {Record<string, (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, url: URL, knobs: import("./knobs.mjs").Knobs) => unknown>} [http]
 * @property {(req: import("node:http").IncomingMessage, url: URL, token: string | undefined) => boolean} [authorize]
 * @property {(url: URL, knobs: import("./knobs.mjs").Knobs) => Promise<{ status: number, text: string } | null>} [beforeUpgrade]
 *   runs after `authorize` and before the upgrade: a service that refuses or delays its handshake
 *   (an HTTP 429 at capacity, a slow start) does it here; a non-null answer refuses the upgrade
 * @property {() => unknown} [health]
 * @property {() => { token: string, expiresInS: number }} [mintForPage]
 *   a short-lived token of this service, by the same code as its mint endpoint, for GET /api/token?service=…
 */

/**
 * @typedef {object} BackendOptions
 * @property {number} [port]    0 (default) picks a free port
 * @property {string} [host]    default 127.0.0.1
 * @property {string} [token]   when set, `auth_id` (or `Authorization: Bearer`) must match
 * @property {Record<string, import("./knobs.mjs").Knobs>} [defaults]
 *   knob defaults per service (stt, tts, llm, …); query parameters override them per request
 * @property {boolean} [serveStatic]  serve dist/, demo/, test/, bench/ (default true)
 * @property {boolean} [precompressed] send a file's pre-compressed copy (FILE.br, FILE.gz) to a browser
 *   that accepts it (default true; false: every file as it is)
 * @property {boolean} [prewarm]      load one recogniser at start-up (default true)
 * @property {boolean} [recogniser]   false: run as if pocketsphinx were not installed (for the typed-input path)
 * @property {string} [knownSpeech]  a folder of test fixtures whose words the STTs give exactly when an
 *   utterance matches one (the deterministic recogniser for tests: known-speech.mjs); a stream with
 *   the knob `known_speech=0` hears with pocketsphinx alone. Default: the BARGEIN_KNOWN_SPEECH
 *   environment variable, which the test runners set (vitest.config.ts, playwright.config.ts)
 * @property {string} [instance]   sent back as the X-Bargein-Instance header on every HTTP answer, so
 *   whoever spawned this backend can tell it from a stale one still holding the port (bench/lib/browser.mjs)
 */

/**
 * @param {BackendOptions} [options]
 */
export async function startReferenceBackend(options = {}) {
  const host = options.host ?? "127.0.0.1";
  const token = options.token || undefined;
  const defaults = options.defaults ?? {};
  const stats = createStats();
  const realPool = new DecoderPool();
  const knownSpeech = options.knownSpeech ?? (process.env.BARGEIN_KNOWN_SPEECH || undefined);
  const pool = knownSpeech ? knownSpeechPool(realPool, loadKnownSpeech(knownSpeech)) : realPool;
  const install = installCommand();
  const hasRecogniser = options.recogniser === false ? false : await recogniserAvailable();
  /** @type {EmulatorDeps} */
  const deps = {
    stats,
    pool: hasRecogniser ? pool : null,
    install,
    recogniserMissingReason: hasRecogniser ? null : (recogniserUnavailableReason() ?? "disabled by the recogniser:false option"),
    token,
  };
  const emulators = EMULATORS.map((create) => create(deps));
  /** @type {Map<string, { emulator: Emulator, handle: NonNullable<Emulator["sockets"]>[string] }>} */
  const socketRoutes = new Map();
  /** @type {Map<string, { emulator: Emulator, handle: NonNullable<Emulator["http"]>[string] }>} */
  const httpRoutes = new Map();
  for (const emulator of emulators) {
    for (const [path, handle] of Object.entries(emulator.sockets ?? {})) socketRoutes.set(path, { emulator, handle });
    for (const [path, handle] of Object.entries(emulator.http ?? {})) httpRoutes.set(path, { emulator, handle });
  }
  const serveStatic =
    options.serveStatic === false
      ? () => false
      : createStaticHandler(REPO_ROOT, undefined, {
          precompressed: options.precompressed !== false,
          // The bytes of each file's bodies as sent, by path (/__stats `static`): the cold-start bench's count.
          onSent: (pathname, bytes) => stats.add(/** @type {any} */ ("static"), /** @type {any} */ (pathname), bytes),
        });
  if (hasRecogniser && options.prewarm !== false) await pool.prewarm();

  const health = () => Object.fromEntries(emulators.filter((e) => e.health).map((e) => [e.name, e.health?.()]));

  const server = createServer((req, res) => {
    if (options.instance) res.setHeader(INSTANCE_HEADER, options.instance);
    const url = requestUrl(req);
    if (url.pathname === "/__stats" && req.method === "GET") {
      return sendJson(res, 200, stats.snapshot());
    }
    if (url.pathname === "/api/health" && req.method === "GET") {
      return sendJson(res, 200, health());
    }
    // The page's token function calls this. A real app's server would check the user's
    // session first. With ?service=, the service's own short-lived token, minted here by the
    // emulator's mint code (the key never reaches the page); without, the backend's token,
    // which Kyutai and the LLM take.
    if (url.pathname === "/api/token" && req.method === "GET") {
      const service = url.searchParams.get("service");
      if (service === null) return sendJson(res, 200, { token: token ?? "", expiresInS: 300 });
      const mint = emulators.find((e) => e.name === service)?.mintForPage;
      if (!mint) {
        const known = emulators.filter((e) => e.mintForPage).map((e) => e.name);
        return sendJson(res, 400, { error: `no short-lived token for service ${JSON.stringify(service)}; one of ${known.join(", ")}` });
      }
      return sendJson(res, 200, mint());
    }
    const route = findRoute(httpRoutes, url.pathname);
    if (route) return void route.handle(req, res, url, parseKnobs(url.searchParams, defaults[route.emulator.name]));
    if (serveStatic(req, res)) return;
    res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(`not found: ${req.url}\n`);
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const url = requestUrl(req);
    const route = findRoute(socketRoutes, url.pathname);
    if (!route) return refuseUpgrade(socket, 404, "Not Found");
    const authorize = route.emulator.authorize ?? isAuthorized;
    if (!authorize(req, url, token)) {
      stats.add("http", "unauthorized");
      return refuseUpgrade(socket, 401, "Unauthorized");
    }
    const knobs = parseKnobs(url.searchParams, defaults[route.emulator.knobsFrom ?? route.emulator.name]);
    const upgrade = () => wss.handleUpgrade(req, socket, head, (ws) => upgraded(ws, route, knobs, url, req));
    if (!route.emulator.beforeUpgrade) return upgrade();
    route.emulator.beforeUpgrade(url, knobs).then(
      async (refusal) => {
        // The client may have given up while the handshake waited (a connect timeout shorter than a
        // `delay_ms`). On a loaded machine its close can wait in the poll queue behind the timer that
        // ended the wait, so that I/O is read first: a clean-clone CI run upgraded such a socket.
        await new Promise((resolve) => setImmediate(resolve));
        if (socket.destroyed) return;
        if (refusal) return refuseUpgrade(socket, refusal.status, refusal.text);
        upgrade();
      },
      () => refuseUpgrade(socket, 500, "Internal Server Error"),
    );
  });

  /**
   * @param {import("ws").WebSocket} ws
   * @param {{ emulator: Emulator, handle: NonNullable<Emulator["sockets"]>[string] }} route
   * @param {import("./knobs.mjs").Knobs} knobs
   * @param {URL} url
   * @param {import("node:http").IncomingMessage} req
   */
  function upgraded(ws, route, knobs, url, req) {
    Promise.resolve(route.handle(ws, knobs, url, req)).catch((err) => {
      console.error(`reference backend: ${url.pathname} failed:`, err);
      ws.terminate();
    });
  }

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
 * The request's URL. Leading slashes are collapsed first: Google's SDK (@google/genai) joins its
 * base URL and the Live API's path with two ("ws://host//ws/google.ai…"), which Google's servers
 * take, while a URL parser reads "//ws/…" as a host named "ws".
 * @param {import("node:http").IncomingMessage} req
 */
function requestUrl(req) {
  return new URL((req.url ?? "/").replace(/^\/{2,}/, "/"), "http://localhost");
}

/**
 * The route for `pathname`: an exact path, or one whose `*` segments match one
 * non-empty segment each (ElevenLabs' voice id and token type).
 * @template T
 * @param {Map<string, T>} routes
 * @param {string} pathname
 */
function findRoute(routes, pathname) {
  const exact = routes.get(pathname);
  if (exact) return exact;
  const segments = pathname.split("/");
  for (const [path, route] of routes) {
    const pattern = path.split("/");
    if (pattern.length === segments.length && pattern.every((p, i) => p === segments[i] || (p === "*" && segments[i] !== ""))) return route;
  }
  return undefined;
}

/** @param {import("node:stream").Duplex} socket @param {number} status @param {string} text */
function refuseUpgrade(socket, status, text) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`);
}
