export function readWav(bytes: Uint8Array): { sampleRate: number; channels: number; samples: Int16Array };
export function writeWav(samples: Int16Array, sampleRate: number): Uint8Array;
