// Fault and pacing knobs. Each request may set them as query parameters; the
// server's start-up `defaults` fill in the rest. Names on the wire are snake_case
// (`delay_ms`), in code camelCase (`delayMs`).

/**
 * @typedef {object} Knobs
 * @property {number} [capacity]          max concurrent streams of this service; 0 refuses all ("no free channels")
 * @property {number} [delayMs]           wait before Ready / the first byte
 * @property {number} [stallMs]           stop reading and sending for this long, starting
 * @property {number} [stallAfterMs]      this long after the stream opened (default 0)
 * @property {number} [stallAfter]        …or once the stream sent this many messages (WebSocket services, as dropAfter):
 *                                        a stall anchored in a reply, whenever it starts; takes the place of stallAfterMs
 * @property {number} [rateBps]           STT: read at most this many bytes per second (a slow uplink)
 * @property {number} [dropAfterMs]       destroy the socket (no close frame) this long after it opened
 * @property {number} [dropAfter]         destroy the socket after sending this many messages / chunks
 * @property {string} [malformed]         "1": bytes that are not msgpack / JSON; "notype": msgpack map without `type`
 * @property {number} [oversize]          send one message of about this many bytes
 * @property {number} [wordMs]            LLM: time between streamed words (default 40)
 * @property {number} [pace]              TTS: send speed as a multiple of real time; 0 = as fast as synthesised (default 1.5)
 * @property {number} [burstS]            TTS: seconds of audio sent at once before pacing starts (default 0.5)
 * @property {number} [chunkWords]        TTS: synthesise after this many words without punctuation (default 6)
 * @property {number} [silenceRms]        STT: frame RMS under which audio counts as silence (default 0.01)
 * @property {number} [endpointMs]        STT: silence that ends an utterance (default 480)
 * @property {number} [recognise]         STT: 0 = read and count the audio but run no recogniser (load tests; no decoder per stream)
 * @property {number} [knownSpeech]     STT: 0 = pocketsphinx alone, even on a backend started with `knownSpeech` (a test of real recognition)
 * @property {number} [ignoreMarkers]     STT: 1 = never answer a Marker (a stream whose flush never completes)
 * @property {number} [thinkMs]           speech-to-speech: the model's time before its turn's first message (default 0)
 * @property {number} [binaryFrames]      Gemini Live: 1 = send every server message as a binary frame holding its JSON
 * @property {number} [goAwayAfterMs]     Gemini Live: send goAway this long after setupComplete…
 * @property {number} [goAwayLeftMs]      …saying this much time is left (default 5000), then close the socket when it has passed
 */

/** @type {Record<string, keyof Knobs>} */
const QUERY_NAMES = {
  capacity: "capacity",
  delay_ms: "delayMs",
  stall_ms: "stallMs",
  stall_after_ms: "stallAfterMs",
  stall_after: "stallAfter",
  rate_bps: "rateBps",
  drop_after_ms: "dropAfterMs",
  drop_after: "dropAfter",
  malformed: "malformed",
  oversize: "oversize",
  word_ms: "wordMs",
  pace: "pace",
  burst_s: "burstS",
  chunk_words: "chunkWords",
  silence_rms: "silenceRms",
  endpoint_ms: "endpointMs",
  recognise: "recognise",
  ignore_markers: "ignoreMarkers",
  known_speech: "knownSpeech",
  binary: "binaryFrames",
  think_ms: "thinkMs",
  go_away_after_ms: "goAwayAfterMs",
  go_away_left_ms: "goAwayLeftMs",
};

/**
 * @param {URLSearchParams} query
 * @param {Knobs} [defaults]
 * @returns {Knobs}
 */
export function parseKnobs(query, defaults = {}) {
  /** @type {Record<string, unknown>} */
  const knobs = { ...defaults };
  for (const [wire, name] of Object.entries(QUERY_NAMES)) {
    const raw = query.get(wire);
    if (raw === null || raw === "") continue;
    if (name === "malformed") knobs[name] = raw;
    else {
      const value = Number(raw);
      if (Number.isFinite(value) && value >= 0) knobs[name] = value;
    }
  }
  return /** @type {Knobs} */ (knobs);
}

/** @param {number} ms @param {AbortSignal} [signal] */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve(undefined);
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve(undefined);
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The stall window of a stream, measured from when it opened, or (`stallAfter`)
 * from the moment the stream's owner calls `begin()`: none until then.
 * `waitIfStalled()` resolves at once outside the window, else at its end.
 */
export class StallWindow {
  /** @param {Knobs} knobs @param {number} [openedAt] */
  constructor(knobs, openedAt = Date.now()) {
    this.stallMs = knobs.stallMs ?? 0;
    const start = knobs.stallAfter !== undefined ? Infinity : openedAt + (knobs.stallAfterMs ?? 0);
    this.start = start;
    this.end = start + this.stallMs;
  }

  /** Starts the window now (for `stallAfter`). @param {number} [now] */
  begin(now = Date.now()) {
    this.start = now;
    this.end = now + this.stallMs;
  }

  get active() {
    const now = Date.now();
    return now >= this.start && now < this.end;
  }

  /** @param {AbortSignal} [signal] */
  async waitIfStalled(signal) {
    if (this.active) await sleep(this.end - Date.now(), signal);
  }
}

/**
 * Checks a token: `auth_id` in the query, `Authorization: Bearer …`, or (for
 * browser WebSockets, which cannot set headers) the subprotocol `bearer.<token>`;
 * `ws` then echoes the first offered subprotocol, as the browser requires.
 * Always true when the server runs without a token.
 * @param {import("node:http").IncomingMessage} req
 * @param {URL} url
 * @param {string | undefined} token
 */
export function isAuthorized(req, url, token) {
  if (!token) return true;
  if (url.searchParams.get("auth_id") === token) return true;
  if ((req.headers.authorization ?? "") === `Bearer ${token}`) return true;
  const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  return offered.includes(`bearer.${token}`);
}
