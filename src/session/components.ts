/**
 * Builds a session's real components in the browser: one AudioContext, the
 * Microphone and its capture worklet, the Player and its playback worklet, and
 * the VAD worker, wired so that VAD frames go capture worklet → worker with no
 * main-thread hop, and the worker can pause playback directly.
 */
import { Microphone } from "../audio/microphone.js";
import { Player } from "../audio/player.js";
import { AudioContextError, ConfigError, UnsupportedError } from "../errors.js";
import { browserSupport } from "../support.js";
import { LevelMeter, LevelReader, SILENT_DB, readChannel } from "../audio/level-meter.js";
import { openWebrtcLoopback, type WebrtcLoopback } from "../audio/webrtc-loopback.js";
import { ensureRunning } from "../audio/worklet-loader.js";
import { watchContext } from "../audio/context-watch.js";
import { applyAudioSessionType } from "../audio/audio-session.js";
import { VadWorker } from "../vad/vad-worker-client.js";
import type { TurnDetectorOptions } from "../vad/turn-detector.js";
import type { CapturePort, ComponentsContext, DevicesPort, PlayerPort, SessionComponents, VadPort } from "./ports.js";
import { echoGuardEnabled } from "./session-options.js";
import { DEFAULTS } from "../defaults.js";
import type { VoiceSessionOptions } from "./types.js";

/** Kyutai takes 80 ms frames (1920 samples at 24 kHz); a 16 kHz service takes 20 ms. */
const UPLINK_FRAME_MS = (rate: number) => (rate === 24000 ? 80 : 20);


let tapCount = 0;

/** The session's default ComponentsFactory, given the session's options. */
export async function createComponents(options: VoiceSessionOptions, { sttFormat, minSpeechMs, signal, inputDeviceId, onProgress }: ComponentsContext): Promise<SessionComponents> {
  // Unset, each part loads its files from beside bargein's bundle (src/assets/bundled-assets.ts).
  const { assetsPath, assets } = options;
  const support = browserSupport();
  if (!support.supported) {
    const names = support.missing.map((m) => `${m.feature} (for ${m.neededFor})`).join("; ");
    throw new UnsupportedError(`This browser lacks what bargein needs: ${names}. Check isSupported() before offering voice`, { service: "audio" });
  }
  const ownsContext = !options.audio?.context;
  let context: AudioContext;
  try {
    context = options.audio?.context ?? new AudioContext({ latencyHint: "interactive" });
  } catch (err) {
    throw new AudioContextError("could not create an AudioContext; this browser may not support Web Audio", { service: "audio", cause: err });
  }
  const releases: Array<() => unknown> = [];
  let released = false;
  const release = async () => {
    released = true;
    for (const fn of releases.splice(0).reverse()) await Promise.resolve(fn()).catch(() => {});
    if (ownsContext) await context.close().catch(() => {});
  };
  /** `stop` is owed once `started` resolves: at release, or at once if the release came first (another part failed). */
  const owned = (started: Promise<unknown>, stop: () => unknown) =>
    started.then(() => {
      if (released) void Promise.resolve(stop()).catch(() => {});
      else releases.push(stop);
    });
  try {
    // The echo guard's tap joins this session's player and capture, by a name of their own.
    const echoTap = echoGuardEnabled(options) === false ? undefined : `bargein-echo-${++tapCount}-${Math.random().toString(36).slice(2)}`;
    let loopback: WebrtcLoopback | undefined;
    if (options.audio?.outputRoute === "webrtc-loopback") {
      loopback = await openWebrtcLoopback(context);
      releases.push(() => loopback?.close());
    }
    const player = new Player({ context, assetsPath, assets, prebufferMs: options.audio?.prebufferMs, destination: loopback?.input ?? options.audio?.output, echoTap, outputLatency: options.audio?.outputLatency });
    const vad = new VadWorker({
      assetsPath,
      assets,
      // The session's own silence, shorter than a VadWorker's (DEFAULTS.vad.redemptionMs says why).
      redemptionMs: DEFAULTS.vad.redemptionMs,
      ...options.vad,
      // One setting: the speech that confirms a barge-in is the VAD's real start.
      minSpeechMs,
      // The session listens before the model is ready unless the app asks it to wait (vad.waitForModel).
      waitForModel: options.vad?.waitForModel ?? DEFAULTS.vad.waitForModel,
      ...turnDetectorOf(options),
    });
    releases.push(() => vad.stop());
    // The worker client's report is the session's event as it is (VadLoadProgress is a LoadProgressEvent).
    if (onProgress) releases.push(vad.on("progress", onProgress));
    // Before the microphone opens, where the app asked for a type (audio.sessionType).
    applyAudioSessionType(options.audio?.sessionType ?? DEFAULTS.audio.sessionType);
    const mic = new Microphone({
      context,
      assetsPath,
      assets,
      input: options.input,
      deviceId: inputDeviceId,
      uplink: { sampleRate: sttFormat.sampleRate, format: sttFormat.encoding, frameMs: UPLINK_FRAME_MS(sttFormat.sampleRate) },
      echoGuard: echoTap ? { tap: echoTap, tailMs: options.echoGuard?.tailMs, cleanUplink: options.echoGuard?.cleanUplink } : undefined,
    });
    // The context runs before any part starts, so the player reads its output latency before the
    // microphone and the worklets join the graph (src/audio/output-latency.ts: Firefox's freeze).
    await ensureRunning(context);
    // The model takes seconds to load: the worklets load and the microphone opens meanwhile (the
    // permission prompt comes at once, not after the download), and unless vad.waitForModel the
    // VAD's start resolves once its worker runs the level fallback. The first failure is thrown at
    // once (a refused microphone does not wait for the model); a part that starts after it is stopped.
    await Promise.all([owned(player.start(), () => player.close()), vad.start({ signal }), owned(mic.start(), () => mic.stop())]);
    // The worker pauses playback itself on speech start: through the shared
    // control block where the page is cross-origin isolated, else a port.
    vad.connectPlaybackControl(player.createControlPort(), player.controlBuffer);
    mic.connectVad(vad.framePort());
    const components: SessionComponents = {
      player: playerPort(player, context, ownsContext, loopback),
      vad: vadPort(vad),
      capture: capturePort(mic),
      devices: devicesPort(),
      dispose: release,
    };
    return components;
  } catch (err) {
    await release();
    throw err;
  }
}

/**
 * Moves the bot's audio to another output: the AudioContext's, or on the
 * "webrtc-loopback" route the loopback's `<audio>` element's.
 * vad-web #159: in Chromium, AudioContext.setSinkId can turn off the
 * microphone's echo cancellation, which only cancels audio the browser
 * routes itself; the element's does not. bargein's echo guard (`echoGuard`)
 * depends on neither.
 * https://developer.mozilla.org/en-US/docs/Web/API/AudioContext/setSinkId
 */
async function setSinkId(target: AudioContext | HTMLAudioElement, deviceId: string): Promise<void> {
  const sink = (target as { setSinkId?: (id: string) => Promise<void> }).setSinkId;
  if (typeof sink !== "function") {
    const what = target instanceof AudioContext ? "AudioContext.setSinkId" : "HTMLMediaElement.setSinkId";
    throw new ConfigError(`VoiceSession.setOutputDevice(): this browser lacks ${what}, so the bot's audio cannot be moved to another output; let the user pick the output in the system settings`);
  }
  await sink.call(target, deviceId);
}

function playerPort(player: Player, context: AudioContext, ownsContext: boolean, loopback: WebrtcLoopback | undefined): PlayerPort {
  let meter: LevelMeter | undefined;
  // On a crossOriginIsolated page the playback worklet keeps the level in shared memory: no analyser for it.
  const shared = player.levelCell && new LevelReader(player.levelCell);
  // Rendered → heard: the context's own latency, and the loopback's on that route.
  const outputLatency = () => player.outputLatency + (loopback?.latency ?? 0);
  return {
    setSinkId: async (deviceId) => {
      await setSinkId(loopback?.element ?? context, deviceId);
      // Only where the context has setSinkId (not Firefox, whose getter may block: output-latency.ts).
      if (!loopback) player.remeasureOutputLatency();
    },
    level: (bins) => {
      const node = player.node;
      if (!node) return { rmsDb: SILENT_DB };
      return readChannel(shared, bins, () => {
        if (!meter) node.connect((meter = new LevelMeter(context)).node);
        return meter;
      });
    },
    write: (pcm, o) => void player.write(pcm, o),
    setGeneration: (g) => player.fence(g),
    endGeneration: (g) => player.end(g),
    flush: () => player.flush(),
    pause: (token) => player.pause(token),
    resume: (token) => player.resume(token),
    renderedSeconds: () => {
      const position = player.position();
      return position.generation === player.generation ? position.seconds : 0;
    },
    get outputLatency() {
      return outputLatency();
    },
    on: ((name: "started" | "ended" | "contextState", fn: (e: any) => void) => {
      if (name === "contextState") return watchContext(context, ownsContext, (state) => fn({ state }));
      if (name === "ended") return player.on("ended", (e) => fn({ generation: e.generation }));
      return player.on("started", (e) => {
        // Rendered at e.contextTime; heard one output latency later. Mapped to performance.now().
        const renderedAgoMs = (context.currentTime - e.contextTime) * 1000;
        fn({
          generation: e.generation,
          at: performance.now() - renderedAgoMs + outputLatency() * 1000,
          audibleContextTime: e.contextTime + outputLatency(),
        });
      });
    }) as PlayerPort["on"],
  };
}

/** `turn.detector`'s module for the VAD worker (its threshold and hold are the turn machine's). */
function turnDetectorOf(options: VoiceSessionOptions): { turnDetector?: TurnDetectorOptions } {
  const detector = options.turn?.detector;
  return detector ? { turnDetector: { module: detector.module, ...(detector.options ? { options: detector.options } : {}) } } : {};
}

function vadPort(vad: VadWorker): VadPort {
  return {
    get modelReady() {
      return vad.modelReady;
    },
    setAutoPause: (token) => vad.setAutoPause(token),
    setMeter: (on) => vad.setMeter(on),
    reportJudged: (on) => vad.reportJudged(on),
    endWhenQuiet: (quietMs) => vad.endWhenQuiet(quietMs),
    noticeQuiet: (quietMs) => vad.noticeQuiet(quietMs),
    noticeVoiced: (voicedMs) => vad.noticeVoiced(voicedMs),
    on: ((name: "speechStart" | "speechRealStart" | "speechEnd" | "misfire" | "pauseLapse" | "speechQuiet" | "speechResumed" | "speechVoiced" | "turnPrediction" | "onsetPause" | "probability" | "judged" | "ready" | "error" | "loadError", fn: (e: any) => void) => {
      // A model that failed while the other parts were still starting failed before the session
      // subscribed: it hears it at once. (`ready` needs no replay: the session reads `modelReady`.)
      if (name === "loadError" && vad.loadError) queueMicrotask(() => fn({ error: vad.loadError }));
      return name === "error" || name === "loadError" ? vad.on(name, (error) => fn({ error })) : vad.on(name, fn);
    }) as VadPort["on"],
  };
}

/** navigator.mediaDevices, as the session's DevicesPort. */
function devicesPort(): DevicesPort | undefined {
  const media = globalThis.navigator?.mediaDevices;
  if (!media?.enumerateDevices) return undefined;
  const pick = (list: MediaDeviceInfo[], kind: MediaDeviceKind) =>
    list.filter((d) => d.kind === kind).map((d) => ({ deviceId: d.deviceId, groupId: d.groupId, label: d.label }));
  return {
    list: async () => {
      const list = await media.enumerateDevices();
      return { inputs: pick(list, "audioinput"), outputs: pick(list, "audiooutput") };
    },
    on: (_name, fn) => {
      media.addEventListener("devicechange", fn);
      return () => media.removeEventListener("devicechange", fn);
    },
  };
}

function capturePort(mic: Microphone): CapturePort {
  return {
    setDevice: async (deviceId) => {
      const id = await mic.setDevice(deviceId);
      // The worklet reports the gap once the new device's first sample came (at most a second
      // of context time); a context that stopped rendering, or a stopped mic, reports nothing: NaN.
      return new Promise<{ gapMs: number }>((resolve) => {
        const done = (gapMs: number) => {
          off();
          clearTimeout(timer);
          resolve({ gapMs });
        };
        const off = mic.on("swapGap", (e) => e.id === id && done(e.ms));
        const timer = setTimeout(() => done(NaN), 3000);
      });
    },
    get deviceId() {
      return mic.deviceId;
    },
    level: (bins) => mic.level(bins),
    setMeter: (on) => mic.setMeter(on),
    setMuted: (muted) => mic.setMuted(muted),
    on: ((name: "frame" | "level" | "ended" | "gap" | "echo", fn: (e?: any) => void) => {
      if (name === "echo") return mic.on("echo", (e) => fn({ erleDb: e.erleDb, delayMs: e.delayMs, converged: e.converged }));
      if (name === "frame") {
        // The render thread's clock kept going while the message waited for the main thread:
        // how far it got since the frame's end is how long ago the frame was captured.
        return mic.on("frame", (e) => {
          const sinceCaptureMs = Math.max(0, (mic.context.currentTime - e.contextTime) * 1000);
          fn({ pcm: e.samples, capturedAt: e.contextTime, capturedAtMs: performance.now() - sinceCaptureMs });
        });
      }
      if (name === "level") return mic.on("level", (e) => fn({ rms: e.rms }));
      if (name === "gap") return mic.on("gap", (e) => fn({ ms: (e.frames / mic.context.sampleRate) * 1000 }));
      return mic.on("ended", () => fn());
    }) as CapturePort["on"],
  };
}
