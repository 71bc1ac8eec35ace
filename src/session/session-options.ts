/**
 * VoiceSession's options: the checks made when a session is built (each
 * failure a ConfigError naming the option), the defaults the session falls
 * back on, and the turn machine's config taken from them. Pure.
 */
import { ConfigError } from "../errors.js";
import { backchannelPolicyOf } from "./backchannel.js";
import { serviceEndOfTurnOf, turnDetectorPolicyOf, turnEndPolicyOf } from "./turn-end.js";
import { preemptiveOf } from "./preemptive.js";
import { checkTurnDetectorOptions } from "../vad/turn-detector.js";
import type { TurnConfig } from "./turn-machine.js";
import type { VoiceSessionOptions } from "./types.js";

export const DEFAULTS = {
  pauseThreshold: 0.8,
  flushTimeoutMs: 1500,
  replyStallMs: 8000,
  echoWordWindowMs: 1500,
  /**
   * A speech-to-speech service transcribes the committed turn after the
   * commit (gpt-4o-transcribe: often over a second), and the turn's words
   * are what the turn machine replies to.
   */
  realtimeFlushTimeoutMs: 5000,
};

/** The options with the providers resolved: the trio, given or taken from `realtime`. */
export type ResolvedSessionOptions = VoiceSessionOptions & Required<Pick<VoiceSessionOptions, "stt" | "llm" | "tts">>;

/**
 * Throws a ConfigError naming the first option that cannot work; returns the
 * options with the providers resolved (a `realtime` provider presents the
 * cascaded ports over its one socket: providers/openai-realtime.ts).
 */
export function checkSessionOptions(options: VoiceSessionOptions): ResolvedSessionOptions {
  const realtime = options?.realtime;
  if (realtime) {
    if (options.stt || options.llm || options.tts) throw new ConfigError("VoiceSession: give either `realtime` (a speech-to-speech provider) or the `stt`, `llm` and `tts` providers, not both");
    if (!realtime.stt || !realtime.llm || !realtime.tts) throw new ConfigError("VoiceSession: the `realtime` option must be a speech-to-speech provider such as openaiRealtime({...})");
  }
  for (const key of ["stt", "llm", "tts"] as const) {
    if (!realtime && !options?.[key]) throw new ConfigError(`VoiceSession: the \`${key}\` provider is required (or give a speech-to-speech provider as \`realtime\`)`);
  }
  if (options.components !== undefined && typeof options.components !== "function") {
    throw new ConfigError("VoiceSession: `components` must be a function (context) => Promise<SessionComponents>, such as bargein/testing's fakeAudio().components; leave it out for the browser's own");
  }
  if (options.history !== undefined && !Array.isArray(options.history)) {
    throw new ConfigError("VoiceSession: `history` must be an array of { role, text } messages (such as an exported session.history)");
  }
  const mode = options.turn?.mode;
  if (mode !== undefined && mode !== "vad" && mode !== "push-to-talk") {
    throw new ConfigError(`VoiceSession: \`turn.mode\` must be "vad" or "push-to-talk", not ${JSON.stringify(mode)}`);
  }
  const tailMs = options.echoGuard?.tailMs;
  if (tailMs !== undefined && !(tailMs >= 32 && tailMs <= 1024)) {
    // The filter's cost grows with its tail: 256 ms is ~60 µs a quantum, 1024 about four times that.
    throw new ConfigError(`VoiceSession: \`echoGuard.tailMs\` must be a number of ms from 32 to 1024, not ${tailMs}`);
  }
  const wordWindowMs = options.echoGuard?.wordWindowMs;
  if (wordWindowMs !== undefined && !(wordWindowMs >= 0)) {
    throw new ConfigError(`VoiceSession: \`echoGuard.wordWindowMs\` must be a number ≥ 0, not ${wordWindowMs}`);
  }
  const route = options.audio?.outputRoute;
  if (route !== undefined && route !== "context" && route !== "webrtc-loopback") {
    throw new ConfigError(`VoiceSession: \`audio.outputRoute\` must be "context" or "webrtc-loopback", not ${JSON.stringify(route)}`);
  }
  if (route === "webrtc-loopback" && options.audio?.output) {
    throw new ConfigError("VoiceSession: give `audio.output` (your own node) or `audio.outputRoute: \"webrtc-loopback\"`, not both: the loopback is where the bot's audio goes");
  }
  const minSpeechMs = options.bargeIn?.minSpeechMs;
  if (minSpeechMs !== undefined && !(minSpeechMs >= 0)) {
    throw new ConfigError(`VoiceSession: \`bargeIn.minSpeechMs\` must be a number ≥ 0, not ${minSpeechMs}`);
  }
  const preemptive = preemptiveOf(options.turn?.preemptive);
  if (preemptive && realtime) {
    throw new ConfigError("VoiceSession: `turn.preemptive` needs the `stt`, `llm` and `tts` providers; a `realtime` service answers the user's turn itself, so leave it out");
  }
  if (options.turn?.detector && realtime) {
    throw new ConfigError("VoiceSession: `turn.detector` runs on the turns this session ends; a `realtime` service ends the user's turn itself, so leave it out");
  }
  turnDetectorPolicyOf(options.turn?.detector);
  checkTurnDetectorOptions("VoiceSession: `turn.detector`", options.turn?.detector && { module: options.turn.detector.module, options: options.turn.detector.options });
  const redemptionMs = options.vad?.redemptionMs;
  if (preemptive && redemptionMs !== undefined && !(preemptive.quietMs < redemptionMs)) {
    throw new ConfigError(`VoiceSession: \`turn.preemptive.quietMs\` (${preemptive.quietMs}) must be less than \`vad.redemptionMs\` (${redemptionMs}): the reply is prepared in the quiet before the VAD ends the turn`);
  }
  if (!realtime) return options as ResolvedSessionOptions;
  const turn = { ...options.turn, flushTimeoutMs: options.turn?.flushTimeoutMs ?? DEFAULTS.realtimeFlushTimeoutMs };
  return { ...options, turn, stt: realtime.stt, llm: realtime.llm, tts: realtime.tts };
}

/**
 * Whether the echo guard is on: `echoGuard.enabled`, by default on when the
 * session builds its own audio. With the app's own `components` there is no
 * capture worklet for it to run in, so it is off unless asked for (then only
 * the word check applies).
 */
export function echoGuardEnabled(options: VoiceSessionOptions): boolean {
  return options.echoGuard?.enabled ?? options.components === undefined;
}

/** `echoGuard.wordWindowMs`: how recent a bot word must be for the STT's copy of it to be echo. */
export function echoWordWindowMs(options: VoiceSessionOptions): number {
  return options.echoGuard?.wordWindowMs ?? DEFAULTS.echoWordWindowMs;
}

export function turnConfigOf(options: VoiceSessionOptions): TurnConfig {
  return {
    bargeInEnabled: options.bargeIn?.enabled !== false,
    confirmByWords: options.bargeIn?.confirmByWords ?? true,
    pauseThreshold: options.turn?.pauseThreshold ?? DEFAULTS.pauseThreshold,
    pushToTalk: options.turn?.mode === "push-to-talk",
    // Words near the bot's audio need real speech to vouch for them only with the guard on.
    vouchWordsMs: echoGuardEnabled(options) ? echoWordWindowMs(options) : undefined,
    backchannel: backchannelPolicyOf(options.bargeIn?.backchannels),
    // On by default (with the VAD's 300 ms of silence, components.ts): README, "Turn-taking".
    turnEnd: turnEndPolicyOf(options.turn?.holdUnfinished ?? true),
    serviceEndOfTurn: serviceEndOfTurnOf(options.turn?.serviceEndOfTurn),
    preemptive: preemptiveOf(options.turn?.preemptive),
    // Not with a speech-to-speech service: its conversation is on the server, which made its own user item.
    resumeUnheard: options.turn?.mode !== "push-to-talk" && !options.realtime && options.turn?.resumeUnheard !== false,
    turnDetector: turnDetectorPolicyOf(options.turn?.detector),
  };
}
