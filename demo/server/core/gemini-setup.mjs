// A Gemini Live session's setup (BidiGenerateContentSetup), read into what the emulator acts
// on. Pure. The setup is sent once, first, and cannot change while the socket is open (the
// WebSockets reference: "You cannot update the configuration while the connection is open").
// Fields, from https://ai.google.dev/api/live (BidiGenerateContentSetup, RealtimeInputConfig,
// AutomaticActivityDetection, ActivityHandling) and https://ai.google.dev/gemini-api/docs/live-guide:
//   model ("models/…"), generationConfig { responseModalities, speechConfig.voiceConfig
//   .prebuiltVoiceConfig.voiceName }, systemInstruction (Content, or a string as the reference's
//   example shows), tools [{ functionDeclarations: [{ name, description, parameters }] }],
//   realtimeInputConfig { automaticActivityDetection { disabled, startOfSpeechSensitivity,
//   endOfSpeechSensitivity, prefixPaddingMs, silenceDurationMs }, activityHandling },
//   inputAudioTranscription {}, outputAudioTranscription {}.
// An ephemeral token minted with `bidiGenerateContentSetup` locks those fields: the token's
// values win over the client's (the ephemeral-tokens guide).

const HANDLING = ["ACTIVITY_HANDLING_UNSPECIFIED", "START_OF_ACTIVITY_INTERRUPTS", "NO_INTERRUPTION"];

/**
 * @typedef {object} GeminiSetup
 * @property {string} model
 * @property {boolean} manualActivity     automaticActivityDetection.disabled
 * @property {boolean} interrupts         activityHandling is START_OF_ACTIVITY_INTERRUPTS (the default)
 * @property {boolean} inputTranscription
 * @property {boolean} outputTranscription
 * @property {string[]} toolNames
 * @property {string | null} voice
 * @property {string | null} systemInstruction
 * @property {number | null} silenceDurationMs
 */

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObj = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** @param {unknown} instruction */
function instructionText(instruction) {
  if (typeof instruction === "string") return instruction;
  if (isObj(instruction) && Array.isArray(instruction.parts)) return instruction.parts.map((/** @type {any} */ p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return null;
}

/**
 * @param {unknown} body the `setup` field
 * @param {Record<string, unknown> | null} minted a token's locked setup
 * @returns {{ setup: GeminiSetup } | { error: string }}
 */
export function readSetup(body, minted) {
  if (!isObj(body)) return { error: "Invalid value at 'setup': expected an object." };
  const s = { ...body, ...(minted ?? {}) };
  if (typeof s.model !== "string" || !s.model) return { error: "Request contains an invalid argument: setup.model is required (\"models/…\")." };
  const modalities = s.generationConfig?.responseModalities;
  if (modalities !== undefined && !(Array.isArray(modalities) && modalities.length === 1 && modalities[0] === "AUDIO")) {
    return { error: "Request contains an invalid argument: this emulator answers in audio only (responseModalities [\"AUDIO\"])." };
  }
  const input = isObj(s.realtimeInputConfig) ? s.realtimeInputConfig : {};
  const detection = isObj(input.automaticActivityDetection) ? input.automaticActivityDetection : {};
  const handling = input.activityHandling ?? "START_OF_ACTIVITY_INTERRUPTS";
  if (!HANDLING.includes(handling)) return { error: `Invalid value at 'setup.realtime_input_config.activity_handling', ${JSON.stringify(String(handling).slice(0, 40))}` };
  const silence = detection.silenceDurationMs;
  if (silence !== undefined && !(Number.isInteger(silence) && silence >= 0)) return { error: "Invalid value at 'setup.realtime_input_config.automatic_activity_detection.silence_duration_ms'" };
  const tools = Array.isArray(s.tools) ? s.tools : [];
  const toolNames = tools.flatMap((/** @type {any} */ t) => (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : [])).map((/** @type {any} */ f) => f?.name).filter((/** @type {unknown} */ n) => typeof n === "string");
  return {
    setup: {
      model: s.model,
      manualActivity: detection.disabled === true,
      interrupts: handling !== "NO_INTERRUPTION",
      inputTranscription: isObj(s.inputAudioTranscription),
      outputTranscription: isObj(s.outputAudioTranscription),
      toolNames,
      voice: s.generationConfig?.speechConfig?.voiceConfig?.prebuiltVoiceConfig?.voiceName ?? null,
      systemInstruction: instructionText(s.systemInstruction),
      silenceDurationMs: silence ?? null,
    },
  };
}
