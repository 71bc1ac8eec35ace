/**
 * fakeAudio(): the scripted audio parts of one session, as the session's
 * `components` option. `start()` then builds no AudioContext, microphone,
 * worklet or VAD worker: the session plays into a FakePlayer and hears a
 * FakeUser, on one FakeClock, so it runs in Node.
 *
 *     const stt = fakeStt();
 *     const audio = fakeAudio({ stt });
 *     const session = new VoiceSession({ stt: stt.provider, llm, tts, components: audio.components });
 *     await session.start();
 *     await audio.user.says("can you help me");
 */
import type { ComponentsFactory, SessionComponents } from "../advanced.js";
import { StateError } from "../index.js";
import { FakeClock } from "./fake-clock.js";
import type { FakeSttControl } from "./fake-providers.js";
import { FakePlayer } from "./fake-player.js";
import { FakeUser } from "./fake-user.js";
import type { FakeDevices } from "./fake-devices.js";

export interface FakeAudioOptions {
  /** The fake STT that hears the user's words (`fakeStt()`); the session's `stt` is its provider. */
  stt: FakeSttControl;
  /** The clock the audio plays and the user speaks on. Default: a new virtual FakeClock. */
  clock?: FakeClock;
  /** Seconds between rendering and hearing the bot's audio. Default 0: what was played was heard. */
  outputLatency?: number;
  /** How long each of the user's words lasts, in ms. Default 250. */
  msPerWord?: number;
  /** The page's devices (`new FakeDevices()`), for `devicechange` and device swaps. Default: none (the session sees no device list). */
  devices?: FakeDevices;
  /**
   * Each start() finds the VAD's model still loading: the session listens
   * `degraded` until the test calls `user.vad.modelLoaded()` (or
   * `modelFailed(error)`). Default false: the model is ready at once.
   */
  modelLoading?: boolean;
}

export interface FakeAudio {
  /** For the session's `components` option. */
  components: ComponentsFactory;
  /** Says things to the session (its VAD and microphone): `await user.says("…")`. */
  user: FakeUser;
  /** Where the bot's audio goes: `await player.play(500)` lets the user hear 500 ms of it. */
  player: FakePlayer;
  clock: FakeClock;
  /** Components built by start() so far, and released by stop(). */
  readonly starts: number;
  readonly disposals: number;
}

/** The parts are made once and reused by each start(): one fakeAudio() serves one session. */
export function fakeAudio(options: FakeAudioOptions): FakeAudio {
  const clock = options.clock ?? new FakeClock();
  const player = new FakePlayer({ clock, outputLatency: options.outputLatency });
  const user = new FakeUser({ stt: options.stt, player, clock, msPerWord: options.msPerWord });
  user.mic.devices = options.devices;
  let starts = 0;
  let disposals = 0;
  let live = false;
  const components: ComponentsFactory = async ({ minSpeechMs, signal, inputDeviceId }) => {
    signal.throwIfAborted();
    if (live) throw new StateError("fakeAudio: its components are already in use by a started session; make one fakeAudio() per session");
    live = true;
    starts++;
    // The VAD's real start is what confirms a barge-in: it takes the session's setting.
    user.minSpeechMs = minSpeechMs;
    // The device the app picked before start() is the one opened.
    if (inputDeviceId !== undefined) user.mic.deviceId = inputDeviceId;
    if (options.modelLoading) user.vad.modelReady = false;
    const parts: SessionComponents = {
      player,
      vad: user.vad,
      capture: user.mic,
      devices: options.devices,
      dispose: async () => {
        live = false;
        disposals++;
        user.vad.setAutoPause(null);
      },
    };
    return parts;
  };
  return {
    components,
    user,
    player,
    clock,
    get starts() {
      return starts;
    },
    get disposals() {
      return disposals;
    },
  };
}
