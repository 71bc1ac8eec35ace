import type { Decoder, DecoderPool } from "./pocketsphinx.mjs";

/** A fixture the deterministic recogniser knows: its loudness envelope and the words the real recogniser heard in it (seconds from the file's start). */
/** 10 ms RMS frames below and above about 1 kHz. */
export interface Envelope {
  low: Float32Array;
  high: Float32Array;
}
export interface KnownClip {
  name: string;
  envelope: Envelope;
  words: { word: string; start: number; end: number }[];
}
export const HOP: number;
export function loadKnownSpeech(dir: string): KnownClip[];
export function envelopeOf(samples: Int16Array): Envelope;
export function bestLag(heard: Envelope, count: number, clip: Envelope, minLag?: number, maxLag?: number): { lag: number; correlation: number };
export function knownSpeechPool(pool: DecoderPool, clips: KnownClip[]): Pick<DecoderPool, "acquire" | "release" | "prewarm" | "close">;
export class KnownSpeechDecoder {
  constructor(inner: Decoder, clips: KnownClip[]);
}
