/**
 * Events in: what the VAD, the capture, the player and the STT link report,
 * turned into TurnEvents for the turn machine and into the app's `vad`,
 * `warning`, `reconnecting` and `overload` events. Nothing here decides; the
 * machine does. Thread: main.
 */
import { AudioContextError, MicrophoneError } from "../errors.js";
import type { ProviderEventSource } from "../providers/types.js";
import type { Emitter } from "../util/emitter.js";
import type { SessionComponents, VadPort } from "./ports.js";
import type { SessionCounters } from "./session-metrics.js";
import type { SttLinkEvent } from "./stt-link.js";
import type { TurnConfig, TurnEvent } from "./turn-machine.js";
import type { VoiceSessionEvents } from "./types.js";
import { SttGate } from "./stt-gate.js";

/** The session's side of the wiring. */
export interface InputSink {
  dispatch(event: TurnEvent): void;
  events: Emitter<VoiceSessionEvents>;
  counters: SessionCounters;
  /** The VAD's speech start (true) or end (false), for the STT replay. */
  noteSpeech(speaking: boolean): void;
  /**
   * One uplink frame for the STT; `capturedAtMs` on performance.now()'s clock, when known;
   * `capturedAt`, the AudioContext time (s) at the frame's end.
   */
  sendAudio(pcm: Float32Array | Int16Array, capturedAtMs?: number, capturedAt?: number): void;
  /** The player's first sample of `generation` is audible at `at` (performance.now()) and `audibleContextTime` (AudioContext s), when known. */
  playbackStarted(generation: number, at: number, audibleContextTime: number | undefined): void;
  /**
   * Is this STT word the bot's own voice heard back, and was the bot audible just now? (echo-words.ts)
   * `spokenAt`: when the word's audio was captured, when known (performance.now() clock).
   */
  echoOf(text: string, spokenAt?: number): { echo: boolean; nearBot: boolean };
  /** The session cannot go on: report and stop. */
  fail(err: unknown): void;
  /** The microphone's track ended: fall back to the default input where the capture can, else fail with `err`. */
  inputEnded(err: MicrophoneError): void;
  /** The STT's transcript events, kept behind what the VAD has heard (stt-gate.ts). */
  sttOrder: SttOrder;
}

/**
 * The STT's transcript events wait while the VAD lags the capture by more than 300 ms of audio, each
 * for up to 3 s: the VAD's usual lag is a few frames; a starved worker's is seconds.
 */
const STT_GATE = { behindMs: 300, maxHoldMs: 3000 };

/** SttGate at the edge: dispatches what it releases, and a timer bounds each wait. */
export class SttOrder {
  readonly #gate = new SttGate<TurnEvent>(STT_GATE);
  readonly #dispatch: (event: TurnEvent) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(dispatch: (event: TurnEvent) => void) {
    this.#dispatch = dispatch;
  }

  captured(contextTime: number): void {
    this.#gate.captured(contextTime);
  }

  /** The VAD has judged the audio up to `contextTime` (after dispatching its own event, if it had one). */
  judged(contextTime: number): void {
    this.#run(this.#gate.judged(contextTime, now()));
  }

  arrive(event: TurnEvent): void {
    this.#run(this.#gate.arrive(event, now()));
  }

  /** Before the turn is decided on the STT's flush: every word it has sent goes in first. */
  releaseAll(): void {
    this.#run(this.#gate.releaseAll());
  }

  clear(): void {
    this.#gate.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(events: TurnEvent[]): void {
    for (const event of events) this.#dispatch(event);
    clearTimeout(this.#timer);
    this.#timer = this.#gate.holding > 0 ? setTimeout(() => this.#run(this.#gate.tick(now())), STT_GATE.maxHoldMs / 10) : undefined;
  }
}

const now = () => performance.now();

/** The VAD's cues the machine's policies need, asked for once the components are built. */
export function askVad(vad: VadPort, config: TurnConfig): void {
  // How far the VAD has judged, so the STT's words wait for it when it falls behind (SttOrder).
  vad.reportJudged?.(true);
  // turn.preemptive: the VAD says when an utterance has gone quiet, before its end.
  if (config.preemptive) vad.noticeQuiet?.(config.preemptive.quietMs);
  // bargeIn.backchannels: the VAD says when speech has been voiced past maxMs, before its end.
  if (config.backchannel) vad.noticeVoiced?.(config.backchannel.maxMs);
}

/** Subscribes to every component; returns the functions that unsubscribe. */
export function wireComponents({ player, vad, capture }: SessionComponents, sink: InputSink): Array<() => void> {
  const { dispatch, events } = sink;
  return [
    vad.on("speechStart", (e) => {
      events.emit("vad", { kind: "speechStart", direct: e.pausedPlayback, contextTime: e.contextTime });
      sink.noteSpeech(true);
      dispatch({ kind: "speechStart", pausedByWorker: e.pausedPlayback, at: now(), contextTime: e.contextTime });
    }),
    vad.on("judged", (e) => sink.sttOrder.judged(e.contextTime)),
    vad.on("speechRealStart", (e) => {
      events.emit("vad", { kind: "speechRealStart", direct: false, contextTime: e.contextTime });
      dispatch({ kind: "speechRealStart", at: now() });
    }),
    vad.on("misfire", (e) => {
      sink.noteSpeech(false);
      events.emit("vad", { kind: "misfire", direct: e.resumedPlayback, contextTime: e.contextTime });
      dispatch({ kind: "misfire", resumedByWorker: e.resumedPlayback, at: now() });
    }),
    vad.on("onsetPause", (e) => events.emit("vad", { kind: e.action === "duck" ? "onsetDuck" : e.paused ? "onsetPause" : "onsetRelease", direct: true, contextTime: e.contextTime })),
    vad.on("pauseLapse", (e) => events.emit("vad", { kind: e.lapsed ? "pauseLapse" : "pauseRenew", direct: true, contextTime: e.contextTime })),
    // turn.preemptive's cues (only once the session asked for them: VadPort.noticeQuiet).
    vad.on("speechQuiet", (e) => dispatch({ kind: "speechQuiet", at: now(), voiceEnd: e.lastSpeechContextTime })),
    vad.on("speechResumed", () => dispatch({ kind: "speechResumed", at: now() })),
    // bargeIn.backchannels: speech over the bot voiced past maxMs (only once asked for: VadPort.noticeVoiced).
    vad.on("speechVoiced", () => dispatch({ kind: "speechVoiced", at: now() })),
    // turn.detector's verdicts; one it could not give leaves the turn to its words.
    vad.on("turnPrediction", (e) => {
      if (e.probability === undefined) {
        events.emit("warning", { service: "vad", message: `the turn detector gave no verdict on the last utterance (${e.error ?? "no probability"}); its words decide the turn` });
      } else {
        events.emit("vad", { kind: "turnPrediction", probability: e.probability, inferenceMs: e.inferenceMs, contextTime: e.contextTime });
      }
      // A turn waiting for this verdict is decided now, by the verdict or else by its words.
      dispatch({ kind: "turnPredicted", at: now(), probability: e.probability });
    }),
    vad.on("speechEnd", (e) => {
      sink.noteSpeech(false);
      events.emit("vad", { kind: "speechEnd", direct: false, contextTime: e.contextTime });
      dispatch({ kind: "speechEnd", at: now(), voiceEnd: e.lastSpeechContextTime, verdictDue: e.verdictDue === true });
    }),
    player.on("started", (e) => sink.playbackStarted(e.generation, e.at, e.audibleContextTime)),
    player.on("ended", (e) => dispatch({ kind: "replyDone", generation: e.generation })),
    capture.on("frame", (e) => {
      sink.sttOrder.captured(e.capturedAt);
      sink.sendAudio(e.pcm, e.capturedAtMs, e.capturedAt);
    }),
    () => sink.sttOrder.clear(),
    capture.on("gap", (e) => sink.counters.captureGap(e.ms)),
    capture.on("echo", (e) => sink.counters.echoStats(e)),
    // Without the microphone or the VAD there is no conversation: end it
    // cleanly (the transcript so far is kept) and say what to do.
    capture.on("ended", () =>
      sink.inputEnded(
        new MicrophoneError(
          "the microphone stopped while the session was using it (device unplugged, permission revoked, or the input stream ended); the session has stopped: call start() again",
          { reason: "ended" },
        ),
      ),
    ),
    vad.on("error", (e) => sink.fail(e.error)),
    // The model took over from the level fallback; or it never will: the session goes on degraded.
    // The machine first, so that an app reading `session.degraded` in its handler reads false.
    vad.on("ready", (e) => {
      dispatch({ kind: "vadReady" });
      events.emit("vad", { kind: "ready", loadMs: e.loadMs, contextTime: e.contextTime });
    }),
    vad.on("loadError", (e) => events.emit("error", { error: e.error, fatal: false })),
    player.on("contextState", (e) => onContextState(e.state, sink)),
  ];
}

/**
 * The AudioContext stopped running, or runs again. While it is suspended or
 * interrupted nothing is captured or played, so say so, and cut a playing
 * reply at what was heard: resumed after a phone call, the rest would be
 * stale. Once it is closed the session cannot go on.
 */
function onContextState(state: string, sink: InputSink): void {
  if (state === "closed") {
    sink.fail(new AudioContextError("the AudioContext was closed while the session was using it; the session has stopped: call start() again (with a new context if you passed one in)", { service: "audio" }));
    return;
  }
  if (state === "running") {
    sink.events.emit("audioState", { state });
    return;
  }
  sink.events.emit("warning", {
    service: "audio",
    message: `the AudioContext is ${state}: no audio is captured or played until it runs again (a context the session created is resumed by it, at the page's next tap or key press where the browser asks for one; one you passed in is yours to resume)`,
  });
  sink.events.emit("audioState", { state: state === "interrupted" ? "interrupted" : "suspended" });
  sink.dispatch({ kind: "interrupt", reason: "audio" });
}

/** The `vad` meter events (probability and level) and `metrics` every 250 ms. */
export function wireMeter({ vad, capture }: SessionComponents, sink: InputSink, metrics: () => VoiceSessionEvents["metrics"]): Array<() => void> {
  let level = 0;
  vad.setMeter(true);
  capture.setMeter(true);
  const timer = setInterval(() => sink.events.emit("metrics", metrics()), 250);
  return [
    capture.on("level", (e) => (level = e.rms)),
    // The level of the frame the probability is for, where the VAD gives it (a muted or swapped mic shows at once).
    vad.on("probability", (e) => sink.events.emit("vad", { kind: "meter", probability: e.probability, level: e.rms ?? level })),
    () => clearInterval(timer),
  ];
}

/** What the STT link reports, for the machine and the app. */
export function onSttEvent(e: SttLinkEvent, sink: InputSink, reportError: (err: unknown) => void): void {
  const { dispatch, events } = sink;
  switch (e.kind) {
    // The transcript: kept in order behind what the VAD has heard (SttOrder).
    case "word":
      return sink.sttOrder.arrive({ kind: "word", text: e.text, at: now(), spokenAt: e.spokenAtMs, ...sink.echoOf(e.text, e.spokenAtMs) });
    case "pause":
      return sink.sttOrder.arrive({ kind: "sttPause", probability: e.probability });
    case "endOfTurn":
      return sink.sttOrder.arrive({ kind: "sttEndOfTurn", eager: e.eager, at: now(), text: e.text });
    case "turnResumed":
      return sink.sttOrder.arrive({ kind: "sttTurnResumed" });
    case "wordRetracted":
      return sink.sttOrder.arrive({ kind: "wordRetracted" });
    case "marker":
      return sink.sttOrder.arrive({ kind: "sttMarker" });
    case "connected":
      dispatch({ kind: "sttConnected" });
      if (e.attempts > 0) events.emit("reconnected", { service: "stt", attempts: e.attempts });
      return;
    case "reconnecting":
      dispatch({ kind: "sttLost" });
      events.emit("warning", { service: "stt", message: e.message, cause: e.cause });
      events.emit("reconnecting", { service: "stt", attempt: e.attempt, delayMs: e.delayMs, reason: e.reason, cause: e.cause });
      return;
    case "warning":
      return events.emit("warning", { service: "stt", message: e.message });
    case "overload": {
      const { kind: _, ...overload } = e;
      return events.emit("overload", { service: "stt", ...overload });
    }
    case "error":
      return e.fatal ? sink.fail(e.error) : reportError(e.error);
  }
}

/**
 * The providers' own warnings (a TTS start-up retry, …) become the session's
 * `warning` events, and their errors outside any call (a speech-to-speech
 * service's `error` event) its non-fatal `error` events.
 */
export function forwardWarnings(providers: readonly ProviderEventSource[], events: Emitter<VoiceSessionEvents>): Array<() => void> {
  return providers.flatMap((p) => [
    ...(p.on ? [p.on("warning", (w) => events.emit("warning", { service: w.service, message: w.message, cause: w.cause }))] : []),
    ...(p.on ? [p.on("error", (e) => events.emit("error", { error: e.error, fatal: false }))] : []),
  ]);
}
