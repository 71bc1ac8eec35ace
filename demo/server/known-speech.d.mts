import type { Decoder, DecoderPool } from "./pocketsphinx.mjs";

/** A fixture the deterministic recogniser knows: its loudness envelope and the words the real recogniser heard in it (seconds from the file's start). */
export interface KnownClip {
  name: string;
  envelope: Float32Array;
  words: { word: string; start: number; end: number }[];
}
export const HOP: number;
export function loadKnownSpeech(dir: string): KnownClip[];
export function envelopeOf(samples: Int16Array): Float32Array;
export function bestLag(heard: Float32Array, count: number, clip: Float32Array, minLag?: number, maxLag?: number): { lag: number; correlation: number };
export function knownSpeechPool(pool: DecoderPool, clips: KnownClip[]): Pick<DecoderPool, "acquire" | "release" | "prewarm" | "close">;
export class KnownSpeechDecoder {
  constructor(inner: Decoder, clips: KnownClip[]);
}
