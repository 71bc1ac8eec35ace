/**
 * The VAD worker (dist/vad-worker.js, a module worker). Runs Silero on every
 * 512-sample frame that arrives on a frame port (from the capture worklet, or
 * from the main thread's feed), drives the SpeechDetector, and posts speech
 * events to the main thread. The main thread gets no per-frame message unless
 * the meter is on, and then at most one per `meterIntervalMs` of audio.
 *
 * Ordering: frames are processed strictly one at a time in arrival order
 * (the model is stateful); frames that arrive while the model runs wait in
 * `pending`. While the model loads, the level fallback (src/vad/level-voice.ts)
 * judges them, unless `waitForModel` (then they wait too); the one
 * SpeechDetector takes both, so the model takes over between two frames,
 * inside an utterance if one goes on. Speech start can pause playback directly, without a
 * round trip through the main thread: by writing the Player's shared control
 * block (crossOriginIsolated pages) or else by a message on the playback
 * control port.
 *
 * Auto-pause is one of several writers of the playback pause, so it never
 * pauses unconditionally: it pauses with the token (the playback generation)
 * armed by `auto-pause`, and a misfire resumes that same token. The worklet
 * applies a pause only to the generation it names, so a pause of this worker's
 * that lands after the session resumed and moved on to the next reply holds
 * nothing (see src/audio/pause-token.ts).
 */
/// <reference lib="webworker" />
import type { VadFrameMessage } from "../../protocol/frames.js";
import { VAD_FRAME_SAMPLES } from "../../protocol/frames.js";
import { PlaybackWriter, type PlaybackWrite } from "./playback-writer.js";
import { describe, frameRms } from "./frame-checks.js";
import type {
  MainToVadMessage,
  VadFlushMessage,
  VadToMainMessage,
  VadWorkerSettings,
} from "../../protocol/vad-messages.js";
import { SpeechDetector, type FrameTiming, type SpeechEvent } from "../speech-detector.js";
import { OnsetCue, type OnsetAction } from "../onset-cue.js";
import { LevelVoice } from "../level-voice.js";
import { AssetFetchFailure, fetchAsset, looksLikeWasm } from "./fetch-asset.js";
import { configureOrt, createSilero, type SileroModel } from "./silero.js";
import { loadTurnDetector, turnAudio, type TurnDetectorHost } from "./turn-detector-host.js";

const scope = self as unknown as DedicatedWorkerGlobalScope;
const MS_PER_FRAME = (VAD_FRAME_SAMPLES / 16000) * 1000;

let settings: VadWorkerSettings | undefined;
let model: SileroModel | undefined;
let detector: SpeechDetector | undefined;
/** The level fallback, while it judges the frames (from init until the model is ready; for good if it fails). */
let level: LevelVoice | undefined;
/** The app's end-of-turn model (settings.turnDetector), and the utterances it has still to judge. */
let turnDetector: TurnDetectorHost | undefined;
const turnsToJudge: TurnToJudge[] = [];
/** An ended utterance: its audio, its last speech frame and the frame that ended it. */
interface TurnToJudge {
  audio: Float32Array;
  lastSpeech: FrameTiming;
  at: FrameTiming;
}
/** The `notice-quiet` request, kept for a detector made after it. */
let quietNoticeMs: number | null = null;
/** The `notice-voiced` request, kept likewise. */
let voicedNoticeMs: number | null = null;
/** The level cue that may pause before Silero calls speech (vad.onsetPause); undefined when off. */
let onset: OnsetCue | undefined;
const framePorts: MessagePort[] = [];
/** Where this worker's pauses, resumes and ducks go: the Player's shared control block, else its control port. */
const playback = new PlaybackWriter();
const pending: (VadFrameMessage | VadFlushMessage)[] = [];
let draining = false;
/** The drain loop in progress, so dispose() can let the current inference finish before releasing the session. */
let drainDone: Promise<void> = Promise.resolve();
let listening = true;
let disposed = false;
let meterOn = false;
let lastMeterSample = -Infinity;
/** The generation auto-pause pauses on speech start; null: disarmed. */
let autoPauseToken: number | null = null;
/** The token this worker paused with at the current speech start, until it ends (or is disarmed). */
let pausedToken: number | null = null;
/** The token the onset cue ducked, until its release, its pause's hand-over to a speech start, or disarming. */
let duckedToken: number | null = null;
/** The last frame judged: where the model takes over from the level fallback (the `ready` message says). */
let lastJudged: FrameTiming = { sampleIndex: 0, contextTime: 0 };
/** How often (16 kHz samples of audio) the worker says how far it has judged (VadJudgedMessage): 128 ms. */
const JUDGED_EVERY_SAMPLES = 2048;
let lastJudgedPost = -JUDGED_EVERY_SAMPLES;
/** Whether the main thread asked for the `judged` reports (the session does; a bare VadWorker gets only its events). */
let judgedOn = false;
/** Set by `pause`; the model's state is reset before the next frame (never during a run). */
let resetModel = false;

const post = (message: VadToMainMessage, transfer: Transferable[] = []) => scope.postMessage(message, transfer);
const now = () => performance.timeOrigin + performance.now();

scope.addEventListener("message", (event: MessageEvent<MainToVadMessage>) => {
  const message = event.data;
  switch (message?.kind) {
    case "ping":
      post({ kind: "pong" });
      break;
    case "init":
      void init(message.settings);
      break;
    case "connect-frames":
      framePorts.push(message.port);
      message.port.onmessage = (e: MessageEvent<VadFrameMessage | VadFlushMessage>) => enqueue(e.data);
      break;
    case "connect-playback-control":
      playback.connect(message.port, message.control);
      break;
    case "auto-pause":
      autoPauseToken = message.token;
      if (message.token === null) {
        pausedToken = null;
        onset?.handOver();
        liftDuck();
      }
      break;
    case "set-meter":
      meterOn = message.on;
      lastMeterSample = -Infinity;
      break;
    case "report-judged":
      judgedOn = message.on;
      lastJudgedPost = -JUDGED_EVERY_SAMPLES;
      break;
    case "pause":
      listening = false;
      // Drop queued frames but keep flush markers, so a flush() still resolves.
      for (let i = pending.length - 1; i >= 0; i--) if (pending[i].kind === "vad-frame") pending.splice(i, 1);
      if (detector) emit(detector.pause(), now());
      if (onset?.holding) applyOnset("release", now());
      resetModel = true;
      startDrain(); // an utterance the pause ended may have a turn to judge
      break;
    case "resume":
      listening = true;
      break;
    case "end-when-quiet":
      if (detector && listening) emit(detector.endWhenQuiet(message.quietMs), now());
      startDrain(); // an utterance it ended may have a turn to judge
      break;
    case "notice-quiet":
      quietNoticeMs = message.quietMs;
      detector?.noticeQuiet(quietNoticeMs);
      break;
    case "notice-voiced":
      voicedNoticeMs = message.voicedMs;
      detector?.noticeVoiced(voicedNoticeMs);
      break;
    case "dispose":
      void dispose();
      break;
  }
});

async function init(s: VadWorkerSettings): Promise<void> {
  settings = s;
  const started = performance.now();
  if (!s.waitForModel) {
    startDetecting(s);
    level = new LevelVoice();
    post({ kind: "fallback" });
  }
  try {
    const progress = (asset: "model" | "wasm", url: string) => (loaded: number, total: number, cached?: boolean) =>
      post({ kind: "progress", asset, url, loaded, total, ...(cached === undefined ? {} : { cached }) });
    const [wasm, modelBytes] = await Promise.all([
      fetchAsset(s.wasmUrl, progress("wasm", s.wasmUrl)),
      fetchAsset(s.modelUrl, progress("model", s.modelUrl)),
    ]);
    if (!looksLikeWasm(wasm)) {
      throw new AssetFetchFailure(s.wasmUrl, `${s.wasmUrl} is not a WebAssembly file (wrong path or an HTML error page?)`);
    }
    configureOrt(wasm);
    let loaded: SileroModel;
    try {
      loaded = await createSilero(s.model, modelBytes);
    } catch (err) {
      throw new AssetFetchFailure(s.modelUrl, `${s.modelUrl} could not be loaded as the Silero ${s.model} model: ${(err as Error)?.message ?? err}`);
    }
    if (s.turnDetector) turnDetector = await loadTurnDetector(s.turnDetector.url, s.turnDetector.options);
    if (disposed) {
      await loaded.release();
      await turnDetector?.release();
      return;
    }
    if (!detector) startDetecting(s);
    // From the next frame on the model judges (not before `ready` is posted: the main thread's hand-over
    // is that message); an utterance the fallback began goes on in the same detector.
    model = loaded;
    level = undefined;
    post({ kind: "ready", loadMs: performance.now() - started, ...lastJudged, workerTime: now() });
    startDrain();
  } catch (err) {
    const url = err instanceof AssetFetchFailure ? err.url : s.modelUrl;
    const asset = url === s.wasmUrl ? "wasm" : url === s.modelUrl ? "model" : undefined;
    post({ kind: "load-error", url, asset, message: (err as Error)?.message ?? String(err) });
  }
}

/** The speech state machine and the onset cue, made once, before the first frame is judged. */
function startDetecting(s: VadWorkerSettings): void {
  detector = new SpeechDetector({ ...s, msPerFrame: MS_PER_FRAME, keepAudio: s.speechEndAudio || s.turnDetector !== undefined });
  detector.noticeQuiet(quietNoticeMs);
  detector.noticeVoiced(voicedNoticeMs);
  onset = s.onsetPause ? new OnsetCue(s.onsetPause) : undefined;
}

function enqueue(message: VadFrameMessage | VadFlushMessage): void {
  if (disposed) return;
  if (message?.kind === "vad-flush") {
    pending.push(message);
    startDrain();
    return;
  }
  if (!listening || message?.kind !== "vad-frame") return;
  if (!(message.frame instanceof Float32Array) || message.frame.length !== VAD_FRAME_SAMPLES) {
    post({ kind: "runtime-error", message: `VAD frames must be Float32Array(${VAD_FRAME_SAMPLES}); got ${describe(message.frame)}` });
    return;
  }
  pending.push(message);
  startDrain();
}

function startDrain(): void {
  if (!draining) drainDone = drain();
}

/** Runs the model over pending frames, one at a time; only one drain runs at once. */
async function drain(): Promise<void> {
  if (draining || !detector || (!model && !level)) return;
  draining = true;
  try {
    while ((pending.length > 0 || turnsToJudge.length > 0) && !disposed) {
      // An ended utterance's turn is judged before the next frame: its verdict is about that utterance.
      if (turnsToJudge.length > 0) {
        await judgeTurn(turnsToJudge.shift()!);
        continue;
      }
      const message = pending.shift()!;
      if (message.kind === "vad-flush") {
        post({ kind: "flushed", id: message.id });
        continue;
      }
      if (resetModel && model) {
        model.reset();
        resetModel = false;
      }
      const echo = message.echo ?? "clear";
      const inferenceStart = performance.now();
      const probability = model ? await model.probability(message.frame) : level!.probability(message.frame, echo, message.echoPath === true);
      const inferenceMs = performance.now() - inferenceStart;
      if (disposed || !listening) continue;
      const at: FrameTiming = (lastJudged = { sampleIndex: message.sampleIndex, contextTime: message.contextTime });
      const decidedAt = now();
      if (meterOn && message.sampleIndex - lastMeterSample >= (settings!.meterIntervalMs * 16000) / 1000) {
        lastMeterSample = message.sampleIndex;
        post({ kind: "probability", probability, inferenceMs, rms: frameRms(message.frame), ...at, workerTime: decidedAt });
      }
      emit(detector.push(message.frame, probability, at, echo), decidedAt);
      // After the speech events: a speech start on this very frame has taken any cue's pause over.
      if (onset) {
        const armed = autoPauseToken !== null && pausedToken === null;
        applyOnset(onset.push(message.frame, echo, armed, detector.speaking, message.echoPath === true, probability), decidedAt, at);
      }
      // After the frame's own events: what the STT said of this audio goes to the session behind them.
      if (judgedOn && (message.sampleIndex < lastJudgedPost || message.sampleIndex - lastJudgedPost >= JUDGED_EVERY_SAMPLES)) {
        lastJudgedPost = message.sampleIndex;
        post({ kind: "judged", ...at, workerTime: decidedAt });
      }
    }
  } catch (err) {
    post({ kind: "runtime-error", message: `Silero inference failed: ${(err as Error)?.message ?? err}` });
  } finally {
    draining = false;
  }
}

function emit(events: SpeechEvent[], workerTime: number): void {
  for (const e of events) {
    const timing = { sampleIndex: e.at.sampleIndex, contextTime: e.at.contextTime, workerTime };
    switch (e.kind) {
      case "speechStart": {
        // Pause first: this is the latency-critical step. A pause the onset cue made is this speech's now;
        // a duck of the cue's gives way to this pause (lifted after it, so nothing is heard louder between).
        const cued = onset?.holding === true && pausedToken !== null;
        if (onset?.holding) onset.handOver();
        const token = cued ? pausedToken : autoPauseToken;
        const pause = cued || (token !== null && pausedToken === null && send("pause", token, e.at.sampleIndex));
        if (pause) pausedToken = token;
        liftDuck();
        post({ kind: "speechStart", probability: e.probability, pausedPlayback: pause, pauseToken: pause ? token : null, ...timing });
        break;
      }
      case "speechRealStart":
        post({ kind: "speechRealStart", ...timing });
        break;
      case "speechQuiet":
        post({ kind: "speechQuiet", lastSpeechSampleIndex: e.lastSpeech.sampleIndex, lastSpeechContextTime: e.lastSpeech.contextTime, ...timing });
        break;
      case "speechResumed":
        post({ kind: "speechResumed", ...timing });
        break;
      case "speechVoiced":
        post({ kind: "speechVoiced", voicedMs: e.voicedMs, ...timing });
        break;
      case "pauseLapse": {
        // Only our own pause lapses, by its token; a renewal takes the token armed now (a newer reply's, if one began).
        const token = e.lapsed ? pausedToken : autoPauseToken;
        const done = token !== null && (e.lapsed || pausedToken !== null) && send(e.lapsed ? "resume" : "pause", token, e.at.sampleIndex);
        if (done && !e.lapsed) pausedToken = token;
        if (done) post({ kind: "pauseLapse", lapsed: e.lapsed, pauseToken: token, ...timing });
        break;
      }
      case "misfire": {
        // Resume our own pause, by its token: if the session has moved on, this is a no-op.
        const token = pausedToken;
        const resume = token !== null && send("resume", token, e.at.sampleIndex);
        pausedToken = null;
        post({ kind: "misfire", resumedPlayback: resume, pauseToken: resume ? token : null, ...timing });
        break;
      }
      case "speechEnd": {
        // The session decides what a confirmed utterance does to playback.
        pausedToken = null;
        // Its end copied before the audio is transferred: the turn detector runs after this event is posted.
        const verdictDue = turnDetector !== undefined && e.audio !== undefined;
        if (verdictDue) turnsToJudge.push({ audio: turnAudio(e.audio!), lastSpeech: e.lastSpeech, at: e.at });
        const audio = settings?.speechEndAudio ? e.audio : undefined;
        post(
          {
            kind: "speechEnd",
            lastSpeechSampleIndex: e.lastSpeech.sampleIndex,
            lastSpeechContextTime: e.lastSpeech.contextTime,
            audioStartIndex: e.audioStartIndex,
            audio,
            verdictDue,
            ...timing,
          },
          audio ? [audio.buffer] : [],
        );
        break;
      }
    }
  }
}

/** Runs the turn detector on an ended utterance and posts its verdict (or why there is none). */
async function judgeTurn({ audio, lastSpeech, at }: TurnToJudge): Promise<void> {
  const verdict = await turnDetector!.predict(audio);
  if (disposed) return;
  post({
    kind: "turnPrediction",
    ...verdict,
    lastSpeechSampleIndex: lastSpeech.sampleIndex,
    lastSpeechContextTime: lastSpeech.contextTime,
    sampleIndex: at.sampleIndex,
    contextTime: at.contextTime,
    workerTime: now(),
  });
}

/**
 * The onset cue's duck or pause (with the armed token, or the token its duck
 * holds), or its release (of whatever it holds); told to the main thread.
 */
function applyOnset(action: OnsetAction, workerTime: number, at: FrameTiming = { sampleIndex: 0, contextTime: 0 }): void {
  if (action === null) return;
  let token: number | null;
  let sent: boolean;
  if (action === "release") {
    token = pausedToken ?? duckedToken;
    // Resume before lifting the duck: the replayed samples fade in at the duck's gain, then it ramps up.
    sent = token !== null && (pausedToken === null || send("resume", pausedToken, at.sampleIndex));
    pausedToken = null;
    if (sent) liftDuck(at.sampleIndex);
  } else {
    // A new cue (not a duck turning into a pause): with `resetModel`, Silero judges from here as a fresh stream.
    if (duckedToken === null && settings?.onsetPause?.resetModel) resetModel = true;
    token = duckedToken ?? autoPauseToken;
    sent = token !== null && send(action, token, at.sampleIndex);
    if (sent && action === "pause") pausedToken = token;
    if (sent && action === "duck") duckedToken = token;
  }
  if (token === null || !sent) {
    onset?.handOver();
    liftDuck(at.sampleIndex);
    return;
  }
  post({ kind: "onsetPause", action, paused: action !== "release", pauseToken: token, sampleIndex: at.sampleIndex, contextTime: at.contextTime, workerTime });
}

/** A pause, resume, duck (at the onset cue's depth) or unduck of playback generation `token`; false: no playback connected. */
function send(kind: PlaybackWrite, token: number, sampleIndex: number): boolean {
  return playback.send(kind, token, sampleIndex, settings?.onsetPause?.duckDb ?? 0);
}

/** Lifts the onset cue's duck, if one stands. */
function liftDuck(sampleIndex = 0): void {
  if (duckedToken !== null) send("unduck", duckedToken, sampleIndex);
  duckedToken = null;
}

async function dispose(): Promise<void> {
  disposed = true;
  pending.length = 0;
  for (const port of framePorts) {
    port.onmessage = null;
    port.close();
  }
  framePorts.length = 0;
  playback.close();
  await drainDone;
  try {
    await model?.release();
  } catch {
    // Releasing a session that failed mid-run: the worker is about to be terminated anyway.
  }
  await turnDetector?.release();
  turnDetector = undefined;
  turnsToJudge.length = 0;
  model = undefined;
  detector = undefined;
  post({ kind: "disposed" });
}
