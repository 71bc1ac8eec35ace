/**
 * VoiceSession's options: the checks made when a session is built (each
 * failure a ConfigError naming the option), the options with their defaults
 * (src/defaults.ts) filled in, and the turn machine's config taken from them. Pure.
 */
import { ConfigError } from "../errors.js";
import { DEFAULTS } from "../defaults.js";
import { backchannelPolicyOf } from "./backchannel.js";
import { serviceEndOfTurnOf, turnDetectorPolicyOf, turnEndPolicyOf } from "./turn-end.js";
import { preemptiveOf } from "./preemptive.js";
import { checkTurnDetectorOptions } from "../vad/turn-detector.js";
import type { TurnConfig } from "./turn-machine.js";
import type { BargeInOptions, EchoGuardOptions, TurnOptions, VoiceSessionOptions } from "./types.js";

type Filled<T, K extends keyof T> = T & Required<Pick<T, K>>;

/**
 * The options as the session reads them: the providers resolved (the trio,
 * given or taken from `realtime`) and every default filled in. Left open:
 * what has no single default (`uplink.policy` follows the STT; `vad` is the
 * VAD's, completed where it is built).
 */
export interface ResolvedSessionOptions extends Filled<VoiceSessionOptions, "stt" | "llm" | "tts" | "meter" | "releaseMicOnHide"> {
  turn: Filled<TurnOptions, "mode" | "pauseThreshold" | "flushTimeoutMs" | "replyStallMs" | "resumeUnheard" | "holdUnfinished" | "serviceEndOfTurn" | "preemptive">;
  bargeIn: Filled<BargeInOptions, "enabled" | "minSpeechMs" | "confirmByWords" | "backchannels">;
  echoGuard: Required<EchoGuardOptions>;
  uplink: Filled<NonNullable<VoiceSessionOptions["uplink"]>, "budgetMs" | "observe" | "replayMs">;
  audio: Filled<NonNullable<VoiceSessionOptions["audio"]>, "prebufferMs" | "outputRoute">;
}

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
  return withDefaults(options);
}

/** The options with every default filled in (DEFAULTS), the providers taken from `realtime` when it is given. */
function withDefaults(options: VoiceSessionOptions): ResolvedSessionOptions {
  const { turn, bargeIn, echoGuard, uplink, audio, session } = DEFAULTS;
  const realtime = options.realtime;
  return {
    ...options,
    stt: realtime?.stt ?? options.stt!,
    llm: realtime?.llm ?? options.llm!,
    tts: realtime?.tts ?? options.tts!,
    meter: options.meter ?? session.meter,
    releaseMicOnHide: options.releaseMicOnHide ?? session.releaseMicOnHide,
    turn: {
      mode: turn.mode,
      pauseThreshold: turn.pauseThreshold,
      flushTimeoutMs: realtime ? turn.realtimeFlushTimeoutMs : turn.flushTimeoutMs,
      replyStallMs: turn.replyStallMs,
      resumeUnheard: turn.resumeUnheard,
      holdUnfinished: turn.holdUnfinished.enabled,
      serviceEndOfTurn: turn.serviceEndOfTurn.enabled,
      preemptive: turn.preemptive.enabled,
      ...defined(options.turn),
    },
    bargeIn: {
      enabled: bargeIn.enabled,
      confirmByWords: bargeIn.confirmByWords,
      backchannels: bargeIn.backchannels.enabled,
      ...defined(options.bargeIn),
      minSpeechMs: bargeInMinSpeechMs(options),
    },
    echoGuard: {
      tailMs: echoGuard.tailMs,
      wordWindowMs: echoGuard.wordWindowMs,
      cleanUplink: echoGuard.cleanUplink,
      ...defined(options.echoGuard),
      enabled: echoGuardEnabled(options),
    },
    uplink: { budgetMs: uplink.budgetMs, observe: uplink.observe, replayMs: uplink.replayMs, ...defined(options.uplink) },
    audio: { prebufferMs: audio.prebufferMs, outputRoute: audio.outputRoute, ...defined(options.audio) },
  };
}

/**
 * Speech that confirms a barge-in, in ms; also the VAD's minSpeechMs. At
 * least one 32 ms frame, so that speechRealStart can fire.
 */
export function bargeInMinSpeechMs(options: { bargeIn?: { minSpeechMs?: number }; vad?: { minSpeechMs?: number } }): number {
  return Math.max(DEFAULTS.bargeIn.minSpeechFloorMs, options.bargeIn?.minSpeechMs ?? options.vad?.minSpeechMs ?? DEFAULTS.bargeIn.minSpeechMs);
}

/** `o` without its undefined entries, so that spreading it over defaults keeps them. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Whether the echo guard is on: `echoGuard.enabled`, by default on when the
 * session builds its own audio. With the app's own `components` there is no
 * capture worklet for it to run in, so it is off unless asked for (then only
 * the word check applies).
 */
export function echoGuardEnabled(options: VoiceSessionOptions): boolean {
  return options.echoGuard?.enabled ?? (DEFAULTS.echoGuard.enabled && options.components === undefined);
}

export function turnConfigOf(options: ResolvedSessionOptions): TurnConfig {
  const { turn, bargeIn, echoGuard } = options;
  return {
    bargeInEnabled: bargeIn.enabled,
    confirmByWords: bargeIn.confirmByWords,
    pauseThreshold: turn.pauseThreshold,
    pushToTalk: turn.mode === "push-to-talk",
    // Words near the bot's audio need real speech to vouch for them only with the guard on.
    vouchWordsMs: echoGuard.enabled ? echoGuard.wordWindowMs : undefined,
    backchannel: backchannelPolicyOf(bargeIn.backchannels),
    // On by default, with the VAD's short silence (DEFAULTS.vad.redemptionMs).
    turnEnd: turnEndPolicyOf(turn.holdUnfinished),
    serviceEndOfTurn: serviceEndOfTurnOf(turn.serviceEndOfTurn),
    preemptive: preemptiveOf(turn.preemptive),
    // Not with a speech-to-speech service: its conversation is on the server, which made its own user item.
    resumeUnheard: turn.mode !== "push-to-talk" && !options.realtime && turn.resumeUnheard,
    turnDetector: turnDetectorPolicyOf(turn.detector),
  };
}
