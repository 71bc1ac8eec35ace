/**
 * The user, scripted: a fake VAD and a fake microphone (the session's VadPort
 * and CapturePort) and the FakeUser that drives them and the fake STT, so a
 * test says `await user.says("can you help me")` where a person would speak.
 *
 * One utterance, on the FakeClock, as the real parts would report it:
 * the VAD's speech start (pausing playback itself when the session armed it,
 * as the VAD worker does), its real start once `minSpeechMs` of speech has
 * passed, each word from the STT as it ends (`msPerWord` apart), then the
 * VAD's speech end; or a misfire for a sound shorter than `minSpeechMs`,
 * words or not (the real VAD does not count it either; a turn its words began
 * ends there, as at a speech end). The VAD's end comes at once (the real one
 * waits `vad.redemptionMs`).
 * Thread: main.
 */
import { Emitter, type CapturePort, type ChannelLevel, type VadPort } from "../advanced.js";
import { ConfigError, MicrophoneError, StateError } from "../index.js";
import type { FakeDevices } from "./fake-devices.js";
import type { FakeSttControl } from "./fake-providers.js";
import { FakeClock } from "./fake-clock.js";
import type { FakePlayer } from "./fake-player.js";

type VadEvents = {
  speechStart: { pausedPlayback: boolean; contextTime: number };
  speechRealStart: { contextTime: number };
  speechEnd: { contextTime: number; lastSpeechContextTime?: number };
  misfire: { resumedPlayback: boolean; contextTime: number };
  pauseLapse: { lapsed: boolean; contextTime: number };
  speechQuiet: { contextTime: number; lastSpeechContextTime?: number };
  speechResumed: { contextTime: number };
  turnPrediction: { probability?: number; error?: string; inferenceMs: number; contextTime: number };
  onsetPause: { paused: boolean; contextTime: number };
  probability: { probability: number };
  judged: { contextTime: number };
  error: { error: Error };
  ready: { loadMs: number; contextTime: number };
  loadError: { error: Error };
};

/** A VadPort whose events the test (or a FakeUser) emits. */
export class FakeVad implements VadPort {
  protected readonly emitter = new Emitter<VadEvents>();
  #autoPause: number | null = null;
  /** Whether the session turned the probability meter on. */
  meter = false;
  /**
   * False while the VAD's model "loads" (fakeAudio's `modelLoading`): the
   * session listens degraded, as on its level fallback, until `modelLoaded()`.
   * The FakeUser's events are the same either way: in the browser one speech
   * detector takes both, and only the session's rules differ.
   */
  modelReady = true;

  /** The model is ready (`contextTime`: where it takes over, on the audio clock): `ready` to the session, which leaves its degraded mode. */
  modelLoaded(loadMs = 0, contextTime = 0): void {
    this.modelReady = true;
    this.emitter.emit("ready", { loadMs, contextTime });
  }

  /** The model failed to load: `loadError` to the session, which goes on degraded. */
  modelFailed(error: Error): void {
    this.emitter.emit("loadError", { error });
  }

  /** The pause token the session armed for a direct pause on speech start, or null. */
  get autoPause(): number | null {
    return this.#autoPause;
  }
  setAutoPause(token: number | null): void {
    this.#autoPause = token;
  }
  setMeter(on: boolean): void {
    this.meter = on;
  }
  /** Every `endWhenQuiet(quietMs)` the session asked for, in order (the test emits the speechEnd it leads to). */
  readonly endRequests: number[] = [];
  endWhenQuiet(quietMs: number): void {
    this.endRequests.push(quietMs);
  }
  /** The session's `noticeQuiet` request (turn.preemptive), null when none or off; the test emits the speechQuiet it leads to. */
  quietNoticeMs: number | null = null;
  noticeQuiet(quietMs: number | null): void {
    this.quietNoticeMs = quietMs;
  }
  on<K extends keyof VadEvents>(name: K, fn: (e: VadEvents[K]) => void): () => void {
    return this.emitter.on(name, fn);
  }
  /** Emits a VAD event to the session as the worker would. */
  emit<K extends keyof VadEvents>(name: K, e: VadEvents[K]): void {
    this.emitter.emit(name, e);
  }
}

type CaptureEvents = {
  frame: { pcm: Float32Array | Int16Array; capturedAt: number };
  level: { rms: number };
  ended: undefined;
  gap: { ms: number };
  echo: { erleDb: number; delayMs: number; converged: boolean };
};

/** A CapturePort whose events the test (or a FakeUser) emits. */
export class FakeMicrophone implements CapturePort {
  protected readonly emitter = new Emitter<CaptureEvents>();
  /** Whether the session turned the level meter on. */
  meter = false;
  /** Whether the session muted the microphone: a FakeUser's speech then reaches neither the VAD nor the STT. */
  muted = false;
  setMeter(on: boolean): void {
    this.meter = on;
  }
  setMuted(muted: boolean): void {
    this.muted = muted;
  }
  /** The input device captured now ("default" at first). */
  deviceId: string | undefined = "default";
  /** The devices this microphone can open (FakeDevices); without them, any deviceId opens. */
  devices: FakeDevices | undefined;
  /** The input lost across each swap, in ms, that setDevice reports. Default 0. */
  swapGapMs = 0;
  /** Every device setDevice moved to, in order (undefined: the default). */
  readonly swaps: Array<string | undefined> = [];
  /** The track ended (FakeUser.micEnded()) and no swap has replaced it. */
  ended = false;
  /** The input level in dBFS that `level()` reads: a FakeUser sets -20 while speaking, -100 otherwise. */
  levelDb = -100;
  /** As the real capture: a device that is not plugged in fails and the old one keeps running. */
  async setDevice(deviceId: string | undefined): Promise<{ gapMs: number }> {
    await Promise.resolve();
    // An ended track with no FakeDevices: there is no other microphone to move to.
    if (this.ended && !this.devices) throw new MicrophoneError("No microphone was found: plug one in or choose another input device", { reason: "not-found" });
    if (this.devices && !this.devices.hasInput(deviceId)) {
      throw new MicrophoneError(`No microphone matches the requested constraints (input device "${deviceId}"): choose another device`, { reason: "not-found" });
    }
    this.deviceId = deviceId ?? "default";
    this.ended = false;
    this.swaps.push(deviceId);
    return { gapMs: this.swapGapMs };
  }
  level(bins: boolean): ChannelLevel {
    return bins ? { rmsDb: this.levelDb, bins: new Uint8Array(128).fill(this.levelDb > -100 ? 128 : 0) } : { rmsDb: this.levelDb };
  }
  on<K extends keyof CaptureEvents>(name: K, fn: (e: CaptureEvents[K]) => void): () => void {
    return this.emitter.on(name, fn as (e: CaptureEvents[K]) => void);
  }
  /** Emits a capture event to the session (`frame`: PCM at the STT's format, for the uplink). */
  emit<K extends keyof CaptureEvents>(name: K, e: CaptureEvents[K]): void {
    this.emitter.emit(name, e);
  }
}

export interface FakeUserOptions {
  /** The fake STT that "recognises" what the user says. */
  stt: FakeSttControl;
  /** The player the VAD pauses on speech start while the session has armed it. */
  player?: FakePlayer;
  /** The clock the speech lasts on. Default: the player's, else one of its own. */
  clock?: FakeClock;
  /** How long each word lasts, in ms. Default 250. */
  msPerWord?: number;
  /** Speech before the VAD's real start, in ms. Set by fakeAudio from the session (`bargeIn.minSpeechMs`). Default 200. */
  minSpeechMs?: number;
  /**
   * Silence the VAD waits for before its speech end, in ms (the real one's
   * `vad.redemptionMs`, 600 by default). Default 0: the end comes at once.
   * Either way the end names the last speech frame, so `voiceToVoiceMs`
   * counts this wait.
   */
  redemptionMs?: number;
}

/**
 * The current utterance: ms spoken, whether the VAD called it real, and the pause the VAD made.
 * `unheard`: it began while the microphone was muted, so the VAD never heard it begin.
 */
interface Utterance {
  ms: number;
  real: boolean;
  pausedToken: number | null;
  unheard: boolean;
}

export class FakeUser {
  readonly vad = new FakeVad();
  readonly mic = new FakeMicrophone();
  readonly clock: FakeClock;
  msPerWord: number;
  minSpeechMs: number;
  redemptionMs: number;
  readonly #stt: FakeSttControl;
  readonly #player: FakePlayer | undefined;
  #speech: Utterance | undefined;

  constructor(options: FakeUserOptions) {
    if (!options?.stt) throw new ConfigError("FakeUser: the `stt` option is required (a fakeStt() that hears the user's words)");
    this.#stt = options.stt;
    this.#player = options.player;
    this.clock = options.clock ?? options.player?.clock ?? new FakeClock();
    this.msPerWord = options.msPerWord ?? 250;
    this.minSpeechMs = options.minSpeechMs ?? 200;
    this.redemptionMs = options.redemptionMs ?? 0;
  }

  /** True between `startSpeaking()` and `stopSpeaking()`. */
  get speaking(): boolean {
    return this.#speech !== undefined;
  }

  /** One whole utterance: speech start, its words, speech end. Resolves once the session has had them all. */
  async says(text: string): Promise<void> {
    const words = text.split(/\s+/).filter(Boolean);
    if (words.length === 0) throw new ConfigError('FakeUser.says(): give the words the user says, such as "can you help me"; for a sound with no words, use noise(ms)');
    this.startSpeaking();
    for (const word of words) await this.word(word);
    await this.stopSpeaking();
  }

  /** A sound of `ms` with no words (a cough): under `minSpeechMs` the VAD calls it a misfire. */
  async noise(ms = 100): Promise<void> {
    this.startSpeaking();
    await this.#speak(ms);
    await this.stopSpeaking();
  }

  /** The VAD's speech start; it pauses playback itself if the session armed it (the bot is speaking). */
  startSpeaking(): void {
    if (this.#speech) throw new StateError("FakeUser.startSpeaking(): the user is already speaking; call stopSpeaking() first");
    this.mic.levelDb = -20; // the input level is read before the mute, as the real analyser's
    if (this.mic.muted) {
      this.#speech = { ms: 0, real: false, pausedToken: null, unheard: true };
      return;
    }
    const token = this.vad.autoPause;
    const paused = token !== null && this.#player !== undefined;
    if (paused) this.#player!.pause(token);
    this.#speech = { ms: 0, real: false, pausedToken: paused ? token : null, unheard: false };
    this.vad.emit("speechStart", { pausedPlayback: paused, contextTime: this.#time() });
  }

  /** One word, `msPerWord` long: the STT returns it as it ends. */
  async word(text: string): Promise<void> {
    const speech = this.#requireSpeech("word");
    const startS = this.clock.now / 1000;
    await this.#speak(this.msPerWord);
    if (this.#speech !== speech) return; // the session stopped meanwhile
    if (this.mic.muted) return; // a muted microphone sent silence: the STT heard nothing
    this.#stt.word(text, startS);
    this.#stt.wordEnd(this.clock.now / 1000);
    await macrotask();
  }

  /** The VAD's speech end, or its misfire (resuming its own pause) when the speech was too short to be real. */
  async stopSpeaking(): Promise<void> {
    const speech = this.#requireSpeech("stopSpeaking");
    this.#speech = undefined;
    this.mic.levelDb = -100;
    if (speech.unheard) return;
    if (speech.real) {
      const lastSpeechContextTime = this.#time();
      if (this.redemptionMs > 0) await this.clock.sleep(this.redemptionMs);
      this.vad.emit("speechEnd", { contextTime: this.#time(), lastSpeechContextTime });
    } else {
      const token = speech.pausedToken;
      if (token !== null) this.#player?.resume(token);
      this.vad.emit("misfire", { resumedPlayback: token !== null, contextTime: this.#time() });
    }
    await macrotask();
  }

  /**
   * The microphone's track ends (unplugged, permission revoked). With
   * FakeDevices the session moves to the default input; without them there
   * is no other microphone, and the session stops with a MicrophoneError.
   */
  micEnded(): void {
    this.mic.ended = true;
    this.mic.emit("ended", undefined);
  }

  /** Lets `ms` of speech pass; the VAD's real start comes once `minSpeechMs` of it has. */
  async #speak(ms: number): Promise<void> {
    const speech = this.#requireSpeech("speak");
    const toReal = speech.real ? Infinity : this.minSpeechMs - speech.ms;
    if (toReal <= ms) {
      await this.clock.sleep(Math.max(0, toReal));
      speech.real = true;
      if (this.#speech === speech && !speech.unheard) this.vad.emit("speechRealStart", { contextTime: this.#time() });
      await this.clock.sleep(ms - Math.max(0, toReal));
    } else {
      await this.clock.sleep(ms);
    }
    speech.ms += ms;
  }

  #requireSpeech(what: string): Utterance {
    if (!this.#speech) throw new StateError(`FakeUser.${what}(): the user is not speaking; call startSpeaking() first`);
    return this.#speech;
  }

  #time(): number {
    return this.clock.now / 1000;
  }
}

function macrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
