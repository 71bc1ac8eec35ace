// An OpenAI Realtime session's configuration, as pure data: the defaults a session starts
// with (session.created), and `session.update` merged into it (only the fields present
// change; `turn_detection: null` turns server VAD off; `voice` is fixed once the model has
// spoken). GA shape: `session.type: "realtime"`, audio under `audio.input` / `audio.output`,
// PCM 24 kHz only. Built from:
//   https://platform.openai.com/docs/api-reference/realtime-client-events/session/update
//   https://platform.openai.com/docs/api-reference/realtime-server-events/session/created
//   https://platform.openai.com/docs/api-reference/realtime-sessions/create-realtime-client-secret
//     (its example session, and the server_vad / semantic_vad field docs)
//   https://developers.openai.com/api/docs/guides/realtime-vad (server_vad by default)
// The session's defaults are the docs' (server_vad with threshold 0.5, prefix padding 300 ms,
// silence 500 ms, create_response and interrupt_response on; voice alloy; no transcription).
// The reference's example session shows silence_duration_ms 200; the field's doc says the
// default is 500, which is taken here.

export const PCM_FORMAT = Object.freeze({ type: "audio/pcm", rate: 24000 });

/** @param {string} message @param {string | null} code @param {string | null} param */
const invalid = (message, code, param) => ({ error: { type: "invalid_request_error", code, message, param } });

/** The docs' server VAD defaults. */
export const SERVER_VAD_DEFAULTS = Object.freeze({
  type: "server_vad",
  threshold: 0.5,
  prefix_padding_ms: 300,
  silence_duration_ms: 500,
  idle_timeout_ms: null,
  create_response: true,
  interrupt_response: true,
});
const SEMANTIC_VAD_DEFAULTS = Object.freeze({ type: "semantic_vad", eagerness: "auto", create_response: true, interrupt_response: true });

/**
 * The silence that ends a turn, in ms. semantic_vad has no silence setting; its eagerness gives
 * the longest wait (low 8 s, medium 4 s, high 2 s). The emulator has no turn model, so it waits
 * a fixed share of that: 1.2 s, 800 ms, 500 ms (auto = medium).
 * @param {Record<string, any> | null} turnDetection
 */
export function endpointMs(turnDetection) {
  if (!turnDetection) return null;
  if (turnDetection.type === "semantic_vad") return { low: 1200, medium: 800, high: 500, auto: 800 }[/** @type {"low"} */ (turnDetection.eagerness)] ?? 800;
  return turnDetection.silence_duration_ms ?? SERVER_VAD_DEFAULTS.silence_duration_ms;
}

/**
 * @param {{ id: string, model: string, expiresAt: number }} ids
 * @returns {Record<string, any>} the session object of session.created
 */
export function defaultSession({ id, model, expiresAt }) {
  return {
    type: "realtime",
    object: "realtime.session",
    id,
    model,
    output_modalities: ["audio"],
    instructions: "You are a scripted ELIZA-style responder on a local emulator; answer briefly.",
    tools: [],
    tool_choice: "auto",
    max_output_tokens: "inf",
    tracing: null,
    truncation: "auto",
    prompt: null,
    expires_at: expiresAt,
    include: null,
    audio: {
      input: { format: { ...PCM_FORMAT }, transcription: null, noise_reduction: null, turn_detection: { ...SERVER_VAD_DEFAULTS } },
      output: { format: { ...PCM_FORMAT }, voice: "alloy", speed: 1 },
    },
  };
}

/** @param {unknown} format @param {string} param */
function checkFormat(format, param) {
  if (format === undefined) return null;
  const f = /** @type {Record<string, unknown> | null} */ (format);
  if (f?.type !== "audio/pcm" || (f.rate !== undefined && f.rate !== 24000)) {
    return invalid(`Invalid '${param}': this emulator takes only { type: 'audio/pcm', rate: 24000 } (PCM 16-bit 24 kHz mono).`, "invalid_value", param);
  }
  return null;
}

/**
 * Merges a session.update's `session` into `current`.
 * @param {Record<string, any>} current
 * @param {unknown} update
 * @param {{ spoken: boolean }} state  spoken: the model has sent audio in this session
 * @returns {{ session: Record<string, any> } | { error: { type: string, code: string | null, message: string, param: string | null } }}
 */
export function applySessionUpdate(current, update, { spoken }) {
  if (typeof update !== "object" || update === null || Array.isArray(update)) return invalid("Missing required parameter: 'session'.", "missing_required_parameter", "session");
  const u = /** @type {Record<string, any>} */ (update);
  if (u.type === undefined) return invalid("Missing required parameter: 'session.type'.", "missing_required_parameter", "session.type");
  if (u.type !== "realtime") return invalid(`Invalid value: '${u.type}'. Supported values are: 'realtime' (this emulator serves no transcription sessions).`, "invalid_value", "session.type");
  const next = structuredClone(current);
  for (const key of ["instructions", "tools", "tool_choice", "output_modalities", "max_output_tokens", "tracing", "truncation", "include"]) {
    if (u[key] !== undefined) next[key] = structuredClone(u[key]);
  }
  if (u.tools !== undefined && !Array.isArray(u.tools)) return invalid("Invalid type for 'session.tools': expected an array.", "invalid_type", "session.tools");
  const input = u.audio?.input ?? {};
  const output = u.audio?.output ?? {};
  const badFormat = checkFormat(input.format, "session.audio.input.format") ?? checkFormat(output.format, "session.audio.output.format");
  if (badFormat) return badFormat;
  if ("transcription" in input) next.audio.input.transcription = input.transcription === null ? null : { ...input.transcription };
  if ("noise_reduction" in input) next.audio.input.noise_reduction = input.noise_reduction ?? null;
  if ("turn_detection" in input) {
    const td = input.turn_detection;
    if (td === null) next.audio.input.turn_detection = null;
    else if (td?.type === "server_vad") next.audio.input.turn_detection = { ...SERVER_VAD_DEFAULTS, ...td };
    else if (td?.type === "semantic_vad") next.audio.input.turn_detection = { ...SEMANTIC_VAD_DEFAULTS, ...td };
    else return invalid(`Invalid value: '${td?.type}'. Supported values are: 'server_vad' and 'semantic_vad'.`, "invalid_value", "session.audio.input.turn_detection.type");
  }
  if (output.voice !== undefined && output.voice !== current.audio.output.voice) {
    if (spoken) return invalid("Cannot update a conversation's voice if assistant audio is present.", "cannot_update_voice", "session.audio.output.voice");
    next.audio.output.voice = output.voice;
  }
  if (output.speed !== undefined) next.audio.output.speed = output.speed;
  return { session: next };
}
