export class RationalResampler {
  constructor(up: number, down: number, options?: { tapsPerPhase?: number; cutoff?: number; beta?: number });
  readonly up: number;
  readonly down: number;
  /** Group delay of the filter, in output samples. */
  readonly delayOutputSamples: number;
  process(input: Float32Array): Float32Array;
}
export function downsampler24to16(): RationalResampler;
export function upsampler16to24(): RationalResampler;
export function floatToInt16(f32: Float32Array): Int16Array;
export function int16ToFloat(i16: Int16Array): Float32Array;
