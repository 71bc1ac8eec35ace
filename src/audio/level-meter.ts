/**
 * LevelMeter: an AnalyserNode read on demand, for visualizers. Nothing is
 * posted per frame: the render thread only copies each quantum into the
 * analyser's buffer (and runs an FFT only when bins are read), and the main
 * thread pays for a read when the app asks, typically once per
 * requestAnimationFrame. Made lazily by the Microphone and the Player on the
 * first read, so a session that never asks has no analyser at all.
 * See https://developer.mozilla.org/en-US/docs/Web/API/AnalyserNode.
 *
 * Thread: main. `read` allocates nothing: the bins array is reused and stays
 * valid until the next read.
 */

/** The floor of a level in dBFS: what silence (and no audio at all) reads. */
export const SILENT_DB = -100;

/** The analyser's window: 256 samples (5.3 ms at 48 kHz), 128 frequency bins. */
const FFT_SIZE = 256;

/** One side's level: RMS in dBFS over the analyser's window (at least SILENT_DB), and 0..255 frequency bins when asked for. */
export interface ChannelLevel {
  rmsDb: number;
  /** The analyser's byte frequency data (`getByteFrequencyData`), reused by the next read. */
  bins?: Uint8Array;
}

export class LevelMeter {
  readonly node: AnalyserNode;
  readonly #time: Float32Array<ArrayBuffer>;
  readonly #bins: Uint8Array<ArrayBuffer>;

  constructor(context: BaseAudioContext) {
    this.node = context.createAnalyser();
    this.node.fftSize = FFT_SIZE;
    // The bins move smoothly at a display's frame rate, as a bar visualizer wants.
    this.node.smoothingTimeConstant = 0.6;
    this.#time = new Float32Array(FFT_SIZE);
    this.#bins = new Uint8Array(this.node.frequencyBinCount);
  }

  /** `sharedDb`: the level from a worklet's cell, when there is one: then only the bins are read here. */
  read(bins: boolean, sharedDb?: number): ChannelLevel {
    if (sharedDb === undefined) this.node.getFloatTimeDomainData(this.#time);
    const level: ChannelLevel = { rmsDb: sharedDb ?? rmsDb(this.#time) };
    if (bins) {
      this.node.getByteFrequencyData(this.#bins);
      level.bins = this.#bins;
    }
    return level;
  }

  disconnect(): void {
    this.node.disconnect();
  }
}

/** RMS of `samples` in dBFS, floored at SILENT_DB. */
export function rmsDb(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  const rms = Math.sqrt(sum / Math.max(1, samples.length));
  return rms > 0 ? Math.max(SILENT_DB, 20 * Math.log10(rms)) : SILENT_DB;
}

/** A cell for a worklet's LevelWriter (level-cell.ts), or undefined where SharedArrayBuffer is not available. */
export function makeLevelCell(): SharedArrayBuffer | undefined {
  return globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function" ? new SharedArrayBuffer(Float32Array.BYTES_PER_ELEMENT) : undefined;
}

/** The main thread's side of a level cell: one float read, no message, no analyser. */
export class LevelReader {
  readonly #cell: Float32Array;

  constructor(cell: SharedArrayBuffer) {
    this.#cell = new Float32Array(cell);
  }

  /** The level now, in dBFS, floored at SILENT_DB. */
  get db(): number {
    const meanSquare = this.#cell[0]!;
    return meanSquare > 0 ? Math.max(SILENT_DB, 10 * Math.log10(meanSquare)) : SILENT_DB;
  }
}

/**
 * One side's level for getLevels(): the worklet's shared float when there is
 * one and no bins are asked for, else the analyser (`meter()` makes it on
 * first need), which then reads only the bins when the float gives the level.
 */
export function readChannel(shared: LevelReader | undefined, bins: boolean, meter: () => LevelMeter): ChannelLevel {
  const sharedDb = shared?.db;
  if (sharedDb !== undefined && !bins) return { rmsDb: sharedDb };
  return meter().read(bins, sharedDb);
}
