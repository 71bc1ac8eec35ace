/**
 * Loads and runs the app's turn detector in the VAD worker (the contract is
 * src/vad/turn-detector.ts). Worker thread only.
 */
import * as ort from "onnxruntime-web/wasm";
import { TURN_DETECTOR_MAX_SECONDS, type TurnDetector, type TurnDetectorModule } from "../turn-detector.js";
import { AssetFetchFailure } from "./fetch-asset.js";

const SAMPLE_RATE = 16000;

export interface TurnVerdict {
  probability?: number;
  error?: string;
  inferenceMs: number;
  audioSamples: number;
}

/**
 * What the model is given of an ended utterance: its end, at most
 * TURN_DETECTOR_MAX_SECONDS, as a copy of its own (taken before the utterance's
 * audio is transferred to the main thread; the model may keep it).
 */
export function turnAudio(utterance: Float32Array): Float32Array {
  return utterance.slice(Math.max(0, utterance.length - TURN_DETECTOR_MAX_SECONDS * SAMPLE_RATE));
}

export interface TurnDetectorHost {
  /** `audio`: from turnAudio(). */
  predict(audio: Float32Array): Promise<TurnVerdict>;
  release(): Promise<void>;
}

/** Imports the module and makes its detector; a failure is an AssetFetchFailure naming the module's URL and what to do. */
export async function loadTurnDetector(url: string, options: Record<string, unknown>): Promise<TurnDetectorHost> {
  let module: Partial<TurnDetectorModule>;
  try {
    module = (await import(/* @vite-ignore */ url)) as Partial<TurnDetectorModule>;
  } catch (err) {
    throw new AssetFetchFailure(url, `the turn detector module ${url} could not be imported (${(err as Error)?.message ?? err}): check \`turnDetector.module\`, that it is an ES module, and that the page's CSP allows it`);
  }
  if (typeof module.createTurnDetector !== "function") {
    throw new AssetFetchFailure(url, `the turn detector module ${url} does not export a createTurnDetector(init) function`);
  }
  let detector: TurnDetector;
  try {
    detector = await module.createTurnDetector({ sampleRate: SAMPLE_RATE, options, moduleUrl: url, ort });
  } catch (err) {
    throw new AssetFetchFailure(url, `the turn detector module ${url} failed in createTurnDetector: ${(err as Error)?.message ?? err}`);
  }
  if (typeof detector?.predict !== "function") {
    throw new AssetFetchFailure(url, `the turn detector module ${url}: createTurnDetector must return an object with predict(audio)`);
  }
  return {
    async predict(audio) {
      const started = performance.now();
      try {
        const p = await detector.predict(audio);
        const inferenceMs = performance.now() - started;
        if (typeof p !== "number" || !(p >= 0 && p <= 1)) return { error: `predict() answered ${String(p)}, not a probability from 0 to 1`, inferenceMs, audioSamples: audio.length };
        return { probability: p, inferenceMs, audioSamples: audio.length };
      } catch (err) {
        return { error: `predict() threw: ${(err as Error)?.message ?? err}`, inferenceMs: performance.now() - started, audioSamples: audio.length };
      }
    },
    async release() {
      try {
        await detector.release?.();
      } catch {
        // The worker is going away: a model that fails to free itself frees with it.
      }
    },
  };
}
