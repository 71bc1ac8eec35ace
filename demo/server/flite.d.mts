export interface WordTiming {
  text: string;
  start: number;
  stop: number;
}
export interface Synthesis {
  samples: Int16Array;
  sampleRate: number;
  words: WordTiming[];
}
export const FLITE_SAMPLE_RATE: number;
export const FLITE_VOICES: string[];
export function synthesize(text: string, voice?: string): Synthesis;
export function alignWords(text: string, phones: { name: string; start: number; end: number }[]): WordTiming[];
