// The realtime bench's output: a context at 24 kHz, the Realtime API's own rate, and the level
// under which a sample is silence. Apart from rig.js so the judge loads in Node too.
export const RATE = 24000;
/** Below this a sample is silence (-80 dBFS), as in the other benches. */
export const SILENT = 1e-4;
