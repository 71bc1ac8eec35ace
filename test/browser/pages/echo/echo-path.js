// An open-speaker echo path inside the page's AudioContext, for the echo
// tests and the echo bench: the bot's output → a bulk delay → a mild
// loudspeaker nonlinearity → a room impulse response → a gain → the page's
// "microphone" (a MediaStream, so no browser echo canceller is in the way).
// Everything is seeded and returned as data, so a run can be listed in JSON.
import { prng } from "/test/lib/prng.mjs";

/**
 * A room: a direct path, then exponentially decaying seeded noise reaching
 * −60 dB at `rt60` seconds, scaled to unit energy so that `gainDb` is the
 * echo's level against the output.
 */
export function roomImpulse(context, { rt60, seed }) {
  const random = prng(seed);
  const length = Math.ceil(rt60 * context.sampleRate);
  const buffer = context.createBuffer(1, length, context.sampleRate);
  const h = buffer.getChannelData(0);
  const decay = Math.log(1000) / (rt60 * context.sampleRate); // amplitude −60 dB at rt60
  h[0] = 1;
  for (let i = 1; i < length; i++) {
    // Sum of uniforms: roughly Gaussian noise.
    const noise = random() + random() + random() - 1.5;
    h[i] = 0.5 * noise * Math.exp(-decay * i);
  }
  let energy = 0;
  for (let i = 0; i < length; i++) energy += h[i] * h[i];
  const scale = 1 / Math.sqrt(energy);
  for (let i = 0; i < length; i++) h[i] *= scale;
  return buffer;
}

/** tanh soft clipping, as a small loudspeaker driven near its limit. */
function softClip(drive = 1.5, points = 1024) {
  const curve = new Float32Array(points);
  for (let i = 0; i < points; i++) {
    const x = (i / (points - 1)) * 2 - 1;
    curve[i] = Math.tanh(drive * x) / Math.tanh(drive);
  }
  return curve;
}

/**
 * Connects `from` (the bot's output node) to `to` (the mic's MediaStream
 * destination) through the echo path (`nonlinear: false` leaves out the
 * loudspeaker's soft clipping). Returns the path's description.
 */
export function connectEchoPath(context, from, to, { delayMs = 60, rt60 = 0.3, gainDb = -6, seed = 1, nonlinear = true } = {}) {
  const delay = new DelayNode(context, { maxDelayTime: 1, delayTime: delayMs / 1000 });
  const room = new ConvolverNode(context, { disableNormalization: true, buffer: roomImpulse(context, { rt60, seed }) });
  const speaker = new WaveShaperNode(context, { curve: softClip() });
  const gain = new GainNode(context, { gain: 10 ** (gainDb / 20) });
  (nonlinear ? from.connect(delay).connect(speaker) : from.connect(delay)).connect(room).connect(gain).connect(to);
  return { delayMs, rt60, gainDb, seed, nonlinearity: nonlinear ? "tanh(1.5x)/tanh(1.5)" : "none" };
}
