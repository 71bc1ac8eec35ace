import type { Decoder } from "./pocketsphinx.mjs";

export interface TimedWord {
  word: string;
  start: number;
  end: number;
  startFrame: number;
  endFrame: number;
}
export interface FrameResult {
  silent: boolean;
  silentSeconds: number;
  started: boolean;
  ended: boolean;
  inUtterance: boolean;
  words: TimedWord[];
  stableCount: number;
  processed: number;
}
export const DECODER_RATE: number;
export const FRAME_16K: number;
export const FRAME_SECONDS: number;
export const STABLE_FRAMES: number;
export class StreamingRecogniser {
  constructor(decoder: Decoder | null, options?: { silenceRms?: number; endpointMs?: number });
  processFrame(frame: Float32Array): Promise<FrameResult>;
  finish(): Promise<TimedWord[]>;
}
