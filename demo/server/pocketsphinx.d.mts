export interface Segment {
  word: string;
  startFrame: number;
  endFrame: number;
}
export class Decoder {
  startUtterance(): void;
  process(pcm16k: Int16Array): Promise<void>;
  segments(): Segment[];
  endUtterance(): void;
  reset(): void;
  free(): void;
}
export class DecoderPool {
  acquire(knobs?: { knownSpeech?: number }): Promise<Decoder | null>;
  release(decoder: Decoder): void;
  prewarm(): Promise<void>;
  close(): void;
}
export const MODEL_DIR: string;
export const SPEECH_PACKAGES: string[];
export const FRAME_RATE: number;
export function recogniserAvailable(): Promise<boolean>;
export function recogniserUnavailableReason(): string | null;
export function forgetRecogniserCheck(): void;
/** sphinxbase's global log target (a FILE *), null while logging is off. */
export function sphinxLogTarget(): Promise<unknown>;
